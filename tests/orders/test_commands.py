"""The support and batch commands of orders (DESIGN.md §8, §10): import_bookings, booking,
bookings, expire_holds."""

import io
import json
from datetime import timedelta
from decimal import Decimal

import pytest
from django.core.management import CommandError, call_command

from airline.api.models import IdempotencyRecord
from airline.network.models import FlightLeg, LegInventory
from orders.models import Coupon, Leg, Order, OrderStatus, Passenger, Refund, Segment, Ticket
from tests.dbstats import analysed_since, database_clock
from tests.gateways import provider_refund
from tests.orders.conftest import CARD, book, booking_body
from tests.orders.factories import order_with_trip
from tests.orders.test_cancel import cancel, journey_refs
from tests.orders.test_exchange import booked

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _sellers(default_seller, other_seller):
    """ACME1 and ACME2, whom the import lines name."""


def run(*args) -> str:
    out = io.StringIO()
    call_command(*args, stdout=out)
    return out.getvalue()


def run_failing(*args) -> tuple[str, str]:
    """(stdout, the CommandError's message) of a run that must fail."""
    out = io.StringIO()
    with pytest.raises(CommandError) as failure:
        call_command(*args, stdout=out)
    return out.getvalue(), str(failure.value)


def segment(flight, day, origin, destination, rbd="Y"):
    return {
        "flightNumber": flight,
        "departureDate": day.isoformat(),
        "origin": origin,
        "destination": destination,
        "rbd": rbd,
    }


def imported(day, **overrides):
    """An import line: two adults (the first carrying an infant) and a child, PVD-CHS on
    MX101 and back on MX102 a week later."""
    line = {
        "recordLocator": "QX7R2M",
        "status": "CONFIRMED",
        "agencyCode": "ACMEAGT",
        "sellerCode": "ACME1",
        "passengers": [
            {"type": "ADT", "givenName": "Ada", "surname": "Lovelace", "dateOfBirth": "1985-12-10"},
            {"type": "ADT", "givenName": "Charles", "surname": "Babbage"},
            {"type": "CHD", "givenName": "Annabella", "surname": "King"},
            {"type": "INF", "givenName": "Byron", "surname": "King"},
        ],
        "contact": {"emailAddress": "ada@example.com", "phoneNumber": "401 555 0123"},
        "journeys": [
            [segment("MX101", day, "PVD", "CHS")],
            [segment("102", day + timedelta(days=7), "CHS", "PVD")],
        ],
        "totalPrice": {
            "amount": 612.35,
            "currency": "USD",
            "taxes": [{"code": "US", "amount": 45.90}, {"code": "AY", "amount": "22.40"}],
        },
    }
    line.update(overrides)
    return line


def import_file(tmp_path, *lines, name="bookings.jsonl") -> str:
    path = tmp_path / name
    path.write_text("\n".join(json.dumps(line) for line in lines) + "\n")
    return str(path)


def sold(flight_number, day):
    """Seats sold per booking class on each leg of a flight on its date."""
    return {
        (row.leg.leg_sequence, row.rbd): row.sold
        for row in LegInventory.objects.filter(
            leg__flight_number=flight_number, leg__flight_date=day
        ).select_related("leg")
    }


def nothing_sold():
    return not LegInventory.objects.filter(sold__gt=0).exists()


# --- import_bookings -------------------------------------------------------------------


