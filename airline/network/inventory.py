"""Selling and releasing seats of a segment on a date (DESIGN.md §6).

A segment covers one or more legs; a sale takes seats on every leg or on none. A leg's
sale is a conditional UPDATE over the nested class rows (one UPDATE covers all the legs
of a booking): it adds to `sold` of the sold class and every class above it, only where
`sold + seats <= authorized`. If fewer rows
than expected qualify, some class is full and the whole sale is rolled back. The
condition is re-checked by the database against committed rows, so correctness does not
depend on any lock; every sale still locks its legs in id order first so that two sales
over the same legs queue instead of deadlocking.
"""

import time
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from contextlib import nullcontext
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Protocol

from django.db import connection, transaction

from airline.network.models import AircraftType, BookingClass, FlightLeg, LegInventory
from airline.sql import lock_wait_bounded, statement_cursor


class SoldOut(Exception):
    """Not enough seats in that booking class on some leg of the segment."""

    def __init__(self, leg_id: int, rbd: str) -> None:
        super().__init__(f"booking class {rbd} has too few seats left on leg {leg_id}")
        self.leg_id = leg_id
        self.rbd = rbd


@dataclass(frozen=True)
class SeatChange:
    """Seats of one booking class on one segment's legs: taken (> 0) or given back (< 0)."""

    leg_ids: tuple[int, ...]
    rbd: str
    seats: int


@dataclass(frozen=True)
class LockedLeg:
    """A flight-date leg as it stands, read under its row lock: what a sale on it must
    re-check, since the schedule a worker shopped from may be a second old."""

    id: int
    is_cancelled: bool
    departs_at: datetime  # UTC
    arrives_at: datetime  # UTC
    aircraft_type: str  # IATA code
    # The seat configuration flown now: a seat sold on the leg is re-checked against it
    # (orders.booking.ancillaries.check_seats_still_sellable), so an aircraft swapped
    # since the seat map was shown is seen.
    configuration_id: int


LegCheck = Callable[[Mapping[int, LockedLeg]], None]


class ShownLeg(Protocol):
    """A flight-date leg as a worker's schedule index shows it (itineraries.DatedLeg)."""

    @property
    def id(self) -> int: ...
    @property
    def departs_at(self) -> datetime: ...
    @property
    def arrives_at(self) -> datetime: ...
    @property
    def aircraft_type(self) -> str: ...


def legs_as_shown(
    shown: Iterable[ShownLeg], *, refuse: Callable[[ShownLeg, str], Exception]
) -> LegCheck:
    """A check (for inventory_apply) that the legs a write takes from the worker's index,
    and whose times and aircraft it writes into the order, are the legs as they stand
    under their locks: operating, at those times, on that aircraft type. The index may
    be older than the database (a worker forked from a master that read the schedule
    before a load, or one that has not patched yet); the locked rows are not. A leg that
    differs is refused with `refuse(leg, what)`, never written at a time its flight no
    longer has."""
    legs = {leg.id: leg for leg in shown}

    def check(locked: Mapping[int, LockedLeg]) -> None:
        for leg_id, leg in legs.items():
            now = locked.get(leg_id)
            if now is None or now.is_cancelled:
                raise refuse(leg, "no longer operates")
            if (now.departs_at, now.arrives_at, now.aircraft_type) != (
                leg.departs_at,
                leg.arrives_at,
                leg.aircraft_type,
            ):
                raise refuse(leg, "has changed since it was shown")

    return check


def checks_all(*checks: LegCheck | None) -> LegCheck:
    """One LegCheck that runs each of `checks` in turn (None skipped)."""

    def check(locked: Mapping[int, LockedLeg]) -> None:
        for each in checks:
            if each is not None:
                each(locked)

    return check


# What a sale cut short waiting for its legs is told (LockBusy, 503 ERR-9000).
LEGS_BUSY = "A flight of this request is being updated by the airline"


