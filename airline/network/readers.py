"""What the network's back-office pages read of the bookings on its legs: who flies a
flight-date leg (the flight-date page) and which bookings hold seats on legs a schedule
load changes (its preview).

Bookings belong to the orders app, which is built on this one: it registers its readers
here in OrdersConfig.ready (orders.leg_bookings), so that the network never imports
orders (architecture.md "Layers"). Without an orders app there are no bookings.
"""

from collections.abc import Callable, Sequence
from dataclasses import dataclass

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

_readers: dict[str, Callable] = {}


def readers_register(*, bookings: BookingsReader, travellers: TravellersReader) -> None:
    _readers.update(bookings=bookings, travellers=travellers)


def bookings_on_legs(leg_ids: Sequence[int]) -> list[tuple[int, int, str, str]]:
    read = _readers.get("bookings")
    return read(leg_ids) if read is not None else []


def travellers_on_leg(leg: FlightLeg) -> list[Traveller]:
    read = _readers.get("travellers")
    return read(leg) if read is not None else []
