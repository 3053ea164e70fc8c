"""Cancelling journeys and paid orders through the API: reshop CancelOrder and
DeleteOrderItems quote it, change order CancelJourney commits it (SPEC.md §4.10, §4.12;
DESIGN.md §7 bundle rules and the 24-hour rule, §11 "Cancelling a paid order")."""

from datetime import UTC, datetime, time, timedelta
from decimal import Decimal
from zoneinfo import ZoneInfo

import pytest

from airline.network.models import LegInventory
from orders.models import AirlineCredit, Coupon, Order, Refund
from tests.conftest import bearer, error_of, token_for
from tests.gateways import provider_refund
from tests.offers.conftest import search_body
from tests.orders.conftest import CARD, HOLD, book, booking_body
from tests.orders.test_exchange import accept, booked, itinerary, money_adds_up, quote, reshop

# Both gateways, the provider's books held against the orders' after each test (issue 26).
pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("card_gateway")]

ONE = [{"type": "ADT"}]
CANCEL_ORDER = {"type": "CancelOrder"}


def amount(money) -> Decimal:
    return Decimal(str(money["amount"]))


def departure_of_101(day) -> datetime:
    """Flight 101 leaves PVD at 07:00 local time (tests/offers/conftest.py)."""
    return datetime.combine(day, time(7, 0), tzinfo=ZoneInfo("America/New_York")).astimezone(UTC)


def round_trip(api, auth, out_day, back_day, *, bundle, payment=None):
    """A booked PVD-CHS-PVD round trip on flights 101 and 102 in `bundle` both ways."""
    found = api.post(
        "/json/v1/offers",
        search_body(("PVD", "CHS", out_day), ("CHS", "PVD", back_day), passengers=ONE),
        format="json",
        **auth,
    ).json()["data"]["offers"]
    selections = []
    for leg_index, flight in ((0, "MX101"), (1, "MX102")):
        offer = next(
            o
            for o in found
            if o["offerItems"][0]["legIndex"] == leg_index
            and o["offerItems"][0]["flight"]["flightNumbers"] == [flight]
            and o["offerItems"][0]["fare"]["bundleName"] == bundle
        )
        selections.append(
            {"offerId": offer["offerId"], "offerItemIds": [offer["offerItems"][0]["offerItemId"]]}
        )
    priced = api.post(
        "/json/v1/offers/price",
        {"selections": selections, "passengers": ONE},
        format="json",
        **auth,
    ).json()["data"]
    response = book(api, auth, booking_body(priced, payment=payment or CARD))
    assert response.status_code == 201, response.content
    return response.json()["data"]


def cancel(api, auth, order_id, *journey_refs, **extra):
    body = {"changes": [{"type": "CancelJourney", "journeyRef": ref} for ref in journey_refs]}
    return api.patch(f"/json/v1/orders/{order_id}", {**body, **extra}, format="json", **auth)


def journey_refs(view) -> list[str]:
    live = {
        ref
        for item in view["order"]["items"]
        if item["statusCode"] == "CONFIRMED"
        for ref in _journeys_of(view, item)
    }
    return [j["journeyId"] for j in view["journeys"] if j["journeyId"] in live]


def _journeys_of(view, item):
    segments = set(item["segmentRefIds"])
    return [
        j["journeyId"]
        for j in view["journeys"]
        if {s["segmentId"] for s in j["segments"]} & segments
    ]


def seats_sold(flight, day) -> int:
    return sum(
        LegInventory.objects.filter(
            leg__flight_number=flight, leg__flight_date=day, rank=0
        ).values_list("sold", flat=True)
    )


def quote_then_cancel_all(api, auth, view):
    """The reshop CancelOrder quote, then every live journey cancelled in one request;
    both answers' data."""
    order_id = view["order"]["orderId"]
    quoted = reshop(api, auth, order_id, CANCEL_ORDER)
    assert quoted.status_code == 200, quoted.content
    done = cancel(api, auth, order_id, *journey_refs(view))
    assert done.status_code == 200, done.content
    return quoted.json()["data"], done.json()["data"]