def test_an_imported_booking_retrieves_and_lists_like_any_other(
    api, auth, travel_day, clock, tmp_path
):
    output = run("import_bookings", import_file(tmp_path, imported(travel_day)))

    assert output.splitlines() == [
        "line 1: created QX7R2M",
        "1 booking(s): 1 created, 0 skipped (imported before), 0 failed.",
    ]
    order = Order.objects.get(record_locator="QX7R2M")
    assert (order.channel, order.status, order.seller.code, order.agency_code) == (
        "IMPORT",
        "CONFIRMED",
        "ACME1",
        "ACMEAGT",
    )
    assert (order.total, order.paid, order.payment_time_limit, order.source_offer_id) == (
        Decimal("612.35"),
        Decimal("612.35"),
        None,
        None,
    )
    assert order.created_at == clock.at
    assert sum(item.total for item in order.items.all()) == Decimal("612.35")
    assert list(order.events.values_list("kind", "actor")) == [("imported", "import_bookings")]
    # Three seats each way: the infant rides on Ada's lap.
    assert sold(101, travel_day)[(1, "Y")] == 3
    assert sold(102, travel_day + timedelta(days=7))[(1, "Y")] == 3

    response = api.get("/json/v1/orders/QX7R2M", **auth)
    assert response.status_code == 200, response.content
    data = response.json()["data"]
    assert data["order"]["recordLocator"] == "QX7R2M"
    assert data["order"]["statusCode"] == "CONFIRMED"
    total = data["order"]["totalPrice"]
    assert (total["total"]["amount"], total["base"]["amount"]) == (612.35, 544.05)
    assert [(t["code"], t["amount"]["amount"]) for t in total["taxes"]] == [
        ("US", 45.9),
        ("AY", 22.4),
    ]
    pax = {p["name"]["surname"] + "/" + p["name"]["givenName"]: p for p in data["pax"]}
    assert [p["ptc"] for p in data["pax"]] == ["ADT", "ADT", "CHD", "INF"]
    assert pax["Lovelace/Ada"]["infantRefId"] == pax["King/Byron"]["paxId"]
    assert pax["Lovelace/Ada"]["dateOfBirth"] == "1985-12-10"
    assert data["contacts"][0]["phoneNumbers"] == [{"number": "+14015550123", "type": "Mobile"}]
    outbound = data["journeys"][0]["segments"][0]
    assert (outbound["marketingFlightNumber"], outbound["rbd"], outbound["cabinTypeCode"]) == (
        "101",
        "Y",
        "Y",
    )
    assert outbound["departureDateTime"] == f"{travel_day.isoformat()}T07:00:00"
    assert [i["fare"]["rbd"] for i in data["order"]["items"]] == ["Y", "Y"]
    assert len(data["tickets"]) == 4 * 2  # a coupon per passenger per segment
    assert data["payments"] == [
        {
            "paymentId": order.payments.get().ref,
            "amount": {"amount": 612.35, "currency": "USD"},
            "statusCode": "SUCCESSFUL",
            "method": {"type": "External"},
        }
    ]

    listed = api.get("/json/v1/orders", {"lastName": "babbage"}, **auth).json()["data"]
    assert listed["orders"] == [
        {
            "orderId": data["order"]["orderId"],
            "recordLocator": "QX7R2M",
            "statusCode": "CONFIRMED",
            "departureDate": travel_day.isoformat(),
            "flightNumber": "101",
            "origin": "PVD",
            "destination": "CHS",
            "sourceOrganizationCode": "ACMEAGT",
            "passengerName": {"givenName": "Ada", "surname": "Lovelace"},
        }
    ]


def test_the_tables_an_import_filled_have_statistics_once_it_is_done(travel_day, tmp_path):
    started = database_clock()

    run("import_bookings", import_file(tmp_path, imported(travel_day)))

    # Issue 24 item 8: a migration's worth of orders is not planned as an empty table.
    assert analysed_since(started, Order, Segment, Leg, Passenger, Ticket, Coupon) == {
        "orders_order": True,
        "orders_segment": True,
        "orders_leg": True,
        "orders_passenger": True,
        "orders_ticket": True,
        "orders_coupon": True,
    }


def test_a_pending_booking_takes_seats_but_no_money(api, auth, travel_day, tmp_path):
    line = imported(travel_day, status="PENDING", journeys=[imported(travel_day)["journeys"][0]])

    run("import_bookings", import_file(tmp_path, line))

    order = Order.objects.get(record_locator="QX7R2M")
    assert (order.status, order.paid, order.payment_time_limit) == ("PENDING", 0, None)
    assert not order.payments.exists()
    assert not order.tickets.exists()
    assert order.items.get().total == Decimal("612.35")
    assert sold(101, travel_day)[(1, "Y")] == 3
    data = api.get("/json/v1/orders/QX7R2M", **auth).json()["data"]
    assert data["order"]["statusCode"] == "PENDING"
    assert "paymentTimeLimit" not in data["order"]


