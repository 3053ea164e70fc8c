"""POST /json/{v}/orders (SPEC.md §2.5, §2.5.1, §3, §4.7; DESIGN.md §8, §11)."""

import json
from datetime import UTC, datetime, timedelta
from decimal import Decimal

import pytest
from django.core.cache import cache

from airline.network.inventory import inventory_sell
from airline.network.models import LegInventory
from orders.core import ids
from orders.models import (
    Contact,
    Coupon,
    Journey,
    Leg,
    Order,
    OrderEvent,
    OrderItem,
    Passenger,
    Payment,
    Segment,
    Ticket,
)
from orders.money.payments import TestGateway
from orders.reading.presenters import order_view_key
from tests.conftest import bearer, error_of, token_for
from tests.orders.conftest import CARD, HOLD, book, booking_body, price_offer

pytestmark = pytest.mark.django_db

ORDER_TABLES = (
    Order,
    OrderEvent,
    Passenger,
    Contact,
    Journey,
    Segment,
    Leg,
    OrderItem,
    Payment,
    Ticket,
    Coupon,
)


def snapshot():
    """Every order table's row count and every leg's sold seats."""
    return (
        {model.__name__: model.objects.count() for model in ORDER_TABLES},
        sorted(LegInventory.objects.values_list("leg_id", "rbd", "sold")),
    )


def sold_on(segment_ref, order):
    segment = Segment.objects.get(order=order, ref=segment_ref)
    leg = segment.legs.get().flight_leg
    return LegInventory.objects.get(leg=leg, rbd=segment.rbd).sold


def card(**changes):
    return {**CARD, **changes}


def amount(money):
    return Decimal(str(money["amount"]))


# --- holds -----------------------------------------------------------------------------


def test_a_hold_is_onhold_with_the_balance_and_a_time_limit(api, auth, priced, clock):
    before = snapshot()
    response = book(api, auth, booking_body(priced))

    assert response.status_code == 201, response.content
    order = response.json()["data"]["order"]
    assert order["statusCode"] == "ONHOLD"
    assert order["ownerCode"] == "MX"
    assert order["balanceDue"] == order["totalPrice"]["total"]
    assert amount(order["totalPrice"]["total"]) == amount(priced["offer"]["totalPrice"]["total"])
    assert order["paymentTimeLimit"] == (clock.at + timedelta(hours=24)).strftime(
        "%Y-%m-%dT%H:%M:%SZ"
    )
    assert order["creationDateTime"] == clock.at.strftime("%Y-%m-%dT%H:%M:%SZ")
    assert len(order["recordLocator"]) == 6
    assert len(order["orderId"]) == 20

    stored = Order.objects.get(order_id=order["orderId"])
    assert (stored.status, stored.paid, stored.agency_code, stored.channel) == (
        "ONHOLD",
        Decimal("0.00"),
        "ACMEAGT",
        "JSON",
    )
    assert stored.seller.code == "ACME1"
    assert not stored.payments.exists()
    assert not stored.tickets.exists()
    assert list(stored.events.values_list("kind", flat=True)) == ["created"]
    # Two adults and a child: three seats on each of the two flights, taken at once.
    counts, sold = snapshot()
    assert counts["Order"] == before[0]["Order"] + 1
    assert sum(s for *_, s in sold) - sum(s for *_, s in before[1]) > 0
    for segment in stored.segments.all():
        assert segment.seats == 3


def test_the_hold_limit_never_passes_a_day_before_departure(api, auth, network, clock):
    day = network + timedelta(days=3)
    departure = datetime(day.year, day.month, day.day, 12, 0, tzinfo=UTC)  # MX101 07:00 EST
    clock.at = departure - timedelta(hours=30)
    priced_soon = price_offer(api, auth, day)

    order = book(api, auth, booking_body(priced_soon)).json()["data"]["order"]

    assert order["paymentTimeLimit"] == (departure - timedelta(hours=24)).strftime(
        "%Y-%m-%dT%H:%M:%SZ"
    )


def test_no_hold_inside_a_day_of_departure(api, auth, network, clock):
    day = network + timedelta(days=3)
    clock.at = datetime(day.year, day.month, day.day, 12, 0, tzinfo=UTC) - timedelta(hours=23)
    priced_soon = price_offer(api, auth, day)
    before = snapshot()

    response = book(api, auth, booking_body(priced_soon))

    error_of(response, 400, "ERR-4001", "payment.type")
    assert snapshot() == before
    paid = book(api, auth, booking_body(priced_soon, payment=CARD))
    assert paid.json()["data"]["order"]["statusCode"] == "CONFIRMED"


