"""What a booking shows and sells follows the aircraft and its seat configuration as they
stand (issue 24 items 3-4): a seat blocked after the seat map was shown is refused under
the booking's locks, whatever this worker's layout cache still says; an order view
cached before an aircraft swap is not served after it (JSON and NDC)."""

from datetime import timedelta

import pytest

from airline.network.models import FlightLeg, SeatConfiguration
from offers.seating import seats_of_configuration
from orders.models import AirlineChange, Order, Service
from tests.conftest import error_of
from tests.ndc.conftest import NS, post, xml_of
from tests.ndc.test_orders import VIEW, retrieve_request
from tests.orders.conftest import book, booking_body
from tests.orders.test_airline_changes import booked, reload
from tests.orders.test_first_booking_ancillaries import offer_ancillaries, seat_for, sold
from tests.orders.test_order_ancillaries import change, open_seat, seat_entry, seats

pytestmark = pytest.mark.django_db


def block_behind_the_cache(leg: FlightLeg, designator: str) -> None:
    """Block a seat in the database only (no signal, no version bump): this worker's
    per-process layout cache and schedule index keep the old layout, as on a node that
    has not caught up with a block saved on another."""
    SeatConfiguration.objects.filter(pk=leg.configuration_id).update(blocked_seats=[designator])
    [cached] = [
        s for s in seats_of_configuration(leg.configuration_id) if s.designator == designator
    ]
    assert not cached.blocked  # the check before the lock would sell it


def first_leg(travel_day) -> FlightLeg:
    return FlightLeg.objects.get(flight_number=101, flight_date=travel_day)


def test_a_seat_blocked_after_the_seat_map_is_refused_at_booking(api, auth, priced, travel_day):
    seat_data = offer_ancillaries(api, auth, priced, "seats")
    unit, row = open_seat(seat_data["legSeatMaps"][0], "ADT-1")
    block_behind_the_cache(first_leg(travel_day), unit["designator"])
    before = sold()

    response = book(api, auth, booking_body(priced, ancillaries=[seat_for(seat_data, unit, row)]))

    error = error_of(response, 400, "ERR-4001", "ancillaries")
    assert f"Seat {unit['designator']} cannot be sold on this flight" in error["description"]
    assert not Order.objects.exists()
    assert sold() == before  # the whole booking rolled back, flights too


def test_a_seat_blocked_after_the_seat_map_is_refused_at_accept_offer(
    api, auth, priced, travel_day
):
    hold = book(api, auth, booking_body(priced)).json()["data"]
    order_id = hold["order"]["orderId"]
    seat_data = seats(api, auth, order_id).json()["data"]
    unit, row = open_seat(seat_data["legSeatMaps"][0], hold["pax"][0]["paxId"])
    block_behind_the_cache(first_leg(travel_day), unit["designator"])
    version = Order.objects.get(order_id=order_id).version

    response = change(api, auth, order_id, {"changes": [seat_entry(seat_data, unit, row)]})

    error = error_of(response, 400, "ERR-4002", "changes")
    assert f"Seat {unit['designator']} cannot be sold on this flight" in error["description"]
    assert not Service.objects.filter(order__order_id=order_id, seat_row__isnull=False).exists()
    assert Order.objects.get(order_id=order_id).version == version


def test_a_seat_not_blocked_still_sells_under_the_lock(api, auth, priced, travel_day):
    seat_data = offer_ancillaries(api, auth, priced, "seats")
    unit, row = open_seat(seat_data["legSeatMaps"][0], "ADT-1")
    other = f"{int(unit['designator'][:-1]) + 1}{unit['designator'][-1]}"
    block_behind_the_cache(first_leg(travel_day), other)

    response = book(api, auth, booking_body(priced, ancillaries=[seat_for(seat_data, unit, row)]))

    assert response.status_code == 201, response.content
    seat = Service.objects.get(seat_row__isnull=False)
    assert f"{seat.seat_row}{seat.seat_column}" == unit["designator"]


# --- the order view follows the aircraft -------------------------------------------------


def aircraft_in_json(api, auth, order_id) -> list[str]:
    response = api.get(f"/json/v1/orders/{order_id}", **auth)
    assert response.status_code == 200, response.content
    view = response.json()["data"]
    return [
        leg["aircraftTypeCode"]
        for j in view["journeys"]
        for s in j["segments"]
        for leg in s["legs"]
    ]


def aircraft_in_ndc(api, auth, order_id) -> list[str]:
    document = xml_of(post(api, "OrderRetrieve", retrieve_request(order_id), auth), 200, VIEW)
    return [e.text for e in document.iterfind(".//c:IATA_AircraftType/c:IATA_AircraftTypeCode", NS)]


def test_an_aircraft_swap_that_changes_nothing_booked_is_shown_on_retrieve(
    api, auth, network, tmp_path, clock
):
    day = network + timedelta(days=5)
    order_id = booked(api, auth, day, flight=501, bundle="Nice")["order"]["orderId"]
    assert aircraft_in_json(api, auth, order_id) == ["320"]  # rendered and cached
    assert aircraft_in_ndc(api, auth, order_id) == ["320"]

    reload(tmp_path, network, f501={"aircraft": "E75", "configuration": "Y76"})

    # Economy is on the E75 and no seat was held: no airline change, the order's own
    # version unchanged; only the schedule's moved.
    assert not AirlineChange.objects.exists()
    assert aircraft_in_json(api, auth, order_id) == ["E75"]
    assert aircraft_in_ndc(api, auth, order_id) == ["E75"]