def test_a_refundable_bundle_is_refunded_to_the_card_as_quoted(api, auth, network, clock):
    day = network + timedelta(days=20)
    view = booked(api, auth, day, bundle="Nicest", flight=501)
    clock.advance(hours=25)  # past the 24-hour rule: the bundle's own terms
    total = amount(view["order"]["totalPrice"]["total"])
    before = seats_sold(501, day)

    quoted, after = quote_then_cancel_all(api, auth, view)

    assert quoted["offers"] == []
    assert quoted["cancellation"] == {
        "penaltyAmount": {"amount": 0.0, "currency": "USD"},
        "refundAmount": {"amount": float(total), "currency": "USD"},
        "creditAmount": {"amount": 0.0, "currency": "USD"},
        "isRefundable": True,
    }
    assert after["order"]["statusCode"] == "CANCELLED"
    assert {i["statusCode"] for i in after["order"]["items"]} == {"CANCELLED"}
    assert {t["statusCode"] for t in after["tickets"]} == {"REFUNDED"}
    assert after["payments"][0]["statusCode"] == "REFUNDED"
    assert seats_sold(501, day) == before - 1
    order = money_adds_up(view["order"]["orderId"])
    assert (order.paid, order.total, order.retained, order.credited) == (0, 0, 0, 0)
    [refund] = Refund.objects.filter(payment__order=order)
    assert (refund.amount, refund.state) == (total, Refund.State.SENT)
    assert provider_refund(refund) == total
    assert list(order.events.values_list("kind", flat=True))[-3:] == [
        "journey_cancelled",
        "order_cancelled",
        "payment_refunded",
    ]


@pytest.mark.parametrize("bundle", ["Nice", "Nicer"])
def test_a_credit_bundle_gives_the_full_value_as_airline_credit(api, auth, network, clock, bundle):
    day = network + timedelta(days=20)
    view = booked(api, auth, day, bundle=bundle)
    clock.advance(hours=25)
    total = amount(view["order"]["totalPrice"]["total"])

    quoted, after = quote_then_cancel_all(api, auth, view)

    assert amount(quoted["cancellation"]["creditAmount"]) == total
    assert amount(quoted["cancellation"]["refundAmount"]) == 0
    assert amount(quoted["cancellation"]["penaltyAmount"]) == 0
    assert quoted["cancellation"]["isRefundable"] is False
    [credit] = after["credits"]
    assert amount(credit["amount"]) == total
    assert credit["sourceOrderId"] == view["order"]["orderId"]
    assert {t["statusCode"] for t in after["tickets"]} == {"EXCHANGED"}
    order = money_adds_up(view["order"]["orderId"])
    assert order.status == "CANCELLED"
    assert order.credited == total
    assert not Refund.objects.filter(payment__order=order).exists()


def test_the_issuing_orders_view_shows_what_its_credit_still_holds(api, auth, network, clock):
    day = network + timedelta(days=20)
    two = [{"type": "ADT"}, {"type": "ADT"}]
    view = booked(api, auth, day, bundle="Nice", party=two)
    clock.advance(hours=25)
    order_id = view["order"]["orderId"]
    _, after = quote_then_cancel_all(api, auth, view)
    code = after["credits"][0]["creditCode"]
    issued = amount(after["credits"][0]["amount"])

    def remaining_shown():
        response = api.get(f"/json/v1/orders/{order_id}", **auth)
        assert response.status_code == 200, response.content
        [credit] = response.json()["data"]["credits"]
        return amount(credit["remaining"])

    assert remaining_shown() == issued  # rendered once and kept

    # Half the party's fare: part of the credit.
    spending = booked(
        api, auth, day, bundle="Nice", payment={"type": "AirlineCredit", "creditCode": code}
    )
    spent = amount(spending["order"]["totalPrice"]["total"])
    assert 0 < spent < issued
    held = AirlineCredit.objects.get(code=code).remaining
    assert held == issued - spent
    assert remaining_shown() == held

    # The rest of it, a card paying what the credit does not cover.
    card = {k: v for k, v in CARD.items() if k != "type"}
    booked(
        api,
        auth,
        day,
        bundle="Nice",
        party=two,
        payment={"type": "AirlineCredit", "creditCode": code, "card": card},
    )
    assert AirlineCredit.objects.get(code=code).remaining == 0
    assert remaining_shown() == 0
    # Unchanged since: the kept rendering, and still the database's.
    assert remaining_shown() == 0
    assert Order.objects.get(order_id=order_id).credited == issued


