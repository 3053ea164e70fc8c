"""What a seat map is drawn from: each flight leg's aircraft and the seats of its
configuration (worked out once per network version per process), and the seats the
orders of every seller hold on it. A seat map reads its legs and their seats taken in
one round trip."""

import threading
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from django.db import DEFAULT_DB_ALIAS

from airline.network import fleet
from airline.network.itineraries import network_version_served, on_network_change
from airline.network.models import AircraftType, FlightLeg, SeatConfiguration
from airline.network.services import cabin_specs
from airline.sql import statements_answered

# Which seats the orders of every seller hold: the orders app, built on this one, knows
# and registers the statement that reads them in OrdersConfig.ready
# (orders.reading.selectors.seats_held_statement), so that offers never import orders.
# Given flight leg ids, it gives the SQL and parameters of a SELECT answering (flight leg
# id, seat row, seat column) of each seat held on them.
SeatsStatement = Callable[[Sequence[int]], tuple[str, list]]
_seats_statements: list[SeatsStatement] = []


def seats_statement_register(statement: SeatsStatement) -> None:
    _seats_statements[:] = [statement]


def seats_taken(leg_ids: Sequence[int], *, using: str = DEFAULT_DB_ALIAS) -> dict[int, set[str]]:
    """Seats held on these flight-date legs, by any order of any seller: seat ("12C") by
    flight leg id, read from `using` (none when no orders app is installed)."""
    if not _seats_statements or not leg_ids:
        return {}
    [rows] = statements_answered([_seats_statements[0](leg_ids)], using=using)
    return _seats_by_leg(rows)


def _seats_by_leg(rows: Iterable[tuple[int, int, str]]) -> dict[int, set[str]]:
    taken: dict[int, set[str]] = {}
    for leg_id, row, column in rows:
        taken.setdefault(leg_id, set()).add(f"{row}{column}")
    return taken


@dataclass(frozen=True)
class FlightSeats:
    """A flight leg as its seat map shows it: its route, aircraft type and seats."""

    id: int
    origin: str
    destination: str
    equipment: str
    seats: tuple[fleet.SeatSpec, ...]


def legs_and_seats_taken(
    leg_ids: Iterable[int], *, using: str
) -> tuple[dict[int, FlightSeats], dict[int, set[str]]]:
    """These flight legs and the seats taken on them (seats_taken), read from `using` in
    one round trip."""
    ids = sorted(set(leg_ids))
    if not ids:
        return {}, {}
    reads = [_leg_statement(ids)]
    if _seats_statements:
        reads.append(_seats_statements[0](ids))
    rows, *held = statements_answered(reads, using=using)
    if len(rows) < len(ids) and using != DEFAULT_DB_ALIAS:
        # Flights the standby has not replayed yet (a schedule load a moment ago, which
        # the offer's index already shows): from the primary. No seat is held on them yet.
        found = {row[0] for row in rows}
        [more] = statements_answered(
            [_leg_statement(sorted(set(ids) - found))], using=DEFAULT_DB_ALIAS
        )
        rows += more
    legs = {
        leg_id: FlightSeats(
            leg_id, origin, destination, equipment, seats_of_configuration(configuration)
        )
        for leg_id, origin, destination, equipment, configuration in rows
    }
    return legs, _seats_by_leg(held[0] if held else [])


def _leg_statement(ids: Sequence[int]) -> tuple[str, list]:
    """The SELECT of (id, origin, destination, aircraft type code, seat configuration id)
    of these flight legs. Plain SQL, as leg_availability's: every seat map reads it, and
    the ORM's building of the query and its rows cost more than the database."""
    legs, types = FlightLeg._meta.db_table, AircraftType._meta.db_table
    return (
        "SELECT l.id, l.origin_id, l.destination_id, t.iata_code, l.configuration_id "  # noqa: S608
        f"FROM {legs} l JOIN {types} t ON t.id = l.aircraft_type_id "
        f"WHERE l.id IN ({', '.join(['%s'] * len(ids))})",
        list(ids),
    )


# Seats of each configuration, tagged with the network version this process's index had
# when they were read: good while the index stays at it. Every edit of a configuration,
# its cabins or blocked seats moves the version (network.models), and the index follows
# within the poller's interval on every worker of every node, which clears this.
_seat_cache: dict[int, tuple[int, tuple[fleet.SeatSpec, ...]]] = {}
_seat_cache_lock = threading.Lock()


def seats_of_configuration(configuration_id: int) -> tuple[fleet.SeatSpec, ...]:
    """Seats of a configuration, worked out once per network version per process: seat
    maps are read far more often than configurations change."""
    # The version is taken before the read: a layout read while the index moves on is
    # tagged with the older version and read again at the next call.
    version = network_version_served()
    cached = _seat_cache.get(configuration_id)
    if cached is not None and version is not None and cached[0] == version:
        return cached[1]
    configuration = SeatConfiguration.objects.prefetch_related("cabins").get(pk=configuration_id)
    seats = tuple(fleet.seats_of(cabin_specs(configuration), configuration.blocked_seats))
    if version is not None:
        with _seat_cache_lock:
            _seat_cache[configuration_id] = (version, seats)
    return seats


def forget_seat_layouts(version: int | None = None) -> None:
    """Drop every cached layout (called when this process's index changes version)."""
    with _seat_cache_lock:
        _seat_cache.clear()


on_network_change(forget_seat_layouts)