# --- card payments ---------------------------------------------------------------------


@pytest.mark.usefixtures("card_gateway")
def test_a_card_payment_confirms_with_a_payment_and_e_tickets(api, auth, priced):
    response = book(api, auth, booking_body(priced, payment=CARD))

    assert response.status_code == 201, response.content
    data = response.json()["data"]
    order = data["order"]
    assert order["statusCode"] == "CONFIRMED"
    assert "balanceDue" not in order
    assert "paymentTimeLimit" not in order
    [payment] = data["payments"]
    assert payment["amount"] == order["totalPrice"]["total"]
    assert payment["statusCode"] == "SUCCESSFUL"
    assert payment["method"] == {
        "type": "CreditCard",
        "cardType": "VI",
        "maskedNumber": "XXXXXXXXXXXX1111",
    }
    # One coupon per passenger per segment; one 13-digit ticket per passenger.
    pax = {p["paxId"] for p in data["pax"]}
    segments = {s["segmentId"] for j in data["journeys"] for s in j["segments"]}
    assert {(t["paxRefId"], t["segmentRefId"]) for t in data["tickets"]} == {
        (p, s) for p in pax for s in segments
    }
    numbers = {t["ticketNumber"] for t in data["tickets"]}
    assert len(numbers) == len(pax)
    assert all(len(n) == 13 and n.isdigit() and n.startswith("880") for n in numbers)
    assert {t["statusCode"] for t in data["tickets"]} == {"OPEN"}

    stored = Order.objects.get(order_id=order["orderId"])
    assert stored.paid == stored.total == amount(order["totalPrice"]["total"])
    row = stored.payments.get()
    assert (row.card_brand, row.card_last4, row.card_expiry) == ("VI", "1111", "1230")


@pytest.mark.usefixtures("card_gateway")
@pytest.mark.parametrize(
    ("number", "brand", "code"),
    [
        ("5555555555554444", "CA", "737"),
        ("378282246310005", "AX", "7373"),
        ("6011111111111117", "DS", "737"),
    ],
)
def test_every_accepted_brand_pays(api, auth, priced, number, brand, code):
    response = book(
        api,
        auth,
        booking_body(priced, payment=card(cardType=brand, cardNumber=number, securityCode=code)),
    )
    assert response.json()["data"]["order"]["statusCode"] == "CONFIRMED", response.content


@pytest.mark.usefixtures("card_gateway")
def test_a_declined_card_leaves_inventory_and_tables_as_they_were(api, auth, priced):
    before = snapshot()

    response = book(api, auth, booking_body(priced, payment=card(cardNumber="4000000000000002")))

    error_of(response, 400, "ERR-6002", "payment")
    assert snapshot() == before


@pytest.mark.usefixtures("card_gateway")
def test_a_gateway_timeout_books_nothing(api, auth, priced):
    before = snapshot()

    response = book(api, auth, booking_body(priced, payment=card(cardNumber="4000000000000119")))

    error_of(response, 503, "ERR-6005", "payment")
    assert snapshot() == before


@pytest.mark.parametrize(
    ("payment", "status", "code", "path"),
    [
        ({"type": "Cash"}, 422, "ERR-6000", "payment.type"),
        (card(cardType="JC"), 422, "ERR-6001", "payment.cardType"),
        (card(cardNumber="4111111111111112"), 422, "ERR-1005", "payment.cardNumber"),
        (card(cardNumber="5555555555554444"), 422, "ERR-1005", "payment.cardNumber"),
        (card(cardNumber="41111111abc"), 422, "ERR-1005", "payment.cardNumber"),
        (card(expiryDate="0120"), 422, "ERR-1005", "payment.expiryDate"),
        (card(expiryDate="1330"), 422, "ERR-1005", "payment.expiryDate"),
        (card(securityCode="12"), 422, "ERR-1005", "payment.securityCode"),
        (
            card(cardType="AX", cardNumber="378282246310005", securityCode="737"),
            422,
            "ERR-1005",
            "payment.securityCode",
        ),
        ({"type": "CreditCard", "cardType": "VI"}, 422, "ERR-1005", "payment.cardNumber"),
    ],
)
def test_bad_payments_are_refused_and_book_nothing(api, auth, priced, payment, status, code, path):
    before = snapshot()
    error_of(book(api, auth, booking_body(priced, payment=payment)), status, code, path)
    assert snapshot() == before


