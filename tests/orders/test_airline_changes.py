"""Airline-initiated schedule changes (issue 17 items 5-7): a schedule reload from SSIM
that retimes, cancels or re-equips flights with bookings gives each affected order a
change record, shown in its view and sent as a webhook; the seller accepts it, cancels
for it with everything back, or changes to another flight at no charge."""

from dataclasses import replace
from datetime import datetime, time, timedelta
from decimal import Decimal
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command

from orders.models import AirlineChange, Coupon, GatewayEntry, Order, Refund
from tests.conftest import bearer, error_of, token_for
from tests.network.ssim_builder import Leg, ssim_file
from tests.offers.conftest import CST
from tests.orders.conftest import CARD, HOLD, book, booking_body, price_offer
from tests.orders.test_exchange import (
    accept as accept_reshop,
)
from tests.orders.test_exchange import (
    itinerary,
    money_adds_up,
    priced_in,
    quote,
    reshop,
    sold,
)
from tests.orders.test_order_ancillaries import change, seat_entry, seats, units
from tests.webhooks.conftest import loopback_allowed, register  # noqa: F401
from webhooks.models import WebhookEvent

pytestmark = pytest.mark.django_db

DETECTED = "order.airline_initiated_change_detected"


def network_legs(start) -> dict[int, list[Leg]]:
    """The test network's flights (tests/offers/conftest.py), by flight number."""
    end = start + timedelta(days=60)
    a320 = {"aircraft": "320", "configuration": "C12Y138"}
    return {
        101: [Leg(101, "PVD", "CHS", time(7, 0), time(9, 5), start, end)],
        102: [Leg(102, "CHS", "PVD", time(10, 0), time(12, 5), start, end)],
        501: [
            Leg(501, "PVD", "CHS", time(13, 0), time(15, 5), start, end, **a320),
            Leg(501, "CHS", "TPA", time(15, 50), time(17, 20), start, end, sequence=2, **a320),
        ],
        701: [Leg(701, "PVD", "CLT", time(8, 0), time(9, 55), start, end)],
        702: [Leg(702, "CLT", "MSY", time(11, 10), time(12, 15), start, end, arrival_offset=CST)],
    }


def reload(tmp_path, start, **flights) -> None:
    """Load the test network again from SSIM, with flights changed: `f101=None` drops
    MX101, `f101={"departs": ..., "arrives": ...}` changes its (every) leg; the bookings
    on changed flights told before it returns (--wait)."""
    path = ssim_again(tmp_path, start, **flights)
    call_command("load_schedule", str(path), "--wait", stdout=StringIO())


def ssim_again(tmp_path, start, **flights) -> Path:
    """The test network as an SSIM file, with flights changed as `reload` takes them."""
    legs = network_legs(start)
    for name, changed in flights.items():
        number = int(name[1:])
        if changed is None:
            del legs[number]
        else:
            legs[number] = [replace(leg, **changed) for leg in legs[number]]
    path = tmp_path / f"again-{len(list(tmp_path.glob('again-*.ssim')))}.ssim"
    path.write_text(ssim_file([leg for ls in legs.values() for leg in ls]))
    return path


ROUTES = {101: ("PVD", "CHS"), 102: ("CHS", "PVD"), 501: ("PVD", "CHS")}


def booked(api, auth, day, *, flight, bundle="Nice", payment=None):
    """A booking of one adult on `flight` (PVD-CHS on MX501), paid by card."""
    origin, destination = ROUTES[flight]
    priced = priced_in(
        api, auth, day, bundle=bundle, flight=flight, origin=origin, destination=destination
    )
    response = book(api, auth, booking_body(priced, payment=payment or CARD))
    assert response.status_code == 201, response.content
    return response.json()["data"]


RETIMED_101 = {"departs": time(8, 30), "arrives": time(10, 35)}


def view_of(api, auth, order_id):
    response = api.get(f"/json/v1/orders/{order_id}", **auth)
    assert response.status_code == 200, response.content
    return response.json()["data"]


def answer(api, auth, order_id, change_type, change_id, **extra):
    body = {"changes": [{"type": change_type, "airlineChangeId": change_id, **extra}]}
    return api.patch(f"/json/v1/orders/{order_id}", body, format="json", **auth)


def local(text: str) -> datetime:
    return datetime.fromisoformat(text)


