"""Reads on the standby (airline/standby.py, docs/operators/cluster.md "Reads on the standby"):
which reads go to the `replica` alias and which to the primary, and read-your-writes.

The `replica` alias is a test mirror of the primary (tests/settings.py): the same test
database over a connection of its own. What a test writes stays in the test's open
transaction on the primary's connection, so the mirror does not see it, as a standby
would not yet have replayed a commit: a read that went to the standby misses the test's
rows, a read from the primary finds them. Each routing decision is also checked by the
statements each connection ran."""

import re
import socket

import pytest
from django.contrib.auth import get_user_model
from django.core.cache import cache
from django.db import DEFAULT_DB_ALIAS, connections, transaction
from django.test.utils import CaptureQueriesContext

from airline.fares.models import Bundle
from airline.standby import REPLICA, seller_marker, stale_ok_db
from orders.models import Order, Service
from orders.reading.selectors import OrderScope, order_get
from tests.conftest import bearer, token_for
from tests.ndc.conftest import post, xml_of
from tests.ndc.test_order_list import ids as ndc_ids
from tests.ndc.test_order_list import order_list_rq
from tests.ndc.test_orders import retrieve_request as retrieve_rq
from tests.offers.conftest import search_body
from tests.orders.conftest import book, booking_body, price_offer
from tests.orders.factories import order_with_trip

pytestmark = pytest.mark.django_db(databases=[DEFAULT_DB_ALIAS, REPLICA])

ORDERS = "/json/v1/orders"
CHANGELIST = "/admin/orders/order/"


@pytest.fixture
def standby(settings):
    settings.READ_FROM_STANDBY = True
    return settings


@pytest.fixture(autouse=True)
def _close_the_standby():
    """The mirror's connection is not the test transaction's: closed after each test,
    or the test database could not be dropped at the end."""
    yield
    connections[REPLICA].close()


def ran(alias: str, table: str):
    """A context whose `hit` says whether connection `alias` read `table`."""
    return _Ran(connections[alias], table)


class _Ran(CaptureQueriesContext):
    def __init__(self, connection, table):
        super().__init__(connection)
        self.table = table

    @property
    def hit(self) -> bool:
        return any(re.search(rf'\b"?{self.table}"?\b', q["sql"]) for q in self.captured_queries)


def listed(response) -> list[str]:
    assert response.status_code == 200, response.content
    return [o["orderId"] for o in response.json()["data"]["orders"]]


def test_off_by_default_every_read_is_on_the_primary(api, auth, default_seller, settings):
    assert settings.READ_FROM_STANDBY is False
    order = order_with_trip(seller=default_seller)
    with ran(REPLICA, "orders_order") as replica:
        assert listed(api.get(ORDERS, **auth)) == [order.order_id]
        assert api.get(f"{ORDERS}/{order.order_id}", **auth).status_code == 200
    assert not replica.captured_queries


def test_order_list_and_retrieve_read_the_standby(api, auth, default_seller, standby):
    # Written outside any request: no client of this seller wrote it (an airline
    # change, another channel), and the standby has not replayed it yet.
    order = order_with_trip(seller=default_seller)

    with ran(REPLICA, "orders_order") as replica, ran(DEFAULT_DB_ALIAS, "orders_order") as primary:
        assert listed(api.get(ORDERS, **auth)) == []
        retrieved = api.get(f"{ORDERS}/{order.order_id}", **auth)
    assert retrieved.status_code == 404
    assert retrieved.json()["error"]["code"] == "ERR-4000"
    assert replica.hit
    assert not primary.hit


def test_a_client_reads_its_own_booking_from_the_primary(api, auth, travel_day, standby):
    priced = price_offer(api, auth, travel_day)
    # Searching and pricing wrote nothing to the database: still on the standby.
    with ran(REPLICA, "orders_order") as replica:
        assert listed(api.get(ORDERS, **auth)) == []
    assert replica.hit

    created = book(api, auth, booking_body(priced))
    assert created.status_code == 201, created.content
    order_id = created.json()["data"]["order"]["orderId"]

    with ran(REPLICA, "orders_order") as replica:
        assert listed(api.get(ORDERS, **auth)) == [order_id]
        retrieved = api.get(f"{ORDERS}/{order_id}", **auth)
        seats = api.post(f"{ORDERS}/{order_id}/seats", {}, format="json", **auth)
    assert retrieved.status_code == 200, retrieved.content
    assert retrieved.json()["data"]["order"]["orderId"] == order_id
    assert seats.status_code == 200, seats.content
    assert not replica.captured_queries

    # Once the window has passed (its marker gone), the standby again: it has not
    # replayed the booking here, so the seller's reads no longer find it.
    cache.delete(f"wrote:{seller_marker(Order.objects.get(order_id=order_id).seller_id)}")
    assert listed(api.get(ORDERS, **auth)) == []


def test_another_sellers_writes_leave_a_seller_on_the_standby(
    api, auth, partner_key, other_seller, travel_day, standby
):
    priced = price_offer(api, auth, travel_day)
    assert book(api, auth, booking_body(priced)).status_code == 201
    other = bearer(token_for(api, partner_key.raw, seller_id=other_seller.pk))

    with ran(REPLICA, "orders_order") as replica:
        assert listed(api.get(ORDERS, **other)) == []
    assert replica.hit