# --- passengers and contact ------------------------------------------------------------


def with_passenger(body, pax_id, **changes):
    body["passengers"] = [
        {**p, **changes} if p["passengerId"] == pax_id else p for p in body["passengers"]
    ]
    return body


@pytest.mark.parametrize(
    ("change", "status", "code", "path"),
    [
        (
            lambda b: b["contact"].update(phoneNumber="12345"),
            400,
            "ERR-1004",
            "contact.phoneNumber",
        ),
        (
            lambda b: b["contact"].update(emailAddress="ada@"),
            400,
            "ERR-1004",
            "contact.emailAddress",
        ),
        (
            lambda b: with_passenger(b, "ADT-2", contacts={"emailAddress": "not an email"}),
            400,
            "ERR-1004",
            "passengers.contacts.emailAddress",
        ),
        (
            lambda b: with_passenger(b, "ADT-2", contacts={"phoneNumber": "+1 999"}),
            400,
            "ERR-1004",
            "passengers.contacts.phoneNumber",
        ),
        (lambda b: b.pop("contact"), 422, "ERR-1005", "contact"),
        (lambda b: b["contact"].pop("emailAddress"), 422, "ERR-1005", "contact.emailAddress"),
        (lambda b: b.pop("payment"), 422, "ERR-1005", "payment"),
        (
            lambda b: with_passenger(b, "ADT-2", passengerId="ADT-1"),
            422,
            "ERR-1005",
            "passengers.passengerId",
        ),
        (
            lambda b: with_passenger(b, "ADT-1", name={"givenName": "Ada", "surname": "R2D2"}),
            422,
            "ERR-1005",
            "passengers.name.surname",
        ),
        (
            lambda b: with_passenger(b, "ADT-1", name={"givenName": "Ada"}),
            422,
            "ERR-1005",
            "passengers.name.surname",
        ),
        (
            lambda b: with_passenger(b, "ADT-1", dateOfBirth="2020-01-01"),
            422,
            "ERR-1005",
            "passengers.dateOfBirth",
        ),
        (
            lambda b: with_passenger(b, "CHD-1", dateOfBirth="1990-01-01"),
            422,
            "ERR-1005",
            "passengers.dateOfBirth",
        ),
        (
            lambda b: with_passenger(b, "ADT-1", gender="Other"),
            422,
            "ERR-1005",
            "passengers.gender",
        ),
        (
            lambda b: with_passenger(b, "ADT-1", nationality="usa"),
            422,
            "ERR-1005",
            "passengers.nationality",
        ),
        (lambda b: b.update(extra=1), 422, "ERR-1005", "extra"),
        (
            lambda b: with_passenger(b, "ADT-2", passengerId="ADT-9"),
            400,
            "ERR-4001",
            "passengers.passengerId",
        ),
        (
            lambda b: with_passenger(b, "CHD-1", type="ADT"),
            400,
            "ERR-4001",
            "passengers.passengerId",
        ),
        (
            lambda b: b.update(passengers=[p for p in b["passengers"] if p["type"] != "ADT"]),
            422,
            "ERR-1005",
            "passengers.type",
        ),
        (lambda b: b.update(offerItemIds=["nope.1"]), 400, "ERR-4001", "offerItemIds"),
        (lambda b: b.update(offerItemIds=[]), 422, "ERR-1005", "offerItemIds"),
        (
            lambda b: b.update(
                offerItemSelections=[
                    {"offerItemId": b["offerItemIds"][0], "passengerIds": ["ADT-1"]}
                ]
            ),
            400,
            "ERR-4001",
            "offerItemSelections.passengerIds",
        ),
    ],
)
def test_invalid_bookings_get_the_documented_error(api, auth, priced, change, status, code, path):
    body = booking_body(priced)
    change(body)
    before = snapshot()

    error_of(book(api, auth, body), status, code, path)

    assert snapshot() == before