def test_no_flex_gives_credit_on_its_lead_time_scale_and_keeps_the_rest(api, auth, network, clock):
    day = network + timedelta(days=40)
    view = booked(api, auth, day, bundle="No Flex")
    clock.advance(hours=25)  # now 30 to 59 days before departure: 75% credit
    total = amount(view["order"]["totalPrice"]["total"])
    credit = (total * Decimal("0.75")).quantize(Decimal("0.01"))

    quoted, after = quote_then_cancel_all(api, auth, view)

    assert amount(quoted["cancellation"]["creditAmount"]) == credit
    assert amount(quoted["cancellation"]["penaltyAmount"]) == total - credit
    assert amount(after["credits"][0]["amount"]) == credit
    order = money_adds_up(view["order"]["orderId"])
    assert (order.credited, order.retained) == (credit, total - credit)


def test_no_flex_within_a_week_of_departure_gives_nothing_back(api, auth, network, clock):
    day = network + timedelta(days=5)
    view = booked(api, auth, day, bundle="No Flex")

    quoted, after = quote_then_cancel_all(api, auth, view)

    total = amount(view["order"]["totalPrice"]["total"])
    assert amount(quoted["cancellation"]["penaltyAmount"]) == total
    assert after["credits"] == []
    assert {t["statusCode"] for t in after["tickets"]} == {"VOID"}
    assert money_adds_up(view["order"]["orderId"]).retained == total


def book_at(api, auth, clock, at, day):
    """A No Flex booking on flight 101 of `day`, made at `at` (service time; the token
    was signed at real time, which is what PyJWT checks it against)."""
    clock.at = at
    return booked(api, auth, day, bundle="No Flex")


def test_the_24_hour_rule_at_its_edge_of_time_since_booking(api, partner_key, network, clock):
    day = network + timedelta(days=30)
    booked_at = clock.at
    auth = bearer(token_for(api, partner_key.raw))
    inside = book_at(api, auth, clock, booked_at, day)
    outside = book_at(api, auth, clock, booked_at, day)
    total = amount(inside["order"]["totalPrice"]["total"])

    clock.at = booked_at + timedelta(hours=24)  # the last moment of the 24 hours
    quoted = reshop(api, auth, inside["order"]["orderId"], CANCEL_ORDER).json()["data"]
    assert amount(quoted["cancellation"]["refundAmount"]) == total
    done = cancel(api, auth, inside["order"]["orderId"], *journey_refs(inside))
    assert done.status_code == 200, done.content
    assert money_adds_up(inside["order"]["orderId"]).paid == 0

    clock.at = booked_at + timedelta(hours=24, minutes=1)  # one minute too late
    quoted = reshop(api, auth, outside["order"]["orderId"], CANCEL_ORDER).json()["data"]
    assert amount(quoted["cancellation"]["refundAmount"]) == 0
    assert amount(quoted["cancellation"]["creditAmount"]) < total  # No Flex's scale