def legs_lock(leg_ids: Iterable[int], *, bounded: bool = False) -> dict[int, LockedLeg]:
    """Lock these flight-date legs (inside the caller's transaction), in ascending id
    order, and read them as they stand. A schedule load that cancels or retimes a leg
    updates its row, so it waits for the sale holding the lock, or the sale waits for it
    and then reads what it wrote: a sale never commits on a leg it did not check. A leg
    missing from the answer no longer exists.

    `bounded` (a sale, a change of an order: a client waits): the wait for the locks is
    at most LOCK_WAIT_TIMEOUT_MS, then LockBusy (503 ERR-9000) and the caller's
    transaction is spoiled; a load may hold legs for many seconds. Unbounded (the load
    itself): it waits for the sales, which hold their legs for milliseconds.

    Plain SQL, as the ORM would write it: every booking sends it, and the ORM's own work
    on it cost several times the database's."""
    ids = sorted(set(leg_ids))
    if not ids:
        return {}
    legs, types = FlightLeg._meta.db_table, AircraftType._meta.db_table
    # SQLite (the embedded default) has no row locks: its writers are serialized whole,
    # as the ORM's select_for_update is a no-op there.
    lock = " FOR UPDATE OF l" if connection.features.has_select_for_update_of else ""
    with lock_wait_bounded(LEGS_BUSY) if bounded else nullcontext(), statement_cursor() as cursor:
        cursor.execute(
            f'SELECT l."id", l."is_cancelled", l."departs_at", l."arrives_at", t."iata_code", '  # noqa: S608
            'l."configuration_id" '
            f'FROM "{legs}" l INNER JOIN "{types}" t ON l."aircraft_type_id" = t."id" '
            f'WHERE l."id" IN ({", ".join(["%s"] * len(ids))}) ORDER BY l."id"{lock}',
            ids,
        )
        rows = cursor.fetchall()
    return {
        leg_id: LockedLeg(leg_id, cancelled, _utc(departs), _utc(arrives), *rest)
        for leg_id, cancelled, departs, arrives, *rest in rows
    }


def _utc(moment: datetime) -> datetime:
    """A time read by plain SQL, aware: SQLite's driver gives the stored UTC time naive
    (PostgreSQL's gives it aware), and a naive time compares unequal to every aware one."""
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


def inventory_sell(*, leg_ids: Sequence[int], rbd: str, seats: int) -> None:
    """Take `seats` seats in class `rbd` on every leg, or raise SoldOut and take none
    (inside a caller's transaction too, which may go on)."""
    with transaction.atomic():
        inventory_apply([SeatChange(tuple(leg_ids), rbd, seats)])


def inventory_apply(changes: Sequence[SeatChange], *, check: LegCheck | None = None) -> None:
    """Apply every change (a whole booking's segments) or none: SoldOut when a class on
    some leg has too few seats. `check` is handed the legs as they stand under their
    locks before any seat is taken, and raises to refuse the sale (the legs a booking was
    priced on were cancelled or moved since). The wait for those locks is bounded
    (legs_lock: LockBusy when a schedule change holds them too long). Inside a caller's
    transaction it opens no savepoint (two round trips a booking): an error marks that
    transaction for rollback, and the caller's whole write is undone with the changes
    made so far."""
    changes = [c for c in changes if c.seats]
    if not changes:
        return
    every_leg = sorted({leg_id for c in changes for leg_id in c.leg_ids})
    with transaction.atomic(savepoint=False):
        # Lock the legs, in ascending id order over the whole booking, before touching
        # their class rows. Every sale and release does, so two bookings that share legs
        # queue instead of deadlocking: one UPDATE changes several class rows, and two
        # such UPDATEs can meet those rows in different physical orders (row versions
        # move), which deadlocks when the transaction is still open behind them, as a
        # booking's is while its order is written.
        # One bound over the legs' locks and those `check` takes (a seat sale's seat maps).
        with lock_wait_bounded(LEGS_BUSY):
            locked = legs_lock(every_leg, bounded=True)
            if check is not None:
                check(locked)
        _change_legs(
            [
                (leg_id, change.rbd, change.seats)
                for change in changes
                for leg_id in sorted(set(change.leg_ids))
            ]
        )


def _change_legs(sales: Sequence[tuple[int, str, int]]) -> None:
    """Each (leg, booking class, seats) applied to the leg's class rows, in order. One
    UPDATE for them all when every leg is a different one and the seats are the same
    (a booking's segments: one round trip, not one a leg); else one UPDATE a leg.

    An UPDATE adds to `sold` of the class and every class above it (rank <= its rank),
    only on rows where the seats fit (or, giving seats back, were sold): a leg whose
    rows did not all qualify has a class too full (SoldOut), or too empty to release."""
    table = LegInventory._meta.db_table
    if len({leg_id for leg_id, _rbd, _seats in sales}) < len(sales) or (
        len({seats for _leg, _rbd, seats in sales}) > 1
    ):
        for sale in sales:
            _change_legs([sale])
        return
    seats = sales[0][2]
    positions = [(leg_id, rbd, *booking_class_position(rbd)) for leg_id, rbd, _s in sales]
    where = " OR ".join(['("leg_id" = %s AND "cabin" = %s AND "rank" <= %s)'] * len(sales))
    room = '"sold" <= "authorized" - %s' if seats > 0 else '"sold" >= %s'
    with statement_cursor() as cursor:
        cursor.execute(
            f'UPDATE "{table}" SET "sold" = "sold" + %s WHERE ({where}) AND {room} '  # noqa: S608
            'RETURNING "leg_id"',
            [
                seats,
                *(v for leg_id, _rbd, cabin, rank in positions for v in (leg_id, cabin, rank)),
                abs(seats),
            ],
        )
        changed = Counter(leg_id for (leg_id,) in cursor.fetchall())
    for leg_id, rbd, _cabin, rank in positions:
        if changed[leg_id] != rank + 1:
            if seats < 0:
                raise ValueError(
                    f"cannot release {-seats} seats of {rbd} on leg {leg_id}: not sold"
                )
            raise SoldOut(leg_id, rbd)


