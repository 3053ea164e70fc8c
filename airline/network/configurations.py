"""Seat configurations as they stand, read under their row locks, and the back office's
edit of one (blocked seats, cabins) with the bookings it takes seats from
(docs/operators/back-office.md, docs/partners/airline-changes.md).

The lock that orders a seat sale and a configuration edit is the configuration row's:
- a sale of a seat (create order with `ancillaries`, AcceptOffer, a seat moved by an
  exchange) reads the configurations of its legs `FOR SHARE` once the legs are locked
  (`configuration_seats`) and refuses a seat that is blocked or not there;
- an edit locks the row `FOR UPDATE` before it writes.
The two conflict: a sale that read the row first makes the edit wait until it commits,
and the edit then finds its seat among those it takes away; an edit that locked first
makes the sale wait, and the sale then reads the block. No seat is sold past a block.
"""

import functools
from collections.abc import Callable, Iterable, Mapping, Sequence
from contextlib import nullcontext
from dataclasses import dataclass
from datetime import datetime
from types import MappingProxyType
from typing import Literal, Protocol

from django.db import OperationalError, connection, transaction

from airline.network import fleet
from airline.network.models import CabinLayout, SeatConfiguration
from airline.sql import lock_wait_bounded, statements_answered

Layout = Mapping[str, fleet.SeatSpec]  # a configuration's seats by designator ("20A")

LOCK_NOT_AVAILABLE = "55P03"  # PostgreSQL's SQLSTATE for a NOWAIT lock that is held
EDIT_ATTEMPTS = 5


RowLock = Literal["FOR SHARE", "FOR UPDATE"]
# What a seat sale cut short waiting for its configuration is told (503 ERR-9000).
SEATS_BUSY = "The seat map of a flight of this request is being updated by the airline"


def configuration_seats(
    configuration_ids: Iterable[int], *, lock: RowLock | None
) -> dict[int, Layout]:
    """The seats of these configurations as they stand, read under `lock` of their rows
    (`FOR SHARE` by a sale, `FOR UPDATE` by an edit; inside the caller's transaction),
    in ascending id order. Never from the per-process layout cache (offers.seating
    `seats_of_configuration`): that may be a minute old, and this decides a sale. A
    sale's wait for its share locks is bounded (LockBusy, airline.sql.lock_wait_bounded:
    an edit may hold the row while it writes the bookings it changes); an edit's is not:
    it waits for the sales, which are short."""
    ids = sorted(set(configuration_ids))
    if not ids:
        return {}
    table, layouts = SeatConfiguration._meta.db_table, CabinLayout._meta.db_table
    # SQLite (the embedded default) has no row locks: its writers are serialized whole.
    locking = f" {lock}" if lock and connection.features.has_select_for_update else ""
    placeholders = ", ".join(["%s"] * len(ids))
    bounded = lock_wait_bounded(SEATS_BUSY) if lock == "FOR SHARE" else nullcontext()
    # Plain SQL: a seat sale reads this inside its transaction, and the ORM's building of
    # the queries cost the sale more than the database's reading of them. The cabins are
    # read in the same round trip, by a statement the server runs once the locks are
    # granted, with a snapshot of its own (READ COMMITTED): an edit that held a lock has
    # committed its cabins too by then.
    with bounded:
        rows, cabin_rows = statements_answered(
            [
                (
                    f'SELECT "id", "blocked_seats" FROM "{table}" '  # noqa: S608
                    f'WHERE "id" IN ({placeholders}) ORDER BY "id"{locking}',
                    ids,
                ),
                (
                    'SELECT "configuration_id", "cabin", "name", "first_row", "last_row", '  # noqa: S608
                    '"seat_letters", "skipped_rows", "exit_rows", "extra_legroom_rows" '
                    f'FROM "{layouts}" WHERE "configuration_id" IN ({placeholders}) '
                    'ORDER BY "configuration_id", "first_row"',
                    ids,
                ),
            ]
        )
    blocked_seats = SeatConfiguration._meta.get_field("blocked_seats")
    blocked = {pk: blocked_seats.from_db_value(value, None, connection) for pk, value in rows}
    rows_json = [
        CabinLayout._meta.get_field(name)
        for name in ("skipped_rows", "exit_rows", "extra_legroom_rows")
    ]
    cabins: dict[int, list[fleet.CabinSpec]] = {pk: [] for pk in blocked}
    for pk, cabin, name, first_row, last_row, letters, *json_rows in cabin_rows:
        skipped, exits, legroom = (
            field.from_db_value(value, None, connection)
            for field, value in zip(rows_json, json_rows, strict=True)
        )
        cabins[pk].append(
            cabin_spec(
                cabin=cabin,
                name=name,
                first_row=first_row,
                last_row=last_row,
                seat_letters=letters,
                skipped_rows=skipped,
                exit_rows=exits,
                extra_legroom_rows=legroom,
            )
        )
    return {pk: _layout(tuple(cabins[pk]), tuple(blocked[pk] or ())) for pk in blocked}


