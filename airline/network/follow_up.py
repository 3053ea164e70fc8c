"""Telling the bookings on the flights a schedule change wrote, after it commits.

A schedule change (a load, airline.network.services) writes its flight-date legs in one
short transaction under the legs' row locks and, in that transaction, records who holds
seats on them: a ScheduleFollowUp with one ScheduleFollowUpHolder row per holder. The
snapshot is taken once the legs are locked, so it is complete: a booking that committed
before is in it, and one that comes after waits for the locks, then checks its offer
against the legs as written (orders.booking.priced.as_priced) and is refused, or booked at the
new times, and needs no telling.

The holders are then told in batches (`follow_up_batch`), each one short transaction
that locks at most FOLLOW_UP_BATCH holders in id order, records what changed for them
(orders.servicing.airline_changes: the airline change and its webhook event) and moves the
follow-up's cursor past them. The cursor commits with what was told: every holder is
told exactly once, and a batch whose process dies is rolled back whole and taken again
from the cursor. The worker runs the batches (`follow_ups_run`); `load_schedule --wait`
runs them too (`follow_up_finish`), beside it: a follow-up's row lock lets one process
tell one batch of it at a time. So a load's time does not grow with its bookings, and
no booking waits on a load for the time its bookings take to be told.
"""

import itertools
import time
from collections.abc import Callable, Iterable, Sequence
from datetime import datetime
from typing import Protocol

from django.db import transaction
from django.db.models import F, QuerySet

from airline.api import clock
from airline.network.models import ScheduleFollowUp, ScheduleFollowUpHolder, ScheduleLoad

FOLLOW_UP_BATCH = 200  # holders told per transaction: the orders one batch locks
RUN_BUDGET_SECONDS = 2.0  # batches the worker runs before its other jobs get a turn
SNAPSHOT_ROWS = 5000  # holder rows per INSERT


class LegHolders(Protocol):
    """Whoever holds seats on flight-date legs and must hear that they changed.
    orders.servicing.airline_changes registers the bookings (orders.apps); the network layer knows
    nothing of orders beyond this."""

    kind: str  # names these holders in ScheduleFollowUpHolder rows

    def holding(self, leg_ids: Sequence[int]) -> set[int]:
        """Ids of the holders on these legs, as committed now; no lock taken."""

    def lock(self, holder_ids: Iterable[int], *, nowait: bool = False) -> None:
        """Lock these holders' rows in the caller's transaction, in id order."""

    def changed(self, holder_ids: Iterable[int], *, now: datetime) -> int:
        """The legs were written: tell these (locked) holders what changed for them.
        Returns how many had something to hear."""


LEG_HOLDERS: list[LegHolders] = []


def follow_up_open(
    leg_ids: Iterable[int], *, load: ScheduleLoad | None, now: datetime
) -> ScheduleFollowUp | None:
    """Inside a schedule change's transaction, once the legs it changed are locked (and
    written): the follow-up that tells their holders after commit; None when no leg
    changed."""
    legs = sorted(set(leg_ids))
    if not legs:
        return None
    holders = [(h.kind, holder_id) for h in LEG_HOLDERS for holder_id in sorted(h.holding(legs))]
    follow_up = ScheduleFollowUp.objects.create(
        load=load,
        created_at=now,
        legs=len(legs),
        total=len(holders),
        finished_at=None if holders else now,
    )
    # In the order they are told: the cursor is the last row's id.
    ScheduleFollowUpHolder.objects.bulk_create(
        (
            ScheduleFollowUpHolder(follow_up=follow_up, kind=kind, holder_id=holder_id)
            for kind, holder_id in holders
        ),
        batch_size=SNAPSHOT_ROWS,
    )
    return follow_up


def bookings_untold(now: datetime) -> QuerySet[ScheduleFollowUpHolder]:
    """The holders of open follow-ups not told yet (a metrics gauge: the backlog)."""
    return ScheduleFollowUpHolder.objects.filter(
        follow_up__finished_at__isnull=True, pk__gt=F("follow_up__cursor")
    )