def test_a_direct_flight_boarded_at_its_first_stop_uses_only_that_leg(
    api, auth, travel_day, tmp_path
):
    line = imported(
        travel_day,
        passengers=[{"type": "ADT", "givenName": "Ada", "surname": "Lovelace"}],
        journeys=[
            [
                segment("MX701", travel_day, "PVD", "CLT", rbd="M"),
                segment("MX702", travel_day, "CLT", "MSY", rbd="M"),
            ],
            [segment("MX501", travel_day + timedelta(days=3), "CHS", "TPA", rbd="C")],
        ],
        createdAt="2025-01-15T09:30:00Z",
    )

    run("import_bookings", import_file(tmp_path, line))

    order = Order.objects.get(record_locator="QX7R2M")
    assert order.created_at.isoformat() == "2025-01-15T09:30:00+00:00"
    first, second = order.journeys.order_by("position")
    assert (first.origin, first.destination, first.segments.count()) == ("PVD", "MSY", 2)
    assert (second.origin, second.destination) == ("CHS", "TPA")
    assert second.segments.get().cabin == "C"
    # MX501's second leg only: the PVD-CHS leg sells nothing.
    later = travel_day + timedelta(days=3)
    assert sold(501, later)[(2, "J")] == 1
    assert sold(501, later)[(1, "J")] == 0
    assert sold(701, travel_day)[(1, "M")] == 1


def test_a_bad_line_leaves_no_order_and_no_seats_and_the_others_are_imported(travel_day, tmp_path):
    back_day = travel_day + timedelta(days=7)
    back = FlightLeg.objects.get(flight_number=102, flight_date=back_day)
    full = LegInventory.objects.get(leg=back, rbd="L")
    LegInventory.objects.filter(pk=full.pk).update(sold=full.authorized)
    sold_out = imported(
        travel_day,
        journeys=[
            [segment("MX101", travel_day, "PVD", "CHS", rbd="L")],
            [segment("MX102", back_day, "CHS", "PVD", rbd="L")],
        ],
    )
    good = imported(travel_day, recordLocator="GOOD22")

    output, message = run_failing("import_bookings", import_file(tmp_path, sold_out, good))

    assert output.splitlines() == [
        f"line 1: FAILED QX7R2M: MX102 CHS-PVD on {back_day}: class L has fewer than 3 seats left",
        "line 2: created GOOD22",
    ]
    assert message == "2 booking(s): 1 created, 0 skipped (imported before), 1 failed."
    assert list(Order.objects.values_list("record_locator", flat=True)) == ["GOOD22"]
    # The failed booking's outbound seats, taken before the return failed, went back.
    assert sold(101, travel_day)[(1, "L")] == 0
    assert sold(101, travel_day)[(1, "Y")] == 3


def outbound(**changes):
    """A change to the import line: its only journey is MX101 PVD-CHS, with `changes`."""

    def change(line, day):
        line["journeys"] = [[{**segment("MX101", day, "PVD", "CHS"), **changes}]]

    return change


def connecting(first, then):
    """A change to the import line: two segments the same day, (flight, origin,
    destination) each."""

    def change(line, day):
        line["journeys"] = [[segment(first[0], day, *first[1:]), segment(then[0], day, *then[1:])]]

    return change