def test_the_24_hour_rule_at_its_edge_of_seven_days_before_departure(
    api, partner_key, network, clock
):
    day = network + timedelta(days=20)
    departure = departure_of_101(day)
    booked_at = departure - timedelta(days=7, hours=1)
    auth = bearer(token_for(api, partner_key.raw))
    exactly = book_at(api, auth, clock, booked_at, day)
    late = book_at(api, auth, clock, booked_at, day)
    total = amount(exactly["order"]["totalPrice"]["total"])

    clock.at = departure - timedelta(days=7)  # seven days before: still in
    quoted = reshop(api, auth, exactly["order"]["orderId"], CANCEL_ORDER).json()["data"]
    assert amount(quoted["cancellation"]["refundAmount"]) == total

    clock.at = departure - timedelta(days=7) + timedelta(minutes=1)  # less than seven days
    quoted = reshop(api, auth, late["order"]["orderId"], CANCEL_ORDER).json()["data"]
    assert amount(quoted["cancellation"]["refundAmount"]) == 0
    assert amount(quoted["cancellation"]["penaltyAmount"]) == total  # No Flex, < 7 days: 0%


def test_one_journey_of_a_round_trip_goes_and_the_order_stays(api, auth, network, clock):
    out_day, back_day = network + timedelta(days=20), network + timedelta(days=27)
    view = round_trip(api, auth, out_day, back_day, bundle="Nice")
    clock.advance(hours=25)
    order_id = view["order"]["orderId"]
    outbound, inbound = journey_refs(view)
    out_item = next(i for i in view["order"]["items"] if outbound in _journeys_of(view, i))
    quoted = reshop(
        api, auth, order_id, {"type": "DeleteOrderItems", "orderItemRefIds": [out_item["itemId"]]}
    ).json()["data"]
    before = seats_sold(101, out_day), seats_sold(102, back_day)

    response = cancel(api, auth, order_id, outbound)

    assert response.status_code == 200, response.content
    after = response.json()["data"]
    assert after["order"]["statusCode"] == "CONFIRMED"
    assert amount(quoted["cancellation"]["creditAmount"]) == amount(out_item["totalPrice"]["total"])
    assert amount(after["credits"][0]["amount"]) == amount(out_item["totalPrice"]["total"])
    statuses = {i["itemId"]: i["statusCode"] for i in after["order"]["items"]}
    assert statuses[out_item["itemId"]] == "CANCELLED"
    assert sorted(statuses.values()) == ["CANCELLED", "CONFIRMED"]
    assert (seats_sold(101, out_day), seats_sold(102, back_day)) == (before[0] - 1, before[1])
    order = money_adds_up(order_id)
    coupons = Coupon.objects.filter(ticket__order=order)
    assert coupons.get(segment__journey__ref=outbound).status == "EXCHANGED"
    assert coupons.get(segment__journey__ref=inbound).status == "OPEN"
    assert journey_refs(after) == [inbound]


def test_no_flex_is_cancelled_for_the_whole_reservation_only(api, auth, network, clock):
    view = round_trip(
        api, auth, network + timedelta(days=20), network + timedelta(days=27), bundle="No Flex"
    )
    clock.advance(hours=25)
    outbound, inbound = journey_refs(view)

    error_of(cancel(api, auth, view["order"]["orderId"], outbound), 400, "ERR-4002")

    both = cancel(api, auth, view["order"]["orderId"], outbound, inbound)
    assert both.status_code == 200, both.content
    assert both.json()["data"]["order"]["statusCode"] == "CANCELLED"


def test_a_hold_loses_a_journey_unpaid_and_its_balance_falls(api, auth, network, clock):
    out_day, back_day = network + timedelta(days=20), network + timedelta(days=27)
    view = round_trip(api, auth, out_day, back_day, bundle="Nice", payment=HOLD)
    order_id = view["order"]["orderId"]
    outbound, inbound = journey_refs(view)
    before = seats_sold(101, out_day)

    response = cancel(api, auth, order_id, outbound)

    assert response.status_code == 200, response.content
    after = response.json()["data"]
    assert after["order"]["statusCode"] == "ONHOLD"
    assert after["order"]["balanceDue"] == after["order"]["totalPrice"]["total"]
    assert seats_sold(101, out_day) == before - 1
    order = money_adds_up(order_id)
    assert order.voided > 0
    assert not AirlineCredit.objects.filter(source_order=order).exists()

    last = cancel(api, auth, order_id, inbound)
    assert last.json()["data"]["order"]["statusCode"] == "CANCELLED"
    order = money_adds_up(order_id)
    assert (order.total, order.paid) == (0, 0)