@functools.lru_cache(maxsize=512)
def _layout(cabins: tuple[fleet.CabinSpec, ...], blocked: tuple[str, ...]) -> Layout:
    """The seats by designator of a configuration whose rows hold `cabins` and `blocked`:
    a pure function of them, kept per process (read only), so that a sale re-reading its
    aircraft under the lock does not lay out every seat again. The rows themselves are
    read fresh each time: a changed block or cabin is another key."""
    return MappingProxyType({seat.designator: seat for seat in fleet.seats_of(cabins, blocked)})


def cabin_spec(
    *,
    cabin: str,
    name: str,
    first_row: int,
    last_row: int,
    seat_letters: str,
    skipped_rows: Sequence[int] = (),
    exit_rows: Sequence[int] = (),
    extra_legroom_rows: Sequence[int] = (),
) -> fleet.CabinSpec:
    """A cabin layout's fields as the pure CabinSpec seats are worked out from."""
    return fleet.CabinSpec(
        cabin=cabin,
        name=name,
        first_row=first_row,
        last_row=last_row,
        seat_letters=seat_letters,
        skipped_rows=tuple(skipped_rows or ()),
        exit_rows=tuple(exit_rows or ()),
        extra_legroom_rows=tuple(extra_legroom_rows or ()),
    )


def seat_refusal(seat: fleet.SeatSpec | None, *, zone: str, cabin: str) -> str | None:
    """Why a seat offered in `zone` of `cabin` cannot be sold now, or None: the one
    wording of the seat check before the lock and the re-check under it."""
    if seat is None or seat.blocked:
        return "cannot be sold on this flight"
    if seat.zone != zone or seat.cabin != cabin:
        return "is not a seat of this offer item; choose its item"
    return None


# --- the back office's edit ------------------------------------------------------------


class SeatHolders(Protocol):
    """What an edit asks of the bookings (orders.servicing.airline_changes registers it: the
    network does not import orders)."""

    def holding(
        self, *, configuration_id: int, seats: frozenset[str], cabins: frozenset[str], now: datetime
    ) -> set[int]:
        """Live orders holding one of `seats`, or flying one of `cabins`, on a flight
        of this configuration still to fly."""

    def lock(self, order_ids: Iterable[int], *, nowait: bool) -> None:
        """Lock these orders' rows in id order (OperationalError when `nowait` and one
        is held)."""

    def detect(self, order_ids: Iterable[int], *, now: datetime) -> int:
        """Airline changes for the (locked) orders whose journeys no longer fly as
        booked; how many orders got one."""


SEAT_HOLDERS: list[SeatHolders] = []


class ConfigurationBusy(Exception):
    """Bookings holding seats of the edit kept changing; nothing was saved."""


@dataclass(frozen=True)
class ConfigurationEdited:
    """What a configuration edit took away and from how many bookings."""

    seats_lost: frozenset[str]  # designators sellable before and not now
    cabins_lost: frozenset[str]
    orders_changed: int