def only_adult(**fields):
    return {"passengers": [{"type": "ADT", "givenName": "Ada", "surname": "Lovelace", **fields}]}


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"seatPreference": "aisle"}, "seatPreference: Unknown property."),
        ({"recordLocator": "QX7"}, "recordLocator: This value does not match"),
        ({"status": "ONHOLD"}, 'status: "ONHOLD" is not a valid choice.'),
        ({"sellerCode": "NOPE"}, "sellerCode: no active seller NOPE"),
        ({"agencyCode": "WAY-TOO-LONG-CODE"}, "agencyCode: This value does not match"),
        ({"createdAt": "2999-01-01T00:00:00Z"}, "createdAt: in the future"),
        (
            {"totalPrice": {"amount": 100, "currency": "EUR"}},
            "totalPrice.currency: only USD is sold",
        ),
        (
            {"totalPrice": {"amount": "10.001", "currency": "USD"}},
            "totalPrice.amount: Ensure that there are no more than 2 decimal places.",
        ),
        (
            {"totalPrice": {"amount": 10, "currency": "USD", "taxes": [{"amount": 11}]}},
            "totalPrice.taxes[0].code: This field is required.",
        ),
        (
            {
                "totalPrice": {
                    "amount": 10,
                    "currency": "USD",
                    "taxes": [{"code": "US", "amount": 11}],
                }
            },
            "the taxes add up to more than the amount",
        ),
        ({"passengers": []}, "passengers: This list may not be empty."),
        (only_adult(title="Dr"), "passengers[0].title: Unknown property."),
        (
            {"passengers": [{"type": "CHD", "givenName": "Ann", "surname": "King"}]},
            "At least one adult (ADT) must travel (passengers.type)",
        ),
        (
            {
                "passengers": [
                    {"type": "ADT", "givenName": "Ada", "surname": "Lovelace"},
                    {"type": "INF", "givenName": "Byron", "surname": "King"},
                    {"type": "INF", "givenName": "Ralph", "surname": "King"},
                ]
            },
            "Infants (INF) may not outnumber adults (ADT)",
        ),
        (
            only_adult(dateOfBirth="2020-01-01"),
            "type ADT is for ages 12 to 130 (passengers.dateOfBirth)",
        ),
        (only_adult(givenName="R2D2"), "Names are letters"),
        ({"contact": {"emailAddress": "not-an-email"}}, "Not a valid email address"),
        ({"journeys": []}, "journeys: Ensure this field has at least 1 elements."),
        ({"journeys": [[]]}, "journeys[0]: Ensure this field has at least 1 elements."),
        (outbound(flightNumber="MX999"), "MX999 PVD-CHS on {day} is not a flight of our schedule"),
        (outbound(flightNumber="AA101"), "AA101 PVD-CHS on {day} is another airline's flight"),
        (outbound(destination="TPA"), "MX101 PVD-TPA on {day} is not a flight of our schedule"),
        (outbound(rbd="Q"), "journeys[0][0]: Q is not one of our booking classes"),
        (outbound(terminal="A"), "journeys[0][0].terminal: Unknown property."),
        (outbound(flightNumber="MX1O1"), "journeys[0][0].flightNumber: This value does not"),
        (outbound(departureDate="1999-01-01"), "MX101 PVD-CHS on 1999-01-01 is not a flight"),
        (
            connecting(("MX101", "PVD", "CHS"), ("MX501", "PVD", "CHS")),
            "journeys[0][1]: departs from PVD, not from CHS",
        ),
        (
            connecting(("MX501", "PVD", "CHS"), ("MX102", "CHS", "PVD")),
            "journeys[0][1]: departs before the segment before arrives",
        ),
    ],
)
def test_a_line_that_breaks_a_rule_is_reported_and_books_nothing(
    travel_day, tmp_path, change, message
):
    line = imported(travel_day)
    if callable(change):
        change(line, travel_day)
    else:
        line.update(change)

    output, summary = run_failing("import_bookings", import_file(tmp_path, line))

    assert output.startswith("line 1: FAILED ")
    assert message.format(day=travel_day) in output
    assert summary.endswith("1 failed.")
    assert not Order.objects.exists()
    assert nothing_sold()


def test_lines_that_are_not_json_objects_fail_alone(travel_day, tmp_path):
    path = tmp_path / "mixed.jsonl"
    path.write_text(
        "{not json\n\n[1, 2]\n" + json.dumps(imported(travel_day)) + "\n",
    )

    output, summary = run_failing("import_bookings", str(path))

    lines = output.splitlines()
    assert lines[0].startswith("line 1: FAILED -: Not JSON")
    assert lines[1] == "line 3: FAILED -: A line must be one JSON object"
    assert lines[2] == "line 4: created QX7R2M"
    assert summary == "3 booking(s): 1 created, 0 skipped (imported before), 2 failed."


def test_importing_a_file_again_skips_what_was_imported(travel_day, tmp_path):
    path = import_file(tmp_path, imported(travel_day))
    run("import_bookings", path)
    seats = sold(101, travel_day)

    output = run("import_bookings", path)

    assert output.splitlines() == [
        "line 1: skipped QX7R2M: QX7R2M was imported before",
        "1 booking(s): 0 created, 1 skipped (imported before), 0 failed.",
    ]
    assert Order.objects.count() == 1
    assert sold(101, travel_day) == seats


def test_a_locator_of_a_booking_made_here_is_refused(travel_day, tmp_path, default_seller):
    order_with_trip(seller=default_seller, record_locator="QX7R2M")

    output, _ = run_failing("import_bookings", import_file(tmp_path, imported(travel_day)))

    assert "recordLocator: QX7R2M is already a booking made here" in output
    assert Order.objects.count() == 1
    assert nothing_sold()


