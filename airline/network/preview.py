"""What loading a schedule would change, computed without writing anything: the back
office shows it before staff confirm an upload (docs/operators/back-office.md).

It takes the loader's own diff (schedule_diff: flight-date legs of the flights the file
touches, keyed by carrier, flight number, date and leg sequence; a dropped leg with sales
is kept, cancelled) and adds what the loader does not report: which bookings sit on the
legs that change."""

from collections import defaultdict
from dataclasses import dataclass, field, replace
from datetime import datetime
from zoneinfo import ZoneInfo

from airline.backoffice import local_time
from airline.network.models import (
    FlightLeg,
    LegInventory,
    ScheduleLoad,
    SeatConfiguration,
    Station,
)
from airline.network.readers import bookings_on_legs
from airline.network.schedule_diff import PlannedLeg, configuration_key, schedule_diff
from airline.network.ssim import SsimSchedule


@dataclass(frozen=True)
class FlightChange:
    """One flight-date leg the load adds, changes or drops."""

    flight: str  # "MX101 2027-01-04 PVD-CHS"
    departs: str  # local time, as it will be (as it was, for a dropped leg)
    change: str = ""  # what differs: "departs 07:00 EST -> 08:00 EST; aircraft E75 -> 320"
    bookings: int = 0  # bookings holding seats on it
    departs_at: datetime | None = field(default=None, compare=False, repr=False)


@dataclass(frozen=True)
class BookingImpact:
    """A booking holding seats on a leg the load retimes, changes or cancels."""

    order_pk: int
    record_locator: str
    status: str
    flights: tuple[str, ...]  # "MX101 2027-01-04 PVD-CHS: cancelled"


@dataclass
class SchedulePreview:
    carriers: list[str]
    same_as_last: bool  # the file loaded last: loading it changes nothing
    added: list[FlightChange] = field(default_factory=list)
    retimed: list[FlightChange] = field(default_factory=list)
    # aircraft, configuration, route or service type, or a cancelled leg flown again
    changed: list[FlightChange] = field(default_factory=list)
    cancelled: list[FlightChange] = field(default_factory=list)  # dropped, kept for bookings
    removed: list[FlightChange] = field(default_factory=list)  # dropped, no sales: deleted
    unchanged: int = 0
    bookings: list[BookingImpact] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)  # why loading it would fail

    @property
    def changes_anything(self) -> bool:
        return not self.same_as_last and bool(
            self.added or self.retimed or self.changed or self.cancelled or self.removed
        )


def schedule_preview(*, schedule: SsimSchedule, sha256: str) -> SchedulePreview:
    """What `schedule_load` would do with `schedule`, read from the database only: the
    same diff (schedule_diff), so only the flights the file touches are read."""
    carriers = sorted({leg.airline_designator for leg in schedule.legs})
    last = ScheduleLoad.objects.first()
    preview = SchedulePreview(
        carriers=carriers, same_as_last=last is not None and last.sha256 == sha256
    )
    if preview.same_as_last:
        return preview
    preview.problems = _configuration_problems(schedule)

    diff = schedule_diff(schedule, related=("aircraft_type", "configuration"))
    existing, wanted = diff.existing, diff.wanted
    # The loader's own rule: a leg with any seat sold is never deleted.
    with_sales = set(
        LegInventory.objects.filter(
            leg__carrier__in=diff.carriers,
            leg__flight_number__in={number for _, number in diff.flights},
            sold__gt=0,
        ).values_list("leg_id", flat=True)
    )
    zones = _zones(
        {code for p in wanted.values() for code in (p.origin, p.destination)}
        | {code for leg in existing.values() for code in (leg.origin_id, leg.destination_id)}
    )

    def when(moment: datetime, station: str) -> str:
        return local_time(moment, zones.get(station, ZoneInfo("UTC")))

    preview.unchanged = diff.untouched_count()
    affected: dict[int, tuple[str, str]] = {}  # leg pk -> (flight, what happens to it)
    dated: list[tuple[str, int | None, FlightChange]] = []  # (list, leg pk, change)
    for key, leg in existing.items():
        plan = wanted.get(key)
        if plan is None:
            dropped = FlightChange(
                str(leg), when(leg.departs_at, leg.origin_id), departs_at=leg.departs_at
            )
            if leg.pk not in with_sales:
                dated.append(("removed", leg.pk, dropped))
            elif not leg.is_cancelled:
                dated.append(("cancelled", leg.pk, dropped))
                affected[leg.pk] = (dropped.flight, "cancelled")
            else:
                preview.unchanged += 1  # cancelled already, kept for its bookings
            continue
        differences = _differences(leg, plan, when)
        if not differences:
            preview.unchanged += 1
            continue
        change = FlightChange(
            f"{leg.carrier}{leg.flight_number} {leg.flight_date} {plan.origin}-{plan.destination}",
            when(plan.departs_at, plan.origin),
            "; ".join(differences),
            departs_at=plan.departs_at,
        )
        retimed = plan.departs_at != leg.departs_at or plan.arrives_at != leg.arrives_at
        dated.append(("retimed" if retimed else "changed", leg.pk, change))
        if leg.pk in with_sales:
            affected[leg.pk] = (change.flight, change.change)
    for key, plan in wanted.items():
        if key not in existing:
            carrier, number, day, _ = key
            added = FlightChange(
                f"{carrier}{number} {day} {plan.origin}-{plan.destination}",
                when(plan.departs_at, plan.origin),
                departs_at=plan.departs_at,
            )
            dated.append(("added", None, added))

    booked = _booked(affected)
    per_leg = defaultdict(int)
    for leg_pk, *_ in booked:
        per_leg[leg_pk] += 1
    for name, leg_pk, change in sorted(dated, key=lambda d: (d[2].departs_at, d[2].flight)):
        if per_leg.get(leg_pk):
            change = replace(change, bookings=per_leg[leg_pk])
        getattr(preview, name).append(change)
    preview.bookings = _impacts(booked, affected)
    return preview


