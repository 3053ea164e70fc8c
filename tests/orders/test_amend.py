"""Correcting passengers and the contact through the API: change order UpdatePassenger,
top-level passengers, UpdateContact, and reshop NameChange (SPEC.md §4.10, §4.12;
DESIGN.md §8, §11 UpdateContact)."""

from datetime import date, timedelta
from decimal import Decimal

import pytest

from orders.models import Contact, Coupon, Order, Passenger, Ticket
from tests.conftest import bearer, error_of, token_for
from tests.orders.conftest import CARD, HOLD
from tests.orders.test_exchange import booked, money_adds_up, reshop

pytestmark = pytest.mark.django_db


def change(api, auth, order_id, body):
    return api.patch(f"/json/v1/orders/{order_id}", body, format="json", **auth)


def update(pax_id, **patch):
    return {"type": "UpdatePassenger", "passengerId": pax_id, "patch": patch}


def rename(pax_id, surname="Byron", given="Ada"):
    return update(pax_id, name={"givenName": given, "surname": surname})


@pytest.fixture
def paid(api, auth, network, clock):
    return booked(api, auth, network + timedelta(days=10), bundle="Nice")


def test_name_change_is_quoted_by_bundle_and_free_on_an_unticketed_hold(
    api, auth, network, clock, paid
):
    pax = paid["pax"][0]["paxId"]
    nice = reshop(
        api, auth, paid["order"]["orderId"], {"type": "NameChange", "paxRefId": pax, "surname": "X"}
    )
    assert nice.status_code == 200, nice.content
    assert nice.json()["data"]["nameChange"] == {
        "paxRefId": pax,
        "fee": {"amount": 75.0, "currency": "USD"},
    }
    hold = booked(api, auth, network + timedelta(days=10), bundle="No Flex", payment=HOLD)
    free = reshop(
        api,
        auth,
        hold["order"]["orderId"],
        {"type": "NameChange", "paxRefId": hold["pax"][0]["paxId"], "surname": "X"},
    ).json()["data"]["nameChange"]
    assert free["fee"]["amount"] == 0
    error_of(
        reshop(api, auth, paid["order"]["orderId"], {"type": "NameChange", "paxRefId": pax}),
        422,
        "ERR-1005",
        "instruction.surname",
    )
    error_of(
        reshop(
            api,
            auth,
            paid["order"]["orderId"],
            {"type": "NameChange", "paxRefId": "PAX-NOPE", "surname": "X"},
        ),
        422,
        "ERR-1005",
        "instruction.paxRefId",
    )


def test_renaming_a_ticketed_passenger_needs_the_fee_and_reissues_the_ticket(
    api, auth, paid, clock
):
    order_id = paid["order"]["orderId"]
    pax = paid["pax"][0]["paxId"]
    old_ticket = paid["tickets"][0]["ticketNumber"]

    error_of(change(api, auth, order_id, {"changes": [rename(pax)]}), 400, "ERR-4002", "payment")
    assert Passenger.objects.get(ref=pax).surname == "Lovelace"

    response = change(api, auth, order_id, {"changes": [rename(pax)], "payment": CARD})

    assert response.status_code == 200, response.content
    view = response.json()["data"]
    assert view["pax"][0]["name"] == {"givenName": "Ada", "surname": "Byron"}
    coupons = {(t["ticketNumber"], t["statusCode"]) for t in view["tickets"]}
    assert (old_ticket, "EXCHANGED") in coupons
    [new] = [n for n, status in coupons if status == "OPEN"]
    assert new != old_ticket
    order = money_adds_up(order_id)
    assert order.retained == Decimal("75.00")
    assert order.payments.count() == 2
    assert (order.lead_given_name, order.lead_surname) == ("Ada", "Byron")
    assert Ticket.objects.filter(order=order).count() == 2
    event = order.events.get(kind="passenger_updated")
    assert event.detail == {"passenger": pax, "fields": ["given_name", "surname"], "fee": "75.00"}