def test_the_seller_option_is_the_default_seller(travel_day, tmp_path, other_seller):
    line = imported(travel_day)
    del line["sellerCode"]
    path = import_file(tmp_path, line)
    output, _ = run_failing("import_bookings", path)
    assert "No sellerCode, and no --seller default was given" in output

    run("import_bookings", path, "--seller", "acme2")

    assert Order.objects.get().seller == other_seller


def test_an_unknown_seller_option_or_file_is_refused(tmp_path, default_seller):
    _, message = run_failing("import_bookings", import_file(tmp_path), "--seller", "NOPE")
    assert message == "No active seller 'NOPE'"
    _, message = run_failing("import_bookings", str(tmp_path / "missing.jsonl"))
    assert message.startswith("Cannot read")


def test_bookings_can_come_on_stdin(travel_day, monkeypatch):
    monkeypatch.setattr("sys.stdin", io.StringIO(json.dumps(imported(travel_day)) + "\n"))

    output = run("import_bookings", "-")

    assert output.splitlines()[0] == "line 1: created QX7R2M"
    assert Order.objects.filter(record_locator="QX7R2M").exists()


# --- booking ---------------------------------------------------------------------------


def test_booking_prints_the_order_for_support(travel_day, tmp_path):
    run("import_bookings", import_file(tmp_path, imported(travel_day)))
    order = Order.objects.get()

    output = run("booking", "qx7r2m")

    assert output.startswith(f"Booking QX7R2M  (order {order.order_id}, owner MX)\n")
    for expected in (
        "Status     CONFIRMED",
        "Seller     ACME1",
        "Agency     ACMEAGT",
        "Channel    Imported from another channel",
        "Total      612.35 USD   paid 612.35   balance due 0",
        "LOVELACE/Ada",
        "BABBAGE/Charles",
        "KING/Byron  ",
        "on the lap of LOVELACE/Ada",
        "ada@example.com  +14015550123",
        f"MX101  PVD {travel_day:%a %Y-%m-%d} 07:00 -> CHS {travel_day:%a %Y-%m-%d} 09:05",
        "External",
        "imported  by import_bookings",
    ):
        assert expected in output, expected
    for ticket in order.tickets.all():
        assert ticket.number in output
    assert output.count("coupon ") == 8
    assert output == run("booking", order.order_id)


def test_booking_shows_a_card_masked_and_a_held_booking_its_limit(api, auth, priced, clock):
    paid = book(api, auth, booking_body(priced, payment=CARD)).json()["data"]["order"]

    output = run("booking", paid["recordLocator"])

    assert "CreditCard  VI ************1111 exp 1230" in output
    assert "4111111111111111" not in output
    assert "Hold until" not in output


def test_booking_of_a_lapsed_hold_shows_it_cancelled(api, auth, priced, clock):
    held = book(api, auth, booking_body(priced)).json()["data"]["order"]
    assert f"Hold until {clock.at + timedelta(hours=24):%Y-%m-%d %H:%M} UTC" in run(
        "booking", held["recordLocator"]
    )
    clock.advance(hours=25)

    output = run("booking", held["recordLocator"])

    # Shown as every API read shows it, and like them written nothing: the worker (here
    # expire_holds) gives its seats back.
    assert "Status     CANCELLED  (hold lapsed;" in output
    assert "hold_expired" not in output
    assert Order.objects.get(order_id=held["orderId"]).status == OrderStatus.ONHOLD
    assert not nothing_sold()
    run("expire_holds")
    output = run("booking", held["recordLocator"])
    assert "Status     CANCELLED\n" in output
    assert "hold_expired  by expire_holds" in output
    assert nothing_sold()


def test_booking_of_an_unknown_locator_fails(db):
    _, message = run_failing("booking", "ZZZZZZ")
    assert message == "No booking 'ZZZZZZ'"


# --- bookings --------------------------------------------------------------------------


def test_bookings_finds_by_last_name_and_date(travel_day, tmp_path, default_seller):
    other = imported(
        travel_day + timedelta(days=1),
        recordLocator="OTHER2",
        passengers=[{"type": "ADT", "givenName": "Grace", "surname": "Hopper"}],
        agencyCode="ELSEAGT",
    )
    run("import_bookings", import_file(tmp_path, imported(travel_day), other))

    by_name = run("bookings", "--last-name", "KING").splitlines()
    by_date = run("bookings", "--date", (travel_day + timedelta(days=1)).isoformat())

    assert by_name == [
        f"QX7R2M  CONFIRMED  {'LOVELACE/Ada':<28}  {f'PVD-CHS {travel_day} 07:00 +1':<26}  "
        "seller ACME1  agency ACMEAGT",
        "1 booking(s).",
    ]
    assert by_date.splitlines()[0].startswith("OTHER2  CONFIRMED  HOPPER/Grace")
    assert "QX7R2M" not in by_date
    assert run("bookings", "--last-name", "nobody") == "No bookings found.\n"
    assert len(run("bookings", "--last-name", "king", "--limit", "1").splitlines()) == 2