def test_the_contact_name_defaults_to_the_lead_passenger_and_phones_become_e164(api, auth, priced):
    body = booking_body(priced)
    body["contact"] = {"emailAddress": "ops@example.com", "phoneNumber": "(401) 555-0123"}

    data = book(api, auth, body).json()["data"]

    [contact] = data["contacts"]
    assert contact["name"] == {"givenName": "Ada", "surname": "Lovelace"}
    assert contact["phoneNumbers"] == [{"number": "+14015550123", "type": "Mobile"}]
    assert contact["contactTypeCode"] == "P"
    assert contact["contactId"].startswith("CTC-")


def test_optional_passenger_details_are_kept(api, auth, priced):
    body = with_passenger(
        booking_body(priced),
        "ADT-1",
        dateOfBirth="1990-12-10",
        gender="Female",
        nationality="GB",
        residenceCountry="US",
        loyaltyProgram={"programCode": "MX", "accountNumber": "123456789"},
        travelDocuments=[
            {
                "documentType": "PT",
                "documentNumber": "X123",
                "issuingCountry": "GB",
                "expiryDate": "2031-01-01",
            }
        ],
        contacts={"emailAddress": "ada@example.org", "phoneNumber": "+44 20 7946 0958"},
    )
    with_passenger(body, "CHD-1", dateOfBirth=None)
    body["passengers"][2].pop("dateOfBirth")

    data = book(api, auth, body).json()["data"]

    ada = data["pax"][0]
    assert ada["dateOfBirth"] == "1990-12-10"
    assert (ada["gender"], ada["nationality"], ada["residenceCountry"]) == ("Female", "GB", "US")
    assert ada["loyaltyProgram"]["accountNumber"] == "123456789"
    assert ada["travelDocuments"][0]["expiryDate"] == "2031-01-01"
    assert ada["contacts"] == {"emailAddress": "ada@example.org", "phoneNumber": "+442079460958"}
    assert "dateOfBirth" not in data["pax"][1]


def test_an_infant_rides_with_the_adult_who_names_it_and_takes_no_seat(api, auth, travel_day):
    party = [{"type": "ADT"}, {"type": "INF"}]
    priced_infant = price_offer(api, auth, travel_day, party=party)
    leg = LegInventory.objects.filter(leg__flight_number=101, leg__flight_date=travel_day)
    sold_before = sum(leg.values_list("sold", flat=True))

    data = book(api, auth, booking_body(priced_infant)).json()["data"]

    adult, infant = data["pax"]
    assert adult["infantRefId"] == infant["paxId"]
    assert infant["ptc"] == "INF"
    assert sum(leg.values_list("sold", flat=True)) - sold_before == len(leg)  # one seat a class


@pytest.mark.parametrize(
    ("change", "path"),
    [
        (lambda b: b["passengers"][0].pop("infantPassengerId"), "passengers.infantPassengerId"),
        (
            lambda b: b["passengers"][0].update(infantPassengerId="ADT-1"),
            "passengers.infantPassengerId",
        ),
        (
            lambda b: b["passengers"].append(
                {"passengerId": "INF-2", "type": "INF", "name": {"givenName": "A", "surname": "B"}}
            ),
            "passengers.type",
        ),
    ],
)
def test_infant_rules(api, auth, travel_day, change, path):
    priced_infant = price_offer(api, auth, travel_day, party=[{"type": "ADT"}, {"type": "INF"}])
    body = booking_body(priced_infant)
    change(body)
    error_of(book(api, auth, body), 422, "ERR-1005", path)


# --- offers ----------------------------------------------------------------------------


def test_a_priced_offer_becomes_one_order(api, auth, priced):
    assert book(api, auth, booking_body(priced)).status_code == 201
    before = snapshot()

    error_of(book(api, auth, booking_body(priced)), 400, "ERR-4001", "offerId")

    assert snapshot() == before


def test_a_shopping_offer_cannot_be_booked(api, auth, travel_day):
    from tests.offers.conftest import search_body

    offers = api.post(
        "/json/v1/offers", search_body(("PVD", "CHS", travel_day)), format="json", **auth
    ).json()["data"]["offers"]
    body = booking_body(
        {
            "pax": [{"paxId": "ADT-1", "ptc": "ADT"}],
            "offer": {
                "offerId": offers[0]["offerId"],
                "items": [{"offerItemId": offers[0]["offerItems"][0]["offerItemId"]}],
            },
        }
    )
    error_of(book(api, auth, body), 400, "ERR-4001", "offerId")