def test_ndc_order_list_and_retrieve_read_the_standby(api, auth, default_seller, settings):
    order = order_with_trip(seller=default_seller, surname="Lovelace")
    search = order_list_rq(
        "<cns:PaxFilterCriteria><cns:Individual><cns:Surname>Lovelace"
        "</cns:Surname></cns:Individual></cns:PaxFilterCriteria>"
    )
    assert ndc_ids(xml_of(post(api, "OrderList", search, auth), root="IATA_OrderListRS")) == [
        order.order_id
    ]

    settings.READ_FROM_STANDBY = True
    with ran(REPLICA, "orders_order") as replica, ran(DEFAULT_DB_ALIAS, "orders_order") as primary:
        listed_there = xml_of(post(api, "OrderList", search, auth), root="IATA_OrderListRS")
        retrieved = post(api, "OrderRetrieve", retrieve_rq(order.order_id), auth)
    # Not on the standby yet: the list is empty and the order not found.
    assert ndc_ids(listed_there) == []
    assert retrieved.status_code == 404, retrieved.content
    assert replica.hit
    assert not primary.hit


def test_offer_seat_maps_read_seats_taken_on_the_standby(api, auth, travel_day, standby):
    found = api.post(
        "/json/v1/offers", search_body(("PVD", "CHS", travel_day)), format="json", **auth
    )
    offer = found.json()["data"]["offers"][0]
    with ran(REPLICA, Service._meta.db_table) as replica:
        response = api.post(
            f"/json/v1/offers/{offer['offerId']}/seats",
            {"offerItemIds": [offer["offerItems"][0]["offerItemId"]]},
            format="json",
            **auth,
        )
    assert response.status_code == 200, response.content
    assert replica.hit


def test_reads_inside_a_write_transaction_are_on_the_primary(default_seller, standby):
    order = order_with_trip(seller=default_seller)
    scope = OrderScope(seller_id=default_seller.pk, agency_code=order.agency_code)
    assert stale_ok_db(seller_marker(default_seller.pk)) == REPLICA
    with transaction.atomic():
        assert stale_ok_db(seller_marker(default_seller.pk)) == DEFAULT_DB_ALIAS
        assert order_get(scope=scope, ref=order.order_id, parts=(), stale_ok=True) == order
    # Outside it, the same read goes to the standby, which has not seen the order.
    with pytest.raises(Exception, match="not found"):
        order_get(scope=scope, ref=order.order_id, parts=(), stale_ok=True)


def test_a_row_read_on_the_standby_is_written_to_the_primary(standby):
    # Bundles are migration data: committed, so the standby has them.
    bundle = Bundle.objects.using(REPLICA).order_by("pk").first()
    bundle.name = "Renamed on the primary"
    bundle.save(update_fields=["name"])
    assert Bundle.objects.using(DEFAULT_DB_ALIAS).get(pk=bundle.pk).name == bundle.name
    assert Bundle.objects.using(REPLICA).get(pk=bundle.pk).name != bundle.name


def test_admin_changelist_reads_the_standby_until_the_staff_user_writes(
    client, api, auth, priced, standby
):
    # Booked by a seller's client: that seller is marked, not the staff user.
    created = book(api, auth, booking_body(priced))
    assert created.status_code == 201, created.content
    hold = Order.objects.get(order_id=created.json()["data"]["order"]["orderId"])
    staff = get_user_model().objects.create_superuser("ops", "ops@example.com", "pw-ops-1234")
    client.force_login(staff)

    with ran(REPLICA, "orders_order") as replica:
        page = client.get(CHANGELIST)
    assert page.status_code == 200
    assert hold.record_locator not in page.content.decode()
    assert replica.hit

    # A change made through the back office: its author's next list is the primary's.
    client.post(CHANGELIST, {"action": "cancel_unpaid_hold", "_selected_action": [hold.pk]})
    assert Order.objects.get(pk=hold.pk).status == "CANCELLED"
    with ran(REPLICA, "orders_order") as replica:
        page = client.get(CHANGELIST)
    assert hold.record_locator in page.content.decode()
    assert not replica.captured_queries


@pytest.fixture
def standby_gone(standby):
    """The standby unreachable: its alias pointed at a port nothing listens on (as a
    standby host or pooler that died), until the test ends."""
    replica = connections[REPLICA]
    replica.close()
    kept = replica.settings_dict.copy()
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        closed_port = sock.getsockname()[1]
    replica.settings_dict.update(HOST="127.0.0.1", PORT=str(closed_port))
    yield standby
    replica.close()
    replica.settings_dict.clear()
    replica.settings_dict.update(kept)


@pytest.mark.skipif("connections['default'].vendor != 'postgresql'")
def test_a_standby_gone_mid_read_leaves_the_read_to_the_primary(
    api, auth, default_seller, standby_gone, caplog
):
    """OrderList and retrieve, whose reads would go to the standby, answer from the
    primary when the standby does not answer: the client sees its orders, not a 503."""
    order = order_with_trip(seller=default_seller)
    with ran(DEFAULT_DB_ALIAS, "orders_order") as primary:
        assert listed(api.get(ORDERS, **auth)) == [order.order_id]
        retrieved = api.get(f"{ORDERS}/{order.order_id}", **auth)
    assert retrieved.status_code == 200, retrieved.content
    assert retrieved.json()["data"]["order"]["orderId"] == order.order_id
    assert primary.hit
    assert "failed on the standby" in caplog.text