def test_a_hold_changes_names_free_and_other_details_always_free(api, auth, network, clock):
    hold = booked(api, auth, network + timedelta(days=10), payment=HOLD)
    order_id = hold["order"]["orderId"]
    pax = hold["pax"][0]["paxId"]
    documents = [{"documentType": "PT", "documentNumber": "X123", "expiryDate": "2031-01-31"}]

    response = change(
        api,
        auth,
        order_id,
        {
            "changes": [
                rename(pax),
                {
                    "type": "UpdateContact",
                    "contact": {
                        "emailAddress": "new@example.com",
                        "phoneNumber": "+44 20 7946 0958",
                        "name": {"givenName": "Ada", "surname": "Byron"},
                    },
                },
            ],
        },
    )
    assert response.status_code == 200, response.content
    view = response.json()["data"]
    assert view["order"]["statusCode"] == "ONHOLD"
    assert view["contacts"][0]["emailAddress"] == "new@example.com"
    assert view["contacts"][0]["phoneNumbers"][0]["number"] == "+442079460958"

    top = change(
        api,
        auth,
        order_id,
        {"passengers": [{"passengerId": pax, "gender": "Female", "travelDocuments": documents}]},
    )
    assert top.status_code == 200, top.content
    row = Passenger.objects.get(ref=pax)
    assert (row.gender, row.travel_documents) == ("Female", documents)
    order = money_adds_up(order_id)
    assert order.retained == 0
    assert order.balance_due == order.total
    assert list(order.events.values_list("kind", flat=True)).count("passenger_updated") == 2


def test_passenger_patch_refusals_leave_the_whole_request_undone(api, auth, paid, clock):
    order_id = paid["order"]["orderId"]
    pax = paid["pax"][0]["paxId"]
    contact = {
        "type": "UpdateContact",
        "contact": {"emailAddress": "x@example.com", "name": {"givenName": "A", "surname": "B"}},
    }
    version = Order.objects.get(order_id=order_id).version

    cases = [
        ({"changes": [update(pax)]}, 422, "ERR-1005", "changes.patch"),
        ({"changes": [update("PAX-NOPE", gender="Male")]}, 422, "ERR-1005", "changes.passengerId"),
        (
            {"changes": [contact, update(pax, dateOfBirth="2020-01-01")]},
            422,
            "ERR-1005",
            "changes.patch.dateOfBirth",
        ),
        (
            {"changes": [update(pax, contacts={"emailAddress": "not-an-email"})]},
            400,
            "ERR-1004",
            "changes.patch.contacts.emailAddress",
        ),
        (
            {"changes": [update(pax, gender="Male"), update(pax, gender="Female")]},
            422,
            "ERR-1005",
            "changes.passengerId",
        ),
        ({"passengers": [{"passengerId": pax}]}, 422, "ERR-1005", "passengers"),
        (
            {"changes": [{"type": "UpdateContact", "contact": {"emailAddress": "x@example.com"}}]},
            422,
            "ERR-1005",
            "changes.contact.name",
        ),
        (
            {"changes": [{**contact, "contact": {**contact["contact"], "phoneNumber": "12"}}]},
            400,
            "ERR-1004",
            "changes.contact.phoneNumber",
        ),
        (
            {"changes": [{"type": "UpdatePassenger", "passengerId": pax}]},
            422,
            "ERR-1005",
            "changes.patch",
        ),
    ]
    for body, status, code, path in cases:
        error_of(change(api, auth, order_id, body), status, code, path)
    order = Order.objects.get(order_id=order_id)
    assert order.version == version
    assert Contact.objects.get(order=order).email == "ada@example.com"
    assert Passenger.objects.get(ref=pax).date_of_birth is None


def test_a_date_of_birth_that_fits_the_type_is_kept(api, auth, paid, clock):
    pax = paid["pax"][0]["paxId"]
    response = change(
        api, auth, paid["order"]["orderId"], {"changes": [update(pax, dateOfBirth="1990-05-17")]}
    )
    assert response.status_code == 200, response.content
    assert Passenger.objects.get(ref=pax).date_of_birth == date(1990, 5, 17)
    assert (
        not Coupon.objects.filter(ticket__order__order_id=paid["order"]["orderId"])
        .exclude(status="OPEN")
        .exists()
    )


def test_another_seller_and_a_read_only_key_change_nothing(
    api, auth, paid, partner_key, other_seller, read_only_key
):
    order_id = paid["order"]["orderId"]
    body = {"changes": [update(paid["pax"][0]["paxId"], gender="Male")]}
    other = bearer(token_for(api, partner_key.raw, str(other_seller.pk)))
    reader = bearer(token_for(api, read_only_key.raw))

    error_of(change(api, other, order_id, body), 404, "ERR-4000")
    assert change(api, reader, order_id, body).json()["error"]["code"] == "ERR-8001"
    assert Passenger.objects.get(ref=paid["pax"][0]["paxId"]).gender == ""