def test_cancel_journey_refusals(
    api, auth, network, clock, partner_key, other_seller, read_only_key
):
    day = network + timedelta(days=3)
    view = booked(api, auth, day, bundle="Nice")
    order_id = view["order"]["orderId"]
    [ref] = journey_refs(view)
    other = bearer(token_for(api, partner_key.raw, str(other_seller.pk)))
    reader = bearer(token_for(api, read_only_key.raw))

    error_of(cancel(api, auth, order_id, "JOU-NOPE"), 400, "ERR-4006", "changes.journeyRef")
    error_of(cancel(api, auth, order_id, ref, ref), 400, "ERR-4002", "changes.journeyRef")
    error_of(cancel(api, other, order_id, ref), 404, "ERR-4000")
    assert cancel(api, reader, order_id, ref).json()["error"]["code"] == "ERR-8001"
    assert reshop(api, other, order_id, CANCEL_ORDER).json()["error"]["code"] == "ERR-4000"
    error_of(
        reshop(api, auth, order_id, {"type": "DeleteOrderItems", "orderItemRefIds": ["OOI-X"]}),
        400,
        "ERR-4002",
        "instruction.orderItemRefIds",
    )

    clock.advance(days=5)  # the flight has left
    error_of(cancel(api, auth, order_id, ref), 400, "ERR-4002", "changes.journeyRef")
    error_of(reshop(api, auth, order_id, CANCEL_ORDER), 400, "ERR-4002", "instruction")
    assert Order.objects.get(order_id=order_id).status == "CONFIRMED"


def test_a_cancelled_order_takes_no_more_changes(api, auth, network, clock):
    view = booked(api, auth, network + timedelta(days=20), bundle="Nice")
    quote_then_cancel_all(api, auth, view)

    error_of(reshop(api, auth, view["order"]["orderId"], CANCEL_ORDER), 400, "ERR-4002")
    error_of(cancel(api, auth, view["order"]["orderId"], "JOU-X"), 400, "ERR-4002", "changes")


def test_support_sees_the_refund_credit_and_timeline(api, auth, network, clock, admin_client):
    from io import StringIO

    from django.core.management import call_command

    view = booked(api, auth, network + timedelta(days=20), bundle="Nice")
    clock.advance(hours=25)
    _, after = quote_then_cancel_all(api, auth, view)
    code = after["credits"][0]["creditCode"]
    locator = view["order"]["recordLocator"]

    out = StringIO()
    call_command("booking", locator, stdout=out)
    printed = out.getvalue()
    assert f"credit {code}" in printed
    assert "journey_cancelled" in printed
    assert "order_cancelled" in printed

    order = Order.objects.get(order_id=view["order"]["orderId"])
    page = admin_client.get(f"/admin/orders/order/{order.pk}/change/")
    assert page.status_code == 200
    assert code in page.content.decode()
    listed = admin_client.get(f"/admin/orders/airlinecredit/?q={code}")
    assert listed.status_code == 200
    assert locator in listed.content.decode()


def test_an_order_with_no_live_journey_has_nothing_to_cancel(api, auth, network, clock):
    from orders.models import OrderItem

    view = booked(api, auth, network + timedelta(days=20), bundle="Nice")
    # An imported or repaired booking can be left CONFIRMED with every item cancelled.
    OrderItem.objects.filter(order__order_id=view["order"]["orderId"]).update(status="CANCELLED")

    error_of(reshop(api, auth, view["order"]["orderId"], CANCEL_ORDER), 400, "ERR-4002")