_ladder_cache: tuple[float, dict[str, tuple[str, int]]] = (0.0, {})
LADDER_CACHE_SECONDS = 60


def booking_class_position(rbd: str) -> tuple[str, int]:
    """(cabin, rank) of a booking class. Cached per process for a minute: the ladder is
    reference data that changes rarely, and a sale should not pay a query for it."""
    global _ladder_cache
    loaded_at, ladder = _ladder_cache
    if rbd not in ladder or time.monotonic() - loaded_at > LADDER_CACHE_SECONDS:
        ladder = {b.rbd: (b.cabin, b.rank) for b in BookingClass.objects.all()}
        _ladder_cache = (time.monotonic(), ladder)
    if rbd not in ladder:
        raise ValueError(f"unknown booking class {rbd!r}")
    return ladder[rbd]


def leg_availability(leg_ids: Iterable[int]) -> dict[int, dict[str, dict[str, int]]]:
    """Seats sellable now on each leg, per cabin and booking class (none on a leg that no
    longer operates): one query for a whole search. A class's figure is the tightest
    nested limit at or above it.

    Plain SQL: this is the hottest query of shopping, and the ORM's own work cost more
    than the database's (0.9 ms against 0.3 ms for a busy search's 20 legs)."""
    ids = sorted(set(leg_ids))
    if not ids:
        return {}
    # Only legs that still operate: the worker's index may be a few seconds behind a
    # schedule load, and a leg it still shows may have been deleted (no rows left) or
    # cancelled (rows kept for its bookings); either way it has no seats to offer.
    # The nested limit is a running minimum down each cabin's ladder, worked out by the
    # database (a window over the rows it sorts anyway) rather than a Python call a row.
    inventory, legs = LegInventory._meta.db_table, FlightLeg._meta.db_table
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT i.leg_id, i.cabin, i.rbd, min(i.authorized - i.sold) OVER ("  # noqa: S608
            "PARTITION BY i.leg_id, i.cabin ORDER BY i.rank "
            "ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) "
            f"FROM {inventory} i JOIN {legs} l ON l.id = i.leg_id AND NOT l.is_cancelled "
            f"WHERE i.leg_id IN ({', '.join(['%s'] * len(ids))}) "
            "ORDER BY i.leg_id, i.cabin, i.rank",
            ids,
        )
        rows = cursor.fetchall()
    result: dict[int, dict[str, dict[str, int]]] = {}
    at, classes = None, {}
    for leg_id, cabin, rbd, room in rows:
        if at != (leg_id, cabin):
            at = (leg_id, cabin)
            classes = result.setdefault(leg_id, {})[cabin] = {}
        classes[rbd] = room
    return result


def segment_availability(
    per_leg: dict[int, dict[str, dict[str, int]]], leg_ids: Sequence[int], cabin: str
) -> dict[str, int]:
    """A segment's seats per class of `cabin`: a seat must be free on every leg, so the
    smallest figure over its legs; empty when some leg lacks the cabin. A one-leg
    segment's figures are its leg's own (the same dict: read, never written)."""
    if len(leg_ids) == 1:
        return per_leg.get(leg_ids[0], {}).get(cabin) or {}
    classes = [per_leg.get(leg_id, {}).get(cabin) for leg_id in leg_ids]
    if not classes or any(c is None for c in classes):
        return {}
    return {rbd: min(c.get(rbd, 0) for c in classes) for rbd in classes[0]}


def availability(*, leg_ids: Sequence[int], cabin: str) -> dict[str, int]:
    """Seats sellable now per booking class of `cabin` on a segment over these legs."""
    return segment_availability(leg_availability(leg_ids), leg_ids, cabin)