def amount(money) -> Decimal:
    return Decimal(str(money["amount"]))


def statuses(view) -> list[str]:
    """Each segment's operational state (ours); SPEC.md §2.2's statusCode is never there."""
    segments = [s for j in view["journeys"] for s in j["segments"]]
    assert not [s for s in segments if "statusCode" in s]
    return [s["operationalStatus"] for s in segments]


@pytest.fixture
def day(network):
    return network + timedelta(days=5)


@pytest.fixture
def hook(api, auth, loopback_allowed):  # noqa: F811
    response = register(api, auth, "http://127.0.0.1:9/hooks")
    assert response.status_code == 201, response.content


def test_a_reload_that_retimes_and_cancels_flights_records_a_change_per_order(
    api, auth, network, day, tmp_path, clock, hook
):
    retimed = booked(api, auth, day, flight=101)["order"]["orderId"]
    cancelled = booked(api, auth, day, flight=102, bundle="Nice")["order"]["orderId"]
    untouched = booked(api, auth, day, flight=501)["order"]["orderId"]
    before = view_of(api, auth, retimed)

    reload(tmp_path, network, f101=RETIMED_101, f102=None)

    view = view_of(api, auth, retimed)
    [change] = view["airlineInitiatedChanges"]
    assert change["status"] == "PENDING"
    assert change["reasons"] == ["RETIMED"]
    assert change["availableActions"] == [
        "AcceptAirlineChange",
        "ReshopItinerary",
        "CancelForAirlineChange",
    ]
    [was], [now] = change["removed"], change["added"]
    assert was["journeyId"] == now["journeyId"] == before["journeys"][0]["journeyId"]
    assert was["departureDateTime"] == before["journeys"][0]["departureDateTime"]
    moved = local(now["departureDateTime"]) - local(was["departureDateTime"])
    assert moved == timedelta(minutes=90)
    assert now["segments"][0]["operationalStatus"] == "CONFIRMED"
    assert statuses(view) == ["SCHEDULE_CHANGED"]
    assert view["journeys"][0]["operationalStatus"] == "SCHEDULE_CHANGED"
    # Until the seller answers, the order is as booked.
    assert view["journeys"][0]["departureDateTime"] == was["departureDateTime"]

    gone = view_of(api, auth, cancelled)
    [change] = gone["airlineInitiatedChanges"]
    assert change["reasons"] == ["CANCELLED"]
    assert change["added"] == []
    assert "AcceptAirlineChange" not in change["availableActions"]
    assert statuses(gone) == ["AIRLINE_CANCELLED"]
    assert gone["journeys"][0]["operationalStatus"] == "AIRLINE_CANCELLED"
    assert gone["order"]["statusCode"] == "CONFIRMED"
    # Unflown, never dropped: it stays in the seller's list.
    listed = api.get("/json/v1/orders", **auth).json()["data"]["orders"]
    assert cancelled in {o["orderId"] for o in listed}

    assert view_of(api, auth, untouched)["airlineInitiatedChanges"] == []
    assert statuses(view_of(api, auth, untouched)) == ["CONFIRMED"]
    events = WebhookEvent.objects.filter(type=DETECTED)
    assert sorted(e.order.order_id for e in events) == sorted([retimed, cancelled])
    for order_id in (retimed, cancelled):
        order = Order.objects.get(order_id=order_id)
        assert order.events.filter(kind="airline_change_detected").count() == 1


def test_a_later_reload_brings_the_pending_change_up_to_date(api, auth, network, day, tmp_path):
    order_id = booked(api, auth, day, flight=101)["order"]["orderId"]
    reload(tmp_path, network, f101=RETIMED_101)

    reload(tmp_path, network, f101=None)

    [change] = AirlineChange.objects.filter(order__order_id=order_id)
    assert (change.status, change.reasons, change.added) == ("PENDING", ["CANCELLED"], [])
    events = Order.objects.get(order_id=order_id).events
    assert events.filter(kind="airline_change_detected").count() == 2


