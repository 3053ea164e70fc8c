"""What is sold is re-checked under the leg locks (issue 14 item 3): a schedule load that
cancels or retimes a priced flight, committed while a worker still shops from its older
in-memory schedule, makes the booking ERR-4001 with nothing written — the worker's index
may be a second old, the locked rows are not."""

from datetime import time, timedelta
from io import StringIO

import pytest
from django.core.management import call_command

from airline.network.itineraries import network_index
from airline.network.models import FlightLeg, LegInventory
from orders.models import Order, PaymentIntent
from tests.conftest import error_of
from tests.network.ssim_builder import Leg, ssim_file
from tests.orders.conftest import CARD, HOLD, book, booking_body, price_offer
from tests.orders.test_order_ancillaries import change, open_seat, seats

pytestmark = pytest.mark.django_db


def reload_schedule(tmp_path, start, flight_101: dict | None) -> None:
    """The test network's PVD-CHS-PVD flights again, MX101 as given (None: dropped)."""
    end = start + timedelta(days=60)
    legs = [Leg(102, "CHS", "PVD", time(10, 0), time(12, 5), start, end)]
    if flight_101 is not None:
        legs.append(Leg(101, "PVD", "CHS", start=start, end=end, **flight_101))
    (tmp_path / "again.ssim").write_text(ssim_file(legs))
    call_command("load_schedule", str(tmp_path / "again.ssim"), "--wait", stdout=StringIO())


SAME_101 = {"departs": time(7, 0), "arrives": time(9, 5)}


@pytest.fixture
def stale_index(monkeypatch):
    """This worker keeps shopping from the schedule it had before the load."""

    def freeze():
        index = network_index()
        monkeypatch.setattr("orders.booking.create.network_index", lambda **_: index)

    return freeze


def state():
    return (
        Order.objects.count(),
        PaymentIntent.objects.count(),
        sorted(LegInventory.objects.values_list("leg_id", "rbd", "sold")),
    )


@pytest.mark.parametrize("payment", [HOLD, CARD], ids=["hold", "card"])
@pytest.mark.parametrize(
    "new_101",
    [
        {**SAME_101, "departs": time(8, 30), "arrives": time(10, 35)},
        {**SAME_101, "arrives": time(9, 45)},
        {**SAME_101, "aircraft": "320", "configuration": "C12Y138"},
        None,
    ],
    ids=["retimed", "arrives-later", "new-aircraft", "dropped"],
)
def test_a_flight_changed_since_pricing_is_not_booked(
    api, auth, network, travel_day, tmp_path, stale_index, new_101, payment
):
    priced = price_offer(api, auth, travel_day, flight=101)
    # Another booking on the flight, so that a dropped MX101 is kept, cancelled, rather
    # than deleted: both must refuse.
    assert book(api, auth, booking_body(price_offer(api, auth, travel_day))).status_code == 201
    stale_index()
    reload_schedule(tmp_path, network, new_101)
    before = state()

    response = book(api, auth, booking_body(priced, payment=payment))

    error_of(response, 400, "ERR-4001", "offerId")
    assert state() == before


def test_a_dropped_flight_without_sales_is_gone_and_not_booked(
    api, auth, network, travel_day, tmp_path, stale_index
):
    priced = price_offer(api, auth, travel_day, flight=101)
    stale_index()
    reload_schedule(tmp_path, network, None)
    assert not FlightLeg.objects.filter(flight_number=101).exists()

    error_of(book(api, auth, booking_body(priced)), 400, "ERR-4001", "offerId")
    assert not Order.objects.exists()


def test_an_unchanged_reload_still_books(api, auth, network, travel_day, tmp_path, stale_index):
    priced = price_offer(api, auth, travel_day, flight=101)
    stale_index()
    reload_schedule(tmp_path, network, SAME_101)

    assert book(api, auth, booking_body(priced)).status_code == 201


def test_no_seat_is_sold_on_a_flight_cancelled_since_the_seat_map(
    api, auth, network, travel_day, tmp_path
):
    hold = book(api, auth, booking_body(price_offer(api, auth, travel_day))).json()["data"]
    order_id = hold["order"]["orderId"]
    seat_data = seats(api, auth, order_id).json()["data"]
    unit, row = open_seat(seat_data["legSeatMaps"][0], hold["pax"][0]["paxId"])
    reload_schedule(tmp_path, network, None)  # the hold's sales keep it, cancelled
    entry = {
        "type": "AcceptOffer",
        "offerId": seat_data["offerId"],
        "offerItemId": row["offerItemId"],
        "passengerIds": [row["paxRefId"]],
        "seat": {"row": int(unit["designator"][:-1]), "column": unit["designator"][-1]},
    }

    error_of(change(api, auth, order_id, {"changes": [entry]}), 400, "ERR-4002", "changes")
    assert not Order.objects.get(order_id=order_id).services.exists()