def follow_up_batch(
    *, follow_up_id: int | None = None, now: Callable[[], datetime] = clock.now
) -> ScheduleFollowUp | None:
    """Tell the next FOLLOW_UP_BATCH holders of an open follow-up, in one transaction:
    the oldest one no other process is telling, or `follow_up_id` (waiting for the one
    telling it). Returns the follow-up as this batch left it; None when there was none
    to take (or `follow_up_id` is finished)."""
    with transaction.atomic():
        open_ = ScheduleFollowUp.objects.filter(finished_at__isnull=True)
        if follow_up_id is None:
            follow_up = open_.select_for_update(skip_locked=True).order_by("pk").first()
        else:
            follow_up = open_.select_for_update().filter(pk=follow_up_id).first()
        if follow_up is None:
            return None
        rows = list(
            ScheduleFollowUpHolder.objects.filter(follow_up=follow_up, pk__gt=follow_up.cursor)
            .order_by("pk")
            .values_list("pk", "kind", "holder_id")[:FOLLOW_UP_BATCH]
        )
        at = now()
        kinds = {holders.kind: holders for holders in LEG_HOLDERS}
        told = 0
        for kind, group in itertools.groupby(rows, key=lambda row: row[1]):
            ids = [holder_id for _pk, _kind, holder_id in group]
            holders = kinds[kind]  # a kind no process registers is a bug: roll back, loudly
            holders.lock(ids)
            told += holders.changed(ids, now=at)
        follow_up.started_at = follow_up.started_at or at
        if rows:
            follow_up.cursor = rows[-1][0]
            follow_up.done += len(rows)
            follow_up.changes += told
        if len(rows) < FOLLOW_UP_BATCH:
            follow_up.finished_at = at
        follow_up.save(update_fields=["started_at", "cursor", "done", "changes", "finished_at"])
    return follow_up


def follow_ups_run(
    *, budget: float = RUN_BUDGET_SECONDS, now: Callable[[], datetime] = clock.now
) -> dict[str, int]:
    """Batches of the open follow-ups, one after another until none is left or `budget`
    seconds have gone (the worker's job, run again at once while it finds work): the
    worker's other jobs (webhook delivery above all, which the told bookings feed) get
    their turn between two runs, and a season's bookings are told in as few turns."""
    deadline = time.monotonic() + budget
    batches = 0
    while follow_up_batch(now=now) is not None:
        batches += 1
        if time.monotonic() >= deadline:
            break
    return {"schedule_follow_up_batches": batches} if batches else {}


def follow_up_finish(
    follow_up_id: int,
    *,
    now: Callable[[], datetime] = clock.now,
    progress: Callable[[ScheduleFollowUp], None] = lambda follow_up: None,
) -> ScheduleFollowUp:
    """Tell this follow-up's holders batch after batch until none is left (beside the
    worker, which may tell some of its batches); returns it finished."""
    while True:
        follow_up = follow_up_batch(follow_up_id=follow_up_id, now=now)
        if follow_up is None:
            return ScheduleFollowUp.objects.get(pk=follow_up_id)
        progress(follow_up)
        if follow_up.finished_at is not None:
            return follow_up


def follow_up_progress(follow_up: ScheduleFollowUp) -> str:
    """How far a follow-up has got, in a few lines (load_status, the back office)."""
    state = "finished" if follow_up.finished_at else "running"
    lines = [
        f"Bookings on the {follow_up.legs} changed legs: {follow_up.done} of "
        f"{follow_up.total} told ({state}); {follow_up.changes} airline changes recorded"
    ]
    if follow_up.started_at and follow_up.done:
        end = follow_up.finished_at or follow_up.started_at
        seconds = (end - follow_up.started_at).total_seconds()
        if follow_up.finished_at and seconds > 0:
            lines.append(f"Told in {seconds:.1f} s: {follow_up.done / seconds:.0f} bookings/s")
    if follow_up.finished_at:
        lag = (follow_up.finished_at - follow_up.created_at).total_seconds()
        lines.append(f"Last booking told {lag:.1f} s after the schedule committed")
    return "\n".join(lines)