def test_a_connection_squeezed_under_the_minimum_and_a_lost_cabin_are_changes(
    api, auth, network, day, tmp_path
):
    priced = price_offer(api, auth, day, destination="MSY", party=[{"type": "ADT"}])
    connection = book(api, auth, booking_body(priced, payment=CARD)).json()["data"]
    business = booked(api, auth, day, bundle="Nicest", flight=501)

    # 702 now leaves CLT 25 minutes after 701 lands; 501 flies an E175 (economy only).
    reload(
        tmp_path,
        network,
        f702={"departs": time(10, 20), "arrives": time(11, 25)},
        f501={"aircraft": "E75", "configuration": "Y76"},
    )

    squeezed = AirlineChange.objects.get(order__order_id=connection["order"]["orderId"])
    assert squeezed.reasons == ["RETIMED", "CONNECTION"]
    swapped = AirlineChange.objects.get(order__order_id=business["order"]["orderId"])
    assert swapped.reasons == ["EQUIPMENT"]


def test_accepting_takes_the_new_times_and_keeps_tickets_and_seats(
    api, auth, network, day, tmp_path, hook
):
    view = booked(api, auth, day, flight=101)
    order_id = view["order"]["orderId"]
    reload(tmp_path, network, f101=RETIMED_101)
    change = view_of(api, auth, order_id)["airlineInitiatedChanges"][0]
    on_101 = sold(101, day)

    response = answer(api, auth, order_id, "AcceptAirlineChange", change["id"])

    assert response.status_code == 200, response.content
    after = response.json()["data"]
    [done] = after["airlineInitiatedChanges"]
    assert (done["status"], done["availableActions"]) == ("ACCEPTED", [])
    assert "resolvedAt" in done
    assert after["journeys"][0]["departureDateTime"] == change["added"][0]["departureDateTime"]
    segment = after["journeys"][0]["segments"][0]
    assert segment["departureDateTime"] == change["added"][0]["segments"][0]["departureDateTime"]
    assert (segment["operationalStatus"], "statusCode" in segment) == ("CONFIRMED", False)
    # Revalidated, not reissued: the same tickets, open on the same segments.
    assert after["tickets"] == view["tickets"]
    assert sold(101, day) == on_101
    order = money_adds_up(order_id)
    assert (order.paid, order.total) == (
        Decimal(str(view["order"]["totals"]["charged"]["amount"])),
    ) * 2
    assert order.events.filter(kind="airline_change_accepted").exists()
    assert WebhookEvent.objects.filter(order=order, type="order.changed").exists()

    again = answer(api, auth, order_id, "AcceptAirlineChange", change["id"])
    error_of(again, 400, "ERR-4002", "changes.airlineChangeId")
    assert AirlineChange.objects.get(ref=change["id"]).status == "ACCEPTED"


def test_accepting_an_aircraft_without_the_booked_seat_refunds_the_seat(
    api, auth, network, day, tmp_path
):
    view = booked(api, auth, day, flight=501)
    order_id, pax = view["order"]["orderId"], view["pax"][0]["paxId"]
    seat_data = seats(api, auth, order_id).json()["data"]
    # Seat F: the A320 has it, the E175 (seats A-D) does not.
    unit, row = next(
        (u, r)
        for u in units(seat_data["legSeatMaps"][0])
        if u["availability"] == "Open" and u["designator"].endswith("F")
        for r in u.get("passengerPricing", [])
        if r["paxRefId"] == pax
    )
    bought = change(
        api, auth, order_id, {"changes": [seat_entry(seat_data, unit, row)], "payment": CARD}
    )
    assert bought.status_code == 200, bought.content
    [seat] = [s for s in bought.json()["data"]["services"] if s.get("attributes", {}).get("seat")]
    seat_total = amount(seat["totalPrice"]["total"])
    assert seat_total > 0
    paid = money_adds_up(order_id).paid
    reload(tmp_path, network, f501={"aircraft": "E75", "configuration": "Y76"})
    pending = view_of(api, auth, order_id)["airlineInitiatedChanges"][0]
    assert pending["reasons"] == ["EQUIPMENT"]

    response = answer(api, auth, order_id, "AcceptAirlineChange", pending["id"])

    assert response.status_code == 200, response.content
    after = response.json()["data"]
    [gone] = [s for s in after["services"] if s["serviceId"] == seat["serviceId"]]
    assert gone["statusCode"] == "CANCELLED"
    order = money_adds_up(order_id)
    assert order.paid == paid - seat_total
    [refund] = Refund.objects.filter(payment__order=order)
    assert refund.amount == seat_total