def test_bookings_needs_a_criterion(db):
    _, message = run_failing("bookings")
    assert message == "Give --last-name or --date (or both)"


# --- expire_holds ----------------------------------------------------------------------


def test_expire_holds_cancels_lapsed_holds_and_frees_their_seats(api, auth, priced, clock):
    held = book(api, auth, booking_body(priced), HTTP_IDEMPOTENCY_KEY="hold-1")
    assert held.status_code == 201, held.content
    locator = held.json()["data"]["order"]["recordLocator"]
    assert not nothing_sold()
    assert IdempotencyRecord.objects.count() == 1

    clock.advance(hours=23)
    assert run("expire_holds").splitlines() == [
        "Cancelled 0 unpaid hold(s) past their payment time limit.",
        "Forgot 0 idempotency key(s) past their replay window.",
    ]
    clock.advance(hours=2)
    output = run("expire_holds")

    assert output.splitlines() == [
        "Cancelled 1 unpaid hold(s) past their payment time limit.",
        "Forgot 1 idempotency key(s) past their replay window.",
    ]
    order = Order.objects.get(record_locator=locator)
    assert order.status == OrderStatus.CANCELLED
    assert list(order.events.values_list("kind", "actor")) == [
        ("created", "ACME1 (key " + order.events.first().actor.split("key ")[1]),
        ("hold_expired", "expire_holds"),
    ]
    assert not order.segments.filter(holds_inventory=True).exists()
    assert nothing_sold()
    assert not IdempotencyRecord.objects.exists()

    again = run("expire_holds")

    assert again.splitlines()[0] == "Cancelled 0 unpaid hold(s) past their payment time limit."
    assert nothing_sold()


def test_expire_holds_leaves_paid_and_imported_bookings(
    api, auth, priced, travel_day, clock, tmp_path
):
    book(api, auth, booking_body(priced, payment=CARD))
    run("import_bookings", import_file(tmp_path, imported(travel_day, status="PENDING")))
    before = sorted(LegInventory.objects.values_list("pk", "sold"))
    clock.advance(hours=25)

    assert run("expire_holds").startswith("Cancelled 0 unpaid hold(s)")
    assert set(Order.objects.values_list("status", flat=True)) == {"CONFIRMED", "PENDING"}
    assert sorted(LegInventory.objects.values_list("pk", "sold")) == before


# --- retry_refunds ------------------------------------------------------------------------


def test_retry_refunds_sends_what_a_dead_worker_left_pending(
    api, auth, network, clock, monkeypatch
):
    view = booked(api, auth, network + timedelta(days=20), bundle="Nicest", flight=501)
    clock.advance(hours=25)  # past the 24-hour rule: the bundle's own terms refund it
    # The worker dies after the cancel committed, before the refund was sent.
    monkeypatch.setattr("orders.servicing.changes.refunds_send", lambda refunds: None)
    done = cancel(api, auth, view["order"]["orderId"], *journey_refs(view))
    assert done.status_code == 200, done.content
    monkeypatch.undo()
    refund = Refund.objects.get()
    locator = refund.payment.order.record_locator
    assert refund.state == Refund.State.PENDING

    young = run("retry_refunds")  # within the grace period: left to the worker that owes it
    clock.advance(minutes=10)
    sent = run("retry_refunds")
    again = run("retry_refunds", "--grace", "0")

    assert young == "refunds pending past the grace: 0; now none\n"
    assert sent.splitlines() == [
        f"{refund.ref}  {locator}  {refund.amount} USD  SENT",
        "refunds pending past the grace: 1; now 1 sent",
    ]
    assert again == "refunds pending past the grace: 0; now none\n"
    refund.refresh_from_db()
    assert (refund.state, refund.sent_at) == (Refund.State.SENT, clock.at)
    assert provider_refund(refund) == refund.amount  # given back once