def _differences(leg: FlightLeg, plan: PlannedLeg, when) -> list[str]:
    found = []
    if (leg.origin_id, leg.destination_id) != (plan.origin, plan.destination):
        found.append(
            f"route {leg.origin_id}-{leg.destination_id} -> {plan.origin}-{plan.destination}"
        )
    if leg.departs_at != plan.departs_at:
        found.append(
            f"departs {when(leg.departs_at, leg.origin_id)} -> {when(plan.departs_at, plan.origin)}"
        )
    if leg.arrives_at != plan.arrives_at:
        found.append(
            f"arrives {when(leg.arrives_at, leg.destination_id)}"
            f" -> {when(plan.arrives_at, plan.destination)}"
        )
    was = (leg.aircraft_type.iata_code, leg.configuration.code)
    if was != plan.configuration:
        found.append(f"aircraft {' '.join(was)} -> {' '.join(plan.configuration)}")
    if leg.service_type != plan.service_type:
        found.append(f"service type {leg.service_type} -> {plan.service_type}")
    if leg.is_cancelled:
        found.append("flown again (was cancelled by an earlier schedule)")
    return found


def _zones(codes: set[str]) -> dict[str, ZoneInfo]:
    return {
        code: ZoneInfo(zone)
        for code, zone in Station.objects.filter(code__in=codes).values_list("code", "time_zone")
    }


def _booked(affected: dict[int, tuple[str, str]]) -> list[tuple[int, int, str, str]]:
    """(leg pk, order pk, locator, status) of each booking still holding seats on an
    affected leg."""
    return bookings_on_legs(list(affected)) if affected else []


def _impacts(booked, affected: dict[int, tuple[str, str]]) -> list[BookingImpact]:
    by_order: dict[int, BookingImpact] = {}
    for leg_pk, order_pk, locator, status in booked:
        flight, change = affected[leg_pk]
        known = by_order.get(order_pk) or BookingImpact(order_pk, locator, status, ())
        by_order[order_pk] = replace(known, flights=(*known.flights, f"{flight}: {change}"))
    return list(by_order.values())


def _configuration_problems(schedule: SsimSchedule) -> list[str]:
    """Aircraft the loader could not seat: no configuration of the filed code or of the
    type, and no seat counts filed to make one from (services.configuration_ensure)."""
    known = set(SeatConfiguration.objects.values_list("aircraft_type__iata_code", "code"))
    types = {kind for kind, _ in known}
    problems = set()
    for leg in schedule.legs:
        if configuration_key(leg) in known or leg.seat_configuration:
            continue
        if leg.aircraft_type not in types:
            problems.add(
                f"Aircraft {leg.aircraft_type} has no seat configuration "
                "and the schedule files no seat counts"
            )
    return sorted(problems)