def test_a_cancelled_flight_cannot_be_accepted(api, auth, network, day, tmp_path):
    order_id = booked(api, auth, day, flight=102)["order"]["orderId"]
    reload(tmp_path, network, f102=None)
    change = view_of(api, auth, order_id)["airlineInitiatedChanges"][0]

    response = answer(api, auth, order_id, "AcceptAirlineChange", change["id"])

    error_of(response, 400, "ERR-4002", "changes.type")
    assert AirlineChange.objects.get(ref=change["id"]).status == "PENDING"


def test_cancelling_for_the_change_refunds_everything_whatever_the_bundle(
    api, auth, network, day, tmp_path
):
    # No Flex within a week of departure gives nothing back when the seller cancels
    # (test_cancel); when the airline cancelled the flight, it gives everything back.
    view = booked(api, auth, day, flight=102, bundle="No Flex")
    order_id = view["order"]["orderId"]
    total = amount(view["order"]["totalPrice"]["total"])
    reload(tmp_path, network, f102=None)
    change = view_of(api, auth, order_id)["airlineInitiatedChanges"][0]
    on_102 = sold(102, day)

    response = answer(api, auth, order_id, "CancelForAirlineChange", change["id"])

    assert response.status_code == 200, response.content
    after = response.json()["data"]
    assert after["order"]["statusCode"] == "CANCELLED"
    assert after["airlineInitiatedChanges"][0]["status"] == "CANCELLED"
    assert {t["statusCode"] for t in after["tickets"]} == {"REFUNDED"}
    assert statuses(after) == ["CANCELLED"]
    assert sold(102, day) == on_102 - 1
    order = money_adds_up(order_id)
    assert (order.paid, order.total, order.retained, order.credited) == (0, 0, 0, 0)
    [refund] = Refund.objects.filter(payment__order=order)
    assert (refund.amount, refund.state) == (total, Refund.State.SENT)
    assert GatewayEntry.objects.get(kind="REFUND", refund_reference=refund.ref).amount == total
    kinds = list(order.events.values_list("kind", flat=True))
    assert kinds[-4:] == [
        "journey_cancelled",
        "order_cancelled",
        "airline_change_cancelled",
        "payment_refunded",
    ]


def test_cancelling_for_the_change_may_give_airline_credit(api, auth, network, day, tmp_path):
    view = booked(api, auth, day, flight=101, bundle="Nicer")
    order_id = view["order"]["orderId"]
    total = amount(view["order"]["totalPrice"]["total"])
    reload(tmp_path, network, f101=RETIMED_101)
    change = view_of(api, auth, order_id)["airlineInitiatedChanges"][0]

    response = answer(
        api, auth, order_id, "CancelForAirlineChange", change["id"], refundTo="AirlineCredit"
    )

    assert response.status_code == 200, response.content
    after = response.json()["data"]
    [credit] = after["credits"]
    assert amount(credit["amount"]) == total
    assert {t["statusCode"] for t in after["tickets"]} == {"EXCHANGED"}
    order = money_adds_up(order_id)
    assert (order.status, order.credited) == ("CANCELLED", total)
    assert not Refund.objects.filter(payment__order=order).exists()


def test_a_hold_cancelled_for_the_change_voids_its_lines(api, auth, network, day, tmp_path):
    priced = price_offer(api, auth, day, party=[{"type": "ADT"}], flight=101)
    hold = book(api, auth, booking_body(priced, payment=HOLD)).json()["data"]
    order_id = hold["order"]["orderId"]
    reload(tmp_path, network, f101=RETIMED_101)
    change = view_of(api, auth, order_id)["airlineInitiatedChanges"][0]

    response = answer(api, auth, order_id, "CancelForAirlineChange", change["id"])

    assert response.status_code == 200, response.content
    order = money_adds_up(order_id)
    assert (order.status, order.paid, order.total) == ("CANCELLED", 0, 0)
    assert order.voided == amount(hold["order"]["totalPrice"]["total"])