def flown_outbound(api, auth, network, clock, *, bundle):
    """A paid round trip (outbound on day 20, return on day 27) whose outbound has left:
    the order view, its outbound and return journey ids."""
    out_day = network + timedelta(days=20)
    view = round_trip(api, auth, out_day, network + timedelta(days=27), bundle=bundle)
    clock.at = departure_of_101(out_day) + timedelta(hours=1)
    return (view, *journey_refs(view))


def test_after_a_departure_cancel_order_quotes_the_unflown_rest(api, auth, network, clock):
    view, outbound, inbound = flown_outbound(api, auth, network, clock, bundle="No Flex")
    order_id = view["order"]["orderId"]
    back_item = next(i for i in view["order"]["items"] if inbound in _journeys_of(view, i))

    quoted = reshop(api, auth, order_id, CANCEL_ORDER)

    assert quoted.status_code == 200, quoted.content
    cancellation = quoted.json()["data"]["cancellation"]
    back_value = amount(back_item["totalPrice"]["total"])
    given = amount(cancellation["creditAmount"]) + amount(cancellation["refundAmount"])
    assert given + amount(cancellation["penaltyAmount"]) == back_value
    # Committed as quoted: the return alone, the whole of what is left (No Flex takes
    # nothing less); the flown outbound stays on the order.
    done = cancel(api, auth, order_id, inbound)
    assert done.status_code == 200, done.content
    after = done.json()["data"]
    assert amount(sum_of(after["credits"])) == amount(cancellation["creditAmount"])
    assert after["order"]["statusCode"] == "CONFIRMED"
    assert journey_refs(after) == [outbound]
    order = money_adds_up(order_id)
    coupons = Coupon.objects.filter(ticket__order=order)
    assert coupons.get(segment__journey__ref=outbound).status == "OPEN"  # not cancelled
    error_of(cancel(api, auth, order_id, outbound), 400, "ERR-4002", "changes.journeyRef")


def sum_of(credits):
    return {"amount": float(sum((amount(c["amount"]) for c in credits), Decimal("0")))}


def test_cancel_order_with_every_journey_departed_is_refused(api, auth, network, clock):
    view, *_ = flown_outbound(api, auth, network, clock, bundle="Nice")
    clock.advance(days=8)  # the return has left too

    error_of(reshop(api, auth, view["order"]["orderId"], CANCEL_ORDER), 400, "ERR-4002")


def test_exchanging_the_return_leaves_the_flown_coupon_used(api, auth, network, clock):
    view, outbound, _inbound = flown_outbound(api, auth, network, clock, bundle="Nice")
    order_id = view["order"]["orderId"]
    back_day = network + timedelta(days=28)
    offers = reshop(api, auth, order_id, itinerary(back_day, "CHS", "PVD")).json()["data"]
    q = quote(api, auth, order_id, offers["offers"][0]).json()["data"]

    response = accept(api, auth, order_id, q["offer"], payment=CARD)

    assert response.status_code == 200, response.content
    after = response.json()["data"]
    on_outbound = [t for t in after["tickets"] if t["segmentRefId"] in segments_of(view, outbound)]
    # The one coupon of the flown segment: USED on the first ticket, never reissued.
    assert [t["statusCode"] for t in on_outbound] == ["USED"]
    new_journey = q["offer"]["items"][0]["journeyRefIds"][0]
    reissued = [t for t in after["tickets"] if t["statusCode"] == "OPEN"]
    assert [t["segmentRefId"] for t in reissued] == list(segments_of(after, new_journey))
    assert reissued[0]["couponNumber"] == 1
    assert reissued[0]["ticketNumber"] != on_outbound[0]["ticketNumber"]
    order = money_adds_up(order_id)
    assert not Coupon.objects.filter(
        ticket__order=order, status="OPEN", segment__departs_at__lte=clock.at
    ).exists()


def segments_of(view, journey_ref):
    [journey] = [j for j in view["journeys"] if j["journeyId"] == journey_ref]
    return {s["segmentId"]: s for s in journey["segments"]}