def test_unknown_expired_and_other_sellers_offers(
    api, auth, priced, clock, partner_key, other_seller
):
    body = booking_body(priced)
    error_of(book(api, auth, {**body, "offerId": "nope.1"}), 404, "ERR-3000", "offerId")
    other = bearer(token_for(api, partner_key.raw, other_seller.pk))
    error_of(book(api, other, body), 404, "ERR-3000", "offerId")
    clock.advance(minutes=31)
    error_of(book(api, auth, body), 404, "ERR-3001", "offerId")


def test_seats_gone_between_pricing_and_booking(api, auth, priced):
    segment = priced["journeys"][0]["segments"][0]
    leg_rows = LegInventory.objects.filter(
        leg__flight_number=int(segment["marketingFlightNumber"]),
        leg__departs_at__date=datetime.fromisoformat(segment["departureDateTime"]).date(),
        cabin="Y",
    )
    leg_id = leg_rows.first().leg_id
    top = leg_rows.order_by("rank").first()
    inventory_sell(leg_ids=[leg_id], rbd=top.rbd, seats=top.authorized - top.sold)
    before = snapshot()

    error_of(book(api, auth, booking_body(priced)), 400, "ERR-4001", "offerId")

    assert snapshot() == before


def test_booking_needs_full_transaction_permission(api, read_only_key, priced):
    read_only = bearer(token_for(api, read_only_key.raw))
    response = book(api, read_only, booking_body(priced))
    assert response.status_code == 403
    assert response.json()["error"]["code"] == "ERR-8001"
    assert book(api, {}, booking_body(priced)).json()["error"]["code"] == "ERR-8000"


# --- the response is the order as stored -----------------------------------------------


@pytest.mark.parametrize("payment", [HOLD, CARD], ids=["hold", "card"])
@pytest.mark.parametrize(
    ("destination", "back"),
    [("CHS", timedelta(days=7)), ("TPA", None), ("MSY", None)],
    ids=["round-trip", "one-stop", "connection"],
)
def test_the_response_is_what_a_later_retrieve_renders_from_the_database(
    api, auth, travel_day, payment, destination, back
):
    party = [{"type": "ADT"}, {"type": "ADT"}, {"type": "CHD"}, {"type": "INF"}]
    priced = price_offer(
        api,
        auth,
        travel_day,
        destination=destination,
        back=travel_day + back if back else None,
        party=party,
    )
    body = with_passenger(
        booking_body(priced, payment=payment),
        "ADT-2",
        dateOfBirth="1971-12-26",
        gender="Male",
        nationality="GB",
        loyaltyProgram={"programCode": "MX", "accountNumber": "123456789", "tierLevel": "Gold"},
        travelDocuments=[
            {
                "documentType": "PT",
                "documentNumber": "X123",
                "issuingCountry": "GB",
                "nationality": "GB",
                "expiryDate": "2031-01-01",
            }
        ],
        contacts={"phoneNumber": "+44 20 7946 0958", "emailAddress": "charles@example.org"},
    )
    body["contact"]["postalAddress"] = {
        "line1": "12 Orchard Street",
        "city": "Providence",
        "stateProvince": "RI",
        "postalCode": "02903",
        "countryCode": "US",
    }

    created = book(api, auth, body)

    assert created.status_code == 201, created.content
    order = Order.objects.get(order_id=created.json()["data"]["order"]["orderId"])
    view_key = order_view_key(order)
    assert json.loads(cache.get(view_key)) == created.json()["data"]  # kept for retrieves
    # Forget that rendering, so that the retrieve reads every row back and renders them.
    cache.delete(view_key)
    retrieved = api.get(f"/json/v1/orders/{order.order_id}", **auth)
    assert retrieved.status_code == 200, retrieved.content
    assert retrieved.content == created.content
    assert cache.get(view_key) is not None


# --- record locators -------------------------------------------------------------------


class GatewaySpy(TestGateway):
    charges: list = []
    refunds: list = []

    def charge(self, **kwargs):
        charge = super().charge(**kwargs)
        self.charges.append(charge)
        return charge

    def refund(self, *, charge, amount):
        self.refunds.append(charge)


