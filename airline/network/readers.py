"""What the network's back-office pages read of the bookings on its legs: who flies a
flight-date leg (the flight-date page), which bookings hold seats on legs a schedule
load changes (its preview), and the seats on hold and ticketed per leg (the flight-date
list's load columns).

Bookings belong to the orders app, which is built on this one: it registers its readers
here in OrdersConfig.ready (orders.reading.leg_bookings), so that the network never imports
orders (architecture.md "Layers"). Without an orders app there are no bookings.
"""

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal

from django.db.models import QuerySet

from airline.network.models import FlightLeg


@dataclass(frozen=True)
class Traveller:
    """A passenger booked on a flight-date leg, as its page lists them."""

    order_pk: int
    record_locator: str
    status: str
    name: str  # SURNAME/Given
    ptc: str
    cabin: str
    rbd: str
    seat: str  # "12A", or "" without a seat
    ticket: str  # e-ticket number, or "" while unticketed


# (leg pk, order pk, record locator, order status) of each booking holding seats on one
# of the legs, ordered by locator then leg.
BookingsReader = Callable[[Sequence[int]], list[tuple[int, int, str, str]]]
# The travellers booked on a leg, by surname and given name: the segments on the leg
# with their orders, their passengers, their seats, their tickets (four queries).
TravellersReader = Callable[[FlightLeg], list[Traveller]]
# The booked legs still taking seats, of bookings on unpaid hold ("held") or ticketed
# ("ticketed"): a queryset annotated with each row's flight-date leg pk (`booked_leg`)
# and its seats (`booked_seats`), which the flight-date list sums per leg inside its own
# query (a subquery, so the page stays one query however many legs it shows).
BookedState = Literal["held", "ticketed"]
SeatRowsReader = Callable[[BookedState], QuerySet]

_readers: dict[str, Callable] = {}


def readers_register(
    *, bookings: BookingsReader, travellers: TravellersReader, seat_rows: SeatRowsReader
) -> None:
    _readers.update(bookings=bookings, travellers=travellers, seat_rows=seat_rows)


def bookings_on_legs(leg_ids: Sequence[int]) -> list[tuple[int, int, str, str]]:
    read = _readers.get("bookings")
    return read(leg_ids) if read is not None else []


def travellers_on_leg(leg: FlightLeg) -> list[Traveller]:
    read = _readers.get("travellers")
    return read(leg) if read is not None else []


def booked_seat_rows(state: BookedState) -> QuerySet | None:
    """The rows of SeatRowsReader, or None without an orders app (no seat is booked)."""
    read = _readers.get("seat_rows")
    return read(state) if read is not None else None