def test_changing_to_another_flight_is_free_whatever_the_bundle(api, auth, network, day, tmp_path):
    # No Flex allows no changes (test_exchange); a flight the airline moved can be left
    # for another at no charge.
    view = booked(api, auth, day, flight=101, bundle="No Flex")
    order_id = view["order"]["orderId"]
    paid = amount(view["order"]["totals"]["charged"])
    old_tickets = {t["ticketNumber"] for t in view["tickets"]}
    reload(tmp_path, network, f101=RETIMED_101)
    change = view_of(api, auth, order_id)["airlineInitiatedChanges"][0]
    new_day = day + timedelta(days=1)

    offers = reshop(api, auth, order_id, itinerary(new_day))

    assert offers.status_code == 200, offers.content
    offer = offers.json()["data"]["offers"][0]
    assert offer["priceDifferential"]["differentialTypeCode"] == "EvenExchange"
    assert amount(offer["totalPrice"]["total"]) == paid
    quoted = quote(api, auth, order_id, offer)
    assert quoted.status_code == 200, quoted.content
    q = quoted.json()["data"]
    assert amount(q["priceDifferential"]["balanceDelta"]) == 0
    on_old, on_new = sold(101, day), sold(101, new_day)

    response = accept_reshop(api, auth, order_id, q["offer"])

    assert response.status_code == 200, response.content
    after = response.json()["data"]
    assert sorted(i["statusCode"] for i in after["order"]["items"]) == ["CANCELLED", "CONFIRMED"]
    assert after["airlineInitiatedChanges"][0]["status"] == "CHANGED"
    assert after["airlineInitiatedChanges"][0]["id"] == change["id"]
    assert statuses(after) == ["CONFIRMED", "EXCHANGED"]
    assert [j["operationalStatus"] for j in after["journeys"]] == ["CONFIRMED", "EXCHANGED"]
    # Priced at what was paid, the passengers named by the order's ids (issue 25 item 9).
    pax_ids = {p["paxId"] for p in q["pax"]}
    assert {i for r in q["offer"]["items"][0]["passengerPrices"] for i in r["paxRefIds"]} == (
        pax_ids
    )
    assert (sold(101, day), sold(101, new_day)) == (on_old - 1, on_new + 1)
    order = money_adds_up(order_id)
    assert (order.paid, order.total, order.retained) == (paid, paid, 0)
    coupons = {(t["ticketNumber"], t["statusCode"]) for t in after["tickets"]}
    assert {s for n, s in coupons if n in old_tickets} == {"EXCHANGED"}
    assert Coupon.objects.filter(ticket__order=order, status="OPEN").count() == 1
    assert order.events.filter(kind="airline_change_exchanged").exists()


def test_another_seller_a_read_only_key_and_an_unknown_change_are_refused(
    api, auth, network, day, tmp_path, partner_key, other_seller, read_only_key
):
    order_id = booked(api, auth, day, flight=101)["order"]["orderId"]
    reload(tmp_path, network, f101=RETIMED_101)
    change_id = view_of(api, auth, order_id)["airlineInitiatedChanges"][0]["id"]
    other = bearer(token_for(api, partner_key.raw, str(other_seller.pk)))
    reader = bearer(token_for(api, read_only_key.raw))

    error_of(answer(api, other, order_id, "AcceptAirlineChange", change_id), 404, "ERR-4000")
    error_of(answer(api, reader, order_id, "AcceptAirlineChange", change_id), 403, "ERR-8001")
    error_of(
        answer(api, auth, order_id, "AcceptAirlineChange", "AIC-00000000"),
        400,
        "ERR-4002",
        "changes.airlineChangeId",
    )
    missing = api.patch(
        f"/json/v1/orders/{order_id}",
        {"changes": [{"type": "CancelForAirlineChange"}]},
        format="json",
        **auth,
    )
    error_of(missing, 422, "ERR-1005")
    assert AirlineChange.objects.get(ref=change_id).status == "PENDING"


def test_the_booking_page_shows_the_change_to_support_staff(
    api, auth, client, network, day, tmp_path
):
    from tests.orders.test_admin_roles import staff_in

    view = booked(api, auth, day, flight=101)
    reload(tmp_path, network, f101=RETIMED_101)
    [change] = AirlineChange.objects.filter(order__order_id=view["order"]["orderId"])
    support = staff_in(client, "Support")

    page = support.get(f"/admin/orders/order/{Order.objects.get(pk=change.order_id).pk}/change/")

    assert page.status_code == 200
    text = page.content.decode()
    assert "airline-initiated changes" in text.lower()
    assert change.ref in text
    assert "RETIMED" in text
    assert f"MX101 PVD-CHS {day.isoformat()} 08:30" in text  # as it flies now, local