@pytest.fixture
def gateway(settings):
    settings.PAYMENT_GATEWAY = f"{__name__}.GatewaySpy"
    GatewaySpy.charges, GatewaySpy.refunds = [], []
    return GatewaySpy


def locators_drawn(monkeypatch, *draws):
    """The record locators drawn for new orders from now: these in turn, then the last
    one again and again."""
    queue = list(draws)
    monkeypatch.setattr(
        ids, "new_record_locator", lambda: queue.pop(0) if len(queue) > 1 else queue[0]
    )


def taken_seats():
    return {(leg, rbd): sold for leg, rbd, sold in snapshot()[1] if sold}


# A real transaction, as in production: the clash aborts it, and the booking runs again.
@pytest.mark.django_db(transaction=True, serialized_rollback=True)
@pytest.mark.parametrize("payment", [HOLD, CARD], ids=["hold", "card"])
def test_a_record_locator_clash_books_again_with_a_fresh_locator(
    api, auth, travel_day, gateway, monkeypatch, payment
):
    other = book(api, auth, booking_body(price_offer(api, auth, travel_day, destination="TPA")))
    taken, other_id = (other.json()["data"]["order"][k] for k in ("recordLocator", "orderId"))
    priced = price_offer(api, auth, travel_day, back=travel_day + timedelta(days=7))
    locators_drawn(monkeypatch, taken, taken, "QX7R2M")
    before, seats_before = snapshot(), taken_seats()

    response = book(api, auth, booking_body(priced, payment=payment))

    assert response.status_code == 201, response.content
    data = response.json()["data"]
    assert data["order"]["recordLocator"] == "QX7R2M"
    order = Order.objects.get(record_locator="QX7R2M")
    assert order.order_id == data["order"]["orderId"]
    assert Order.objects.get(record_locator=taken).order_id == other_id  # untouched
    # One booking's rows, written once: three passengers, two flights, three seats each.
    counts = snapshot()[0]
    written = {name: counts[name] - before[0][name] for name in counts}
    paid = payment is CARD
    assert written == {
        "Order": 1,
        "OrderEvent": 2 if paid else 1,  # created; paid
        "Passenger": 3,
        "Contact": 1,
        "Journey": 2,
        "Segment": 2,
        "Leg": 2,
        "OrderItem": 2,
        "Payment": 1 if paid else 0,
        "Ticket": 3 if paid else 0,
        "Coupon": 6 if paid else 0,
    }
    seats = taken_seats()
    assert {seats[k] - seats_before.get(k, 0) for k in seats} - {0} == {3}
    assert len(gateway.charges) == (1 if paid else 0)
    assert gateway.refunds == []


@pytest.mark.parametrize("payment", [HOLD, CARD], ids=["hold", "card"])
def test_no_free_record_locator_books_nothing_and_charges_nothing(
    api, auth, priced, travel_day, gateway, monkeypatch, payment
):
    taken = book(api, auth, booking_body(price_offer(api, auth, travel_day, destination="TPA")))
    locators_drawn(monkeypatch, taken.json()["data"]["order"]["recordLocator"])
    before = snapshot()

    response = book(api, auth, booking_body(priced, payment=payment))

    error_of(response, 500, "ERR-9003")
    assert snapshot() == before
    # The seats are reserved before the card is charged: no booking, no charge.
    assert gateway.charges == gateway.refunds == []


# A real transaction, as in production: the refused INSERT comes back with the legs' lock
# it was sent with, and the whole booking is rolled back.
@pytest.mark.django_db(transaction=True, serialized_rollback=True)
@pytest.mark.parametrize("payment", [HOLD, CARD], ids=["hold", "card"])
def test_an_offer_booked_again_is_refused_and_takes_no_seat_and_no_charge(
    api, auth, travel_day, gateway, payment
):
    priced = price_offer(api, auth, travel_day)
    first = book(api, auth, booking_body(priced, payment=payment))
    assert first.status_code == 201, first.content
    before, seats_before = snapshot(), taken_seats()
    charges = len(gateway.charges)

    # Nothing before the order's INSERT refuses it: its unique offer id does.
    second = book(api, auth, booking_body(priced, payment=payment))

    error = error_of(second, 400, "ERR-4001", "offerId")
    assert "has already been booked" in error["description"]
    assert snapshot() == before
    assert taken_seats() == seats_before
    assert len(gateway.charges) == charges