def configuration_edit(
    *,
    configuration_id: int,
    blocked_seats: Sequence[str],
    cabins: Sequence[fleet.CabinSpec],
    write: Callable[[], None],
    now: datetime,
) -> ConfigurationEdited:
    """Save an edit of a seat configuration (its blocked seats and cabins as they will
    be; `write` saves them, the back office's forms) in one transaction, under the
    configuration row's lock, and give every live booking holding a seat it blocks or
    removes, or flying a cabin it removes, an airline change (EQUIPMENT) and its
    webhook, as a schedule load that swaps the aircraft does. The save bumps the
    network version (models' signals). ConfigurationBusy when the bookings concerned
    kept changing through EDIT_ATTEMPTS tries.

    Lock order. Every change of an order locks the order row first, then its legs, then
    (selling a seat) the configuration `FOR SHARE`. An edit that locked the
    configuration and then waited for an order could wait on a change that holds that
    order and waits for the configuration's share lock: a deadlock. So the edit locks
    the orders it expects to change first (blocking: it holds nothing a change waits
    for), then the configuration; then reads the holders again. One that booked in
    between (its sale committed before the edit's lock) is locked NOWAIT: if a change
    holds it — maybe waiting for this very configuration — the attempt is rolled back
    to its savepoint, giving the configuration up, and the next attempt locks the
    larger set first."""
    holders = _holders()
    after = fleet.seats_of(cabins, blocked_seats)
    with transaction.atomic():
        before = configuration_seats([configuration_id], lock=None)[configuration_id]
        expected = _holding(holders, configuration_id, before, after, now)
        for _attempt in range(EDIT_ATTEMPTS):
            try:
                with transaction.atomic():  # a savepoint: a failed attempt gives up its locks
                    return _edit(holders, configuration_id, after, expected, write=write, now=now)
            except _MoreHolders as more:
                expected |= more.order_ids
        raise ConfigurationBusy(
            "Bookings holding these seats are being changed; try the edit again"
        )


class _MoreHolders(Exception):
    def __init__(self, order_ids: set[int]) -> None:
        super().__init__(f"{len(order_ids)} more orders hold seats of the edit")
        self.order_ids = order_ids


def _edit(
    holders: Sequence[SeatHolders],
    configuration_id: int,
    after: Sequence[fleet.SeatSpec],
    expected: set[int],
    *,
    write: Callable[[], None],
    now: datetime,
) -> ConfigurationEdited:
    for holder in holders:
        holder.lock(expected, nowait=False)
    before = configuration_seats([configuration_id], lock="FOR UPDATE")[configuration_id]
    # Under the configuration's lock every sale of its seats has committed (and is seen
    # by the read below) or waits for this edit (and will read the block).
    holding = _holding(holders, configuration_id, before, after, now)
    more = holding - expected
    if more:
        try:
            for holder in holders:
                holder.lock(more, nowait=True)
        except OperationalError as exc:
            if getattr(exc.__cause__, "sqlstate", None) != LOCK_NOT_AVAILABLE:
                raise
            raise _MoreHolders(more) from exc
    write()
    seats_lost, cabins_lost = _lost(before.values(), after)
    changed = sum(holder.detect(holding, now=now) for holder in holders) if holding else 0
    return ConfigurationEdited(seats_lost, cabins_lost, changed)


def _holders() -> Sequence[SeatHolders]:
    return tuple(SEAT_HOLDERS)


def _lost(
    before: Iterable[fleet.SeatSpec], after: Iterable[fleet.SeatSpec]
) -> tuple[frozenset[str], frozenset[str]]:
    """Seats sellable before and not after (blocked or gone), and cabins gone."""
    before, after = list(before), list(after)
    sellable_after = {s.designator for s in after if not s.blocked}
    seats = frozenset(s.designator for s in before if not s.blocked) - sellable_after
    cabins = frozenset(s.cabin for s in before) - {s.cabin for s in after}
    return seats, cabins


def _holding(
    holders: Sequence[SeatHolders],
    configuration_id: int,
    before: Layout,
    after: Sequence[fleet.SeatSpec],
    now: datetime,
) -> set[int]:
    seats, cabins = _lost(before.values(), after)
    if not seats and not cabins:
        return set()
    return {
        order_id
        for holder in holders
        for order_id in holder.holding(
            configuration_id=configuration_id, seats=seats, cabins=cabins, now=now
        )
    }
