"""Every back-office page at airline size (issue 27): the full demo schedule (seed_demo,
58,000 flight-date legs), 100,000 bookings and 1,000 webhook deliveries
(tests/airline_size.py). Each changelist reads as many queries for a page of five rows as
for a page of a hundred, each change page as many for a small object as for a large one,
and none more than PAGE_QUERIES. `make bench` (benchmarks/admin.py) times the same pages
on the same data."""

from collections.abc import Iterator
from io import StringIO

import pytest
from django.apps import apps
from django.contrib import admin
from django.contrib.auth import get_user_model
from django.contrib.contenttypes.models import ContentType
from django.core.management import call_command
from django.db import connection, transaction
from django.db.models import F, Sum
from django.test import Client
from django.test.utils import CaptureQueriesContext

from airline.network.itineraries import reset_network_index
from airline.network.models import LegInventory
from orders.models import Leg, Order, Segment
from tests.airline_size import admin_pages, airline_size_seed, inventory_mismatches
from webhooks.models import WebhookDelivery, WebhookEndpoint

pytestmark = pytest.mark.django_db

PAGE_QUERIES = 40  # the most any admin page may read, whatever it shows


@pytest.fixture(scope="module")
def airline_size(django_db_setup, django_db_blocker) -> Iterator[None]:
    """Seeded once for the module inside one transaction, rolled back at the end: each
    test's own transaction is a savepoint in it."""
    with django_db_blocker.unblock(), transaction.atomic():
        reset_network_index()
        call_command("seed_demo", stdout=StringIO())
        airline_size_seed()
        # The foreign keys of all those rows checked now, once: left deferred, every
        # test's teardown checked them again (Django's TestCase sets them IMMEDIATE, and
        # rolling its savepoint back makes them pending again): 13-19 s a test.
        connection.check_constraints()
        yield
        transaction.set_rollback(True)
    reset_network_index()


@pytest.fixture
def staff(airline_size) -> Client:
    # Every content type read once, as any process that has shown a page has (Django
    # caches them): a page's count then does not depend on which test ran before it.
    ContentType.objects.get_for_models(*apps.get_models())
    client = Client()
    client.force_login(
        get_user_model().objects.create_superuser("budget", email=None, password=None)
    )
    return client


def queries(client: Client, path: str) -> int:
    with CaptureQueriesContext(connection) as captured:
        response = client.get(path)
    assert response.status_code == 200, (path, response.status_code)
    return len(captured)


def test_every_page_reads_a_bounded_number_of_queries(staff):
    pages = admin_pages(get_user_model().objects.get(username="budget"))
    assert len(pages) > 40  # every model's list, most models' first row, the searches

    read = {name: queries(staff, path) for name, path in pages}

    assert {name: n for name, n in read.items() if n > PAGE_QUERIES} == {}


def test_a_changelist_reads_as_many_queries_for_five_rows_as_for_a_hundred(staff, monkeypatch):
    user = get_user_model().objects.get(username="budget")
    lists = [(name, path) for name, path in admin_pages(user) if "?" in path or "list" in name]
    per_size = {}
    for size in (5, 100):
        for model in apps.get_models():
            if admin.site.is_registered(model):
                monkeypatch.setattr(admin.site.get_model_admin(model), "list_per_page", size)
        per_size[size] = {name: queries(staff, path) for name, path in lists}

    differ = {
        name: (per_size[5][name], per_size[100][name])
        for name, _ in lists
        if per_size[5][name] != per_size[100][name]
    }
    assert differ == {}


def test_the_booking_page_reads_as_many_queries_for_a_big_booking_as_a_small_one(staff):
    # Two journeys, a pending airline change and webhook deliveries; one journey, none.
    big = Order.objects.get(order_id="0SIZE" + "1".zfill(15))
    small = Order.objects.get(order_id="0SIZE" + "6".zfill(15))
    assert (big.journeys.count(), small.journeys.count()) == (2, 1)
    assert big.airline_changes.exists()
    assert not small.airline_changes.exists()
    assert WebhookDelivery.objects.filter(order=big).exists()

    # Each shown once first: what a process reads once and keeps (content types, the
    # stations' time zones) is not counted against either, whichever test ran before.
    pages = [f"/admin/orders/order/{order.pk}/change/" for order in (big, small)]
    for page in pages:
        queries(staff, page)

    # One query per part shown (a part the booking has none of is left out), whatever
    # its rows: the big booking shows its airline changes, the small one none.
    def beyond_parts(page: str) -> int:
        with CaptureQueriesContext(connection) as captured:
            response = staff.get(page)
        assert response.status_code == 200
        return len(captured) - len(response.context["inline_admin_formsets"])

    assert beyond_parts(pages[0]) == beyond_parts(pages[1])


def test_an_endpoint_page_reads_as_many_queries_for_900_deliveries_as_for_100(staff):
    active = WebhookEndpoint.objects.get(webhook_id="wh_size_active")
    disabled = WebhookEndpoint.objects.get(webhook_id="wh_size_disabled")
    assert active.deliveries.count() == 900
    assert disabled.deliveries.count() == 100

    assert queries(staff, f"/admin/webhooks/webhookendpoint/{active.pk}/change/") == queries(
        staff, f"/admin/webhooks/webhookendpoint/{disabled.pk}/change/"
    )


def test_the_whole_bookings_and_legs_lists_are_not_counted_row_by_row(staff):
    # Their totals come from the tables' statistics (airline.backoffice.
    # EstimatedCountPaginator); a filtered list is still counted exactly.
    for path, narrowed, table in (
        ("/admin/orders/order/", "?status__exact=ONHOLD", "orders_order"),
        ("/admin/network/flightleg/", "?is_cancelled__exact=0", "network_flightleg"),
    ):
        with CaptureQueriesContext(connection) as whole:
            assert staff.get(path).status_code == 200
        with CaptureQueriesContext(connection) as filtered:
            assert staff.get(path + narrowed).status_code == 200

        assert [q for q in whole if "COUNT(" in q["sql"] and table in q["sql"]] == []
        assert len([q for q in filtered if "COUNT(" in q["sql"] and table in q["sql"]]) == 1


def test_the_seeded_inventory_holds_the_seats_the_seeded_bookings_hold(airline_size):
    # Each class row's `sold` is the seats of the live bookings on its leg in its class or
    # any class below it (a sale of class X adds to every row of rank <= X's rank).
    assert inventory_mismatches() == []
    cabins = LegInventory.objects.filter(rank=0)
    held = Segment.objects.filter(holds_inventory=True, order__order_id__startswith="0SIZE")
    seats = held.aggregate(seats=Sum("seats"))["seats"]
    legs = Leg.objects.filter(segment__in=held).count()
    assert legs > 100_000  # one or two journeys of each live booking
    assert cabins.aggregate(sold=Sum("sold"))["sold"] >= seats
    assert cabins.filter(sold__gt=0).count() > 40_000  # most legs have sales, not ties
    assert held.filter(rbd="M").exists()
    assert not LegInventory.objects.filter(sold__gt=F("authorized")).exists()
