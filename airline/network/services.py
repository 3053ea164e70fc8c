"""Write flows of the network: loading a schedule and the stations, fleet and flight-date
legs it implies.

It is one module because loading a schedule is one write flow: its steps (stations,
fleet, dated legs, their seat inventory) run in the one transaction the load opens and
share its helpers.
"""

import hashlib
import logging
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from zoneinfo import ZoneInfo

import airportsdata
from django.db import OperationalError, connection, transaction
from django.db.models import ProtectedError

from airline.network import fleet
from airline.network.follow_up import follow_up_open
from airline.network.inventory import legs_lock
from airline.network.itineraries import on_network_change
from airline.network.models import (
    SCHEDULE_LOAD_MODELS,
    AircraftType,
    BookingClass,
    CabinLayout,
    FlightLeg,
    LegInventory,
    NetworkVersion,
    ScheduledLeg,
    ScheduleFollowUp,
    ScheduleLoad,
    SeatConfiguration,
    Station,
)
from airline.network.schedule_diff import (
    LegKey,
    PlannedLeg,
    ScheduleDiff,
    configuration_key,
    govt_disclosure,
    record_fingerprint,
    schedule_diff,
)
from airline.network.ssim import SsimLeg, SsimSchedule, parse_ssim
from airline.sql import analyze

logger = logging.getLogger(__name__)

BATCH = 2000
LOCK_CHUNK = 5000  # ids per statement when locking or reading many legs
DEADLOCK_DETECTED = "40P01"  # PostgreSQL's SQLSTATEs
SCHEDULE_WRITERS_LOCK = 0x5C4ED01E  # pg_advisory_xact_lock key: one schedule writer at a time


# Told how a load goes, for the back office (jobs.py): (stage, done, total).
Progress = Callable[[str, int, int], None]


def _no_progress(stage: str, done: int, total: int) -> None:
    pass


def flights_changing(leg_ids: Iterable[int]) -> None:
    """Lock flight-date legs that a schedule change is about to write, in the caller's
    transaction, in ascending id order. From then until it commits no booking can take a
    seat on them: a sale locks its legs (inventory.legs_lock), so one that came first has
    committed and is seen by whatever the change reads next (follow_up.follow_up_open),
    and one that comes after waits, then checks its offer against the legs as written.

    Only the legs are locked, not the bookings on them: those are told after commit, in
    batches (airline/network/follow_up.py), so the locks are held for as long as the
    legs take to write, whatever the number of bookings on them."""
    legs = sorted(set(leg_ids))
    for start in range(0, len(legs), LOCK_CHUNK):  # ascending throughout
        legs_lock(legs[start : start + LOCK_CHUNK])


def schedule_writers_queue() -> None:
    """Wait, inside the caller's transaction, until no other schedule change is being
    written (SQLite serializes every writer already)."""
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_xact_lock(%s)", [SCHEDULE_WRITERS_LOCK])


def sqlstate(exc: BaseException) -> str | None:
    """The SQLSTATE of a database error Django wrapped, if the driver gave one."""
    return getattr(exc.__cause__, "sqlstate", None)


class ScheduleError(Exception):
    """A schedule that parses but cannot be loaded (e.g. an aircraft with no seats)."""


_airports: dict | None = None


def known_station(code: str) -> bool:
    return code in _airport_data()


_zones: dict[str, ZoneInfo] = {}


def station_zone(code: str) -> ZoneInfo:
    """A station's IANA time zone: from the Station table (a few hundred rows, read once
    per process and again when the network version moves: on_network_change), else from
    airportsdata (stations of imported or past bookings); UTC for a code neither knows.
    Never needs the schedule index, which a worker may still be loading."""
    zone = _zones.get(code)
    if zone is None:
        # A miss re-reads the table once: a station created since the last read.
        known = {c: ZoneInfo(tz) for c, tz in Station.objects.values_list("code", "time_zone")}
        airport = _airport_data().get(code)
        zone = known.get(code) or (ZoneInfo(airport["tz"]) if airport else ZoneInfo("UTC"))
        _zones.update(known)
        _zones[code] = zone
    return zone


def _forget_zones(version: int | None) -> None:
    _zones.clear()


on_network_change(_forget_zones)


def _airport_data() -> dict:
    global _airports
    if _airports is None:
        _airports = airportsdata.load("IATA")
    return _airports


def stations_ensure(codes: Iterable[str]) -> dict[str, Station]:
    """The stations with these IATA codes, created from airportsdata where missing."""
    codes = set(codes)
    existing = {s.code: s for s in Station.objects.filter(code__in=codes)}
    missing = []
    for code in sorted(codes - set(existing)):
        airport = _airport_data().get(code)
        if airport is None:
            raise ScheduleError(f"Unknown station {code}")
        missing.append(
            Station(
                code=code,
                name=airport["name"],
                city=airport["city"],
                country=airport["country"],
                time_zone=airport["tz"],
                latitude=airport["lat"],
                longitude=airport["lon"],
            )
        )
    Station.objects.bulk_create(missing)
    existing.update({s.code: s for s in missing})
    return existing


def configuration_ensure(
    *, aircraft_type: str, code: str, counts: dict[str, int]
) -> SeatConfiguration:
    """The configuration a schedule files for an aircraft type. One we do not have is
    created with a generic layout matching the filed seat counts (third-party files);
    a type with neither a matching configuration nor filed counts is an error."""
    configuration = SeatConfiguration.objects.filter(
        aircraft_type__iata_code=aircraft_type, code=code
    ).first()
    if configuration is not None:
        return configuration
    if not counts:
        fallback = SeatConfiguration.objects.filter(aircraft_type__iata_code=aircraft_type).first()
        if fallback is None:
            raise ScheduleError(
                f"Aircraft {aircraft_type} has no seat configuration "
                "and the schedule files no seat counts"
            )
        return fallback
    kind, _ = AircraftType.objects.get_or_create(
        iata_code=aircraft_type, defaults={"name": f"Aircraft type {aircraft_type}"}
    )
    specs = fleet.generic_cabins(counts)
    configuration = SeatConfiguration.objects.create(
        aircraft_type=kind,
        code=code,
        name=f"As filed: {code}",
        blocked_seats=fleet.generic_blocked_seats(specs, counts),
    )
    CabinLayout.objects.bulk_create(
        CabinLayout(
            configuration=configuration,
            cabin=s.cabin,
            name=s.name,
            first_row=s.first_row,
            last_row=s.last_row,
            seat_letters=s.seat_letters,
        )
        for s in specs
    )
    return configuration


@transaction.atomic
def fleet_ensure(definitions: Iterable[dict]) -> None:
    """Create or update aircraft types and their configurations (idempotent)."""
    for spec in definitions:
        kind, _ = AircraftType.objects.update_or_create(
            iata_code=spec["iata_code"],
            defaults={"carrier_code": spec["carrier_code"], "name": spec["name"]},
        )
        configuration, _ = SeatConfiguration.objects.update_or_create(
            aircraft_type=kind,
            code=spec["configuration"],
            defaults={"name": spec["configuration_name"], "blocked_seats": spec["blocked_seats"]},
        )
        for cabin in spec["cabins"]:
            CabinLayout.objects.update_or_create(
                configuration=configuration,
                cabin=cabin.cabin,
                defaults={
                    "name": cabin.name,
                    "first_row": cabin.first_row,
                    "last_row": cabin.last_row,
                    "seat_letters": cabin.seat_letters,
                    "skipped_rows": list(cabin.skipped_rows),
                    "exit_rows": list(cabin.exit_rows),
                    "extra_legroom_rows": list(cabin.extra_legroom_rows),
                },
            )


@dataclass
class LoadResult:
    load: ScheduleLoad | None  # None when the same file was loaded last already
    legs_created: int = 0
    legs_updated: int = 0
    legs_removed: int = 0
    legs_kept_with_sales: int = 0
    # Which flight-date legs ("MX101 2026-06-01 PVD-CHS"), for the load's record.
    removed: list[str] = field(default_factory=list)
    kept_with_sales: list[str] = field(default_factory=list)
    # Every flight-date leg the load created, changed, cancelled or deleted: what each
    # worker's schedule index must re-read (itineraries).
    changed_leg_ids: set[int] = field(default_factory=set)
    # The legs changed or dropped (locked while written), whose bookings are told after
    # commit by `follow_up` (None: no such leg).
    changing: list[int] = field(default_factory=list)
    follow_up: ScheduleFollowUp | None = None


def schedule_load_file(*, path: Path, now: datetime) -> LoadResult:
    """Parse and load an SSIM file (see `schedule_load`)."""
    text = path.read_text(encoding="latin-1")
    schedule = parse_ssim(text, known_station=known_station)
    return schedule_load(
        schedule=schedule,
        file_name=path.name,
        sha256=hashlib.sha256(text.encode("latin-1")).hexdigest(),
        now=now,
    )


LOAD_ATTEMPTS = 3
# A load that writes at least this many flight-date legs refreshes the planner's
# statistics of the schedule tables once it commits: until then the
# inventory query of every search is planned as if they held the schedule before.
ANALYZE_AFTER_LEGS = 1000


def load_summary(file_name: str, result: LoadResult) -> str:
    """One line on what a load did, for the back office and its log."""
    if result.load is None:
        return f"{file_name} is the schedule loaded last; nothing changed."
    return (
        f"Loaded {file_name} (version {result.load.pk}): "
        f"{result.legs_created} flight-date legs created, {result.legs_updated} updated, "
        f"{result.legs_removed} removed, {result.legs_kept_with_sales} kept as cancelled "
        "because they have sales." + follow_up_summary(result.follow_up)
    )


def follow_up_summary(follow_up: ScheduleFollowUp | None) -> str:
    """What a load's follow-up has told its bookings so far, as a sentence to append."""
    if follow_up is None:
        return ""
    if follow_up.finished_at is not None:
        return (
            f" {follow_up.total} bookings on the changed flights told; "
            f"{follow_up.changes} airline changes recorded."
        )
    return (
        f" {follow_up.total} bookings on the changed flights are being told "
        f"({follow_up.done} so far): manage.py load_status {follow_up.load_id}."
    )


def schedule_load(
    *,
    schedule: SsimSchedule,
    file_name: str,
    sha256: str,
    now: datetime,
    progress: Progress = _no_progress,
) -> LoadResult:
    """Load or replace the schedule of the file's carrier, in one transaction.

    Only the flights the file touches are diffed (schedule_diff): their new flight-date
    legs are created with their inventory, changed ones updated, dropped ones deleted,
    except legs that have sales, which are kept and marked cancelled so no booking loses
    its flight. The legs that change are written under their row locks
    (`flights_changing`), and the bookings on them noted in the same transaction: they
    are told after it commits, in batches (`result.follow_up`, airline/network/
    follow_up.py). Loading the file that was loaded last again changes
    nothing. Once committed, a load that wrote many legs analyses the schedule tables
    (a caller that holds a transaction of its own does so after it commits: seed_demo).

    A deadlock with a booking (PostgreSQL aborts one of the two) rolls the whole load
    back; it is tried again from the start, up to LOAD_ATTEMPTS times, unless the caller
    holds a transaction of its own (which the deadlock has already spoiled)."""
    outer = connection.in_atomic_block
    attempts = 1 if outer else LOAD_ATTEMPTS
    for attempt in range(1, attempts + 1):
        try:
            result = _schedule_load_once(
                schedule=schedule, file_name=file_name, sha256=sha256, now=now, progress=progress
            )
        except OperationalError as exc:
            if sqlstate(exc) != DEADLOCK_DETECTED or attempt == attempts:
                raise
            logger.warning("schedule load deadlocked with a booking; trying again")
            continue
        if not outer and len(result.changed_leg_ids) >= ANALYZE_AFTER_LEGS:
            progress("refreshing the planner's statistics", 0, 0)
            analyze(*SCHEDULE_LOAD_MODELS)  # committed: a caller's transaction analyses after
        return result
    raise AssertionError("unreachable")


@transaction.atomic
def _schedule_load_once(
    *, schedule: SsimSchedule, file_name: str, sha256: str, now: datetime, progress: Progress
) -> LoadResult:
    # One schedule writer at a time: the diff below is read before the legs are locked,
    # and only another schedule change could move it in between.
    schedule_writers_queue()
    carriers = {leg.airline_designator for leg in schedule.legs}
    last = ScheduleLoad.objects.first()
    if last is not None and last.sha256 == sha256:
        return LoadResult(load=None)

    stations = stations_ensure(
        {leg.departure_station for leg in schedule.legs}
        | {leg.arrival_station for leg in schedule.legs}
    )
    filed = {configuration_key(leg): dict(leg.seat_configuration) for leg in schedule.legs}
    configurations = {
        key: configuration_ensure(aircraft_type=key[0], code=key[1], counts=counts)
        for key, counts in filed.items()
    }
    progress("comparing the file's flights with the schedule", 0, 0)
    diff = schedule_diff(schedule)
    ScheduledLeg.objects.filter(carrier__in=carriers).delete()
    ScheduledLeg.objects.bulk_create(
        (_scheduled_leg(leg, stations, configurations) for leg in schedule.legs), batch_size=BATCH
    )
    result = _apply_dated_legs(diff, configurations, now=now, progress=progress)
    load = ScheduleLoad.objects.create(
        carrier=",".join(sorted(carriers)),
        file_name=file_name,
        sha256=sha256,
        loaded_at=now,
        legs_created=result.legs_created,
        legs_updated=result.legs_updated,
        legs_removed=result.legs_removed,
        legs_kept_with_sales=result.legs_kept_with_sales,
        flights_removed=result.removed,
        flights_kept_with_sales=result.kept_with_sales,
    )
    result.load = load
    progress("noting the bookings on changed flights", 0, 0)
    result.follow_up = follow_up_open(result.changing, load=load, now=now)
    NetworkVersion.bump(leg_ids=result.changed_leg_ids)
    return result


COMPARED = (
    "origin_id",
    "destination_id",
    "departs_at",
    "arrives_at",
    "aircraft_type_id",
    "configuration_id",
    "service_type",
    "govt_approval_disclosure",
    "is_cancelled",
)


def _apply_dated_legs(
    diff: ScheduleDiff,
    configurations: dict[tuple[str, str], SeatConfiguration],
    *,
    now: datetime,
    progress: Progress,
) -> LoadResult:
    result = LoadResult(load=None)
    wanted = {
        key: _flight_leg(key, plan, configurations[plan.configuration])
        for key, plan in diff.wanted.items()
    }
    changed = [
        (old, new)
        for old, _ in diff.kept
        if any(getattr(old, f) != getattr(new := wanted[_key(old)], f) for f in COMPARED)
    ]
    dropped = diff.dropped
    # New legs first: no booking can see them before commit, so they need no lock, and
    # the changed legs' locks below are held only while those are written.
    new = [leg for key, leg in wanted.items() if key not in diff.existing]
    created: list[FlightLeg] = []
    for start in range(0, len(new), BATCH):
        progress("creating flight-date legs", start, len(new))
        created += FlightLeg.objects.bulk_create(new[start : start + BATCH])
    result.legs_created = len(created)
    inventory_create_for_legs(created, progress=progress)

    # Lock the legs about to change. From here until commit no booking can take a seat
    # on them: one that committed first is seen by the follow-up's snapshot of their
    # bookings, one that comes after waits and then sees the new legs.
    result.changing = [old.pk for old, _ in changed] + [leg.pk for leg in dropped]
    progress("locking the flights that change", 0, len(result.changing))
    flights_changing(result.changing)
    with_sales = _legs_with_sales([leg.pk for leg in dropped])

    kept = [leg for leg in dropped if leg.pk in with_sales]
    deleted = _legs_delete([leg for leg in dropped if leg.pk not in with_sales])
    kept += [leg for leg in dropped if leg.pk not in with_sales and leg.pk not in deleted]
    cancelled = [leg for leg in kept if not leg.is_cancelled]
    for leg in cancelled:
        leg.is_cancelled = True
    for start in range(0, len(cancelled), LOCK_CHUNK):
        FlightLeg.objects.filter(
            pk__in=[leg.pk for leg in cancelled[start : start + LOCK_CHUNK]]
        ).update(is_cancelled=True)
    result.legs_removed, result.legs_kept_with_sales = len(deleted), len(cancelled)
    result.removed = sorted(str(leg) for leg in dropped if leg.pk in deleted)
    result.kept_with_sales = sorted(str(leg) for leg in cancelled)

    reconfigured = [old for old, new in changed if old.configuration_id != new.configuration_id]
    for old, new in changed:
        for f in COMPARED:
            setattr(old, f, getattr(new, f))
    _legs_update([old for old, _ in changed], [f.removesuffix("_id") for f in COMPARED])
    result.legs_updated = len(changed)
    _resize_inventory(reconfigured)
    result.changed_leg_ids = (
        {leg.pk for leg in created}
        | {old.pk for old, _ in changed}
        | {leg.pk for leg in cancelled}
        | deleted
    )
    return result


def _legs_update(legs: list[FlightLeg], fields: Sequence[str]) -> None:
    """Write these fields of these legs: bulk_update's effect, as one UPDATE ... FROM
    (VALUES ...) per batch on PostgreSQL. bulk_update writes a CASE WHEN per field and
    row, which Django builds as expressions: retiming three flights for a season
    (1,320 legs, 9 fields) cost 7 s of Python for 0.1 s of database work."""
    if connection.vendor != "postgresql":  # SQLite names VALUES columns its own way
        FlightLeg.objects.bulk_update(legs, fields, batch_size=BATCH)
        return
    qn = connection.ops.quote_name
    written = [FlightLeg._meta.get_field(name) for name in fields]
    table = qn(FlightLeg._meta.db_table)
    columns = ", ".join(qn(f.column) for f in written)
    assigned = ", ".join(f"{qn(f.column)} = v.{qn(f.column)}" for f in written)
    row = "(" + ", ".join(["%s"] * (len(written) + 1)) + ")"
    with connection.cursor() as cursor:
        for start in range(0, len(legs), BATCH):
            batch = legs[start : start + BATCH]
            cursor.execute(
                f"UPDATE {table} SET {assigned} FROM (VALUES {', '.join([row] * len(batch))}) "  # noqa: S608
                f'AS v("id", {columns}) WHERE {table}."id" = v."id"',
                [
                    value
                    for leg in batch
                    for value in (
                        leg.pk,
                        *(f.get_db_prep_save(getattr(leg, f.attname), connection) for f in written),
                    )
                ],
            )


def _key(leg: FlightLeg) -> LegKey:
    return (leg.carrier, leg.flight_number, leg.flight_date, leg.leg_sequence)


def _flight_leg(key: LegKey, plan: PlannedLeg, configuration: SeatConfiguration) -> FlightLeg:
    carrier, flight_number, flight_date, leg_sequence = key
    return FlightLeg(
        carrier=carrier,
        flight_number=flight_number,
        flight_date=flight_date,
        leg_sequence=leg_sequence,
        origin_id=plan.origin,
        destination_id=plan.destination,
        departs_at=plan.departs_at,
        arrives_at=plan.arrives_at,
        aircraft_type_id=configuration.aircraft_type_id,
        configuration=configuration,
        service_type=plan.service_type,
        govt_approval_disclosure=plan.govt_approval_disclosure,
    )


def _legs_with_sales(leg_ids: list[int]) -> set[int]:
    """Of these legs (locked by the caller), those with a seat sold."""
    found: set[int] = set()
    for start in range(0, len(leg_ids), LOCK_CHUNK):
        found.update(
            LegInventory.objects.filter(
                leg_id__in=leg_ids[start : start + LOCK_CHUNK], sold__gt=0
            ).values_list("leg_id", flat=True)
        )
    return found


def _legs_delete(legs: list[FlightLeg]) -> set[int]:
    """Delete these legs (with their inventory), but for any that a record still points
    at (a booking cancelled since, whose segments keep naming the leg): those are left
    for the caller to keep as cancelled. Returns the ids deleted."""
    pks = [leg.pk for leg in legs]
    referenced: set[int] = set()
    for start in range(0, len(pks), BATCH):
        batch = [pk for pk in pks[start : start + BATCH] if pk not in referenced]
        try:
            with transaction.atomic():
                FlightLeg.objects.filter(pk__in=batch).delete()
        except ProtectedError as exc:
            referenced |= {
                getattr(row, f.attname)
                for row in exc.protected_objects
                for f in row._meta.concrete_fields
                if f.is_relation and f.related_model is FlightLeg
            }
            free = [pk for pk in batch if pk not in referenced]
            with transaction.atomic():
                FlightLeg.objects.filter(pk__in=free).delete()
    return set(pks) - referenced


def inventory_create_for_legs(legs: list[FlightLeg], *, progress: Progress = _no_progress) -> None:
    """Booking-class rows for new flight-date legs, sized by each leg's configuration.

    Every leg of one configuration gets the same rows, so they are worked out once per
    configuration and the database repeats them for each of its legs: one INSERT ...
    SELECT per configuration and chunk of legs. Built as model instances (bulk_create),
    the demo schedule's 433,000 rows cost 14 s of Python: seed_demo took 24.5 s, and
    takes 11 s this way (`python -m benchmarks.network` times it beside raw INSERTs of
    the same rows)."""
    ladder = _ladder()
    by_configuration: dict[int, list[FlightLeg]] = {}
    for leg in legs:
        by_configuration.setdefault(leg.configuration_id, []).append(leg)
    done = 0
    for same in by_configuration.values():
        classes = [
            (
                cabin,
                booking_class.rbd,
                booking_class.rank,
                authorized_seats(capacity, booking_class),
            )
            for cabin, capacity in configuration_capacities(same[0].configuration).items()
            for booking_class in ladder.get(cabin, ())
        ]
        if not classes:
            continue
        # Within the backend's bound on parameters (Django's for SQLite is 999): each
        # statement carries the classes' 4 values and the legs' ids.
        bound = connection.features.max_query_params
        per_statement = (
            LOCK_CHUNK if bound is None else max(1, min(LOCK_CHUNK, bound - 4 * len(classes)))
        )
        for start in range(0, len(same), per_statement):
            progress("creating seat inventory", done, len(legs))
            chunk = [leg.pk for leg in same[start : start + per_statement]]
            _inventory_insert(classes, chunk)
            done += len(chunk)


def _inventory_insert(classes: list[tuple[str, str, int, int]], leg_ids: list[int]) -> None:
    """Each of these classes (cabin, rbd, rank, authorized) on each of these legs."""
    qn = connection.ops.quote_name
    rows = ", ".join(["(%s, %s, %s, %s)"] * len(classes))
    legs_in = ", ".join(["%s"] * len(leg_ids))
    # A CTE's column list, not VALUES ... AS v(...): SQLite names VALUES columns its own
    # way. Ordered so ids follow leg, cabin and rank.
    with connection.cursor() as cursor:
        cursor.execute(
            f"WITH v(cabin, rbd, rank, authorized) AS (VALUES {rows}) "  # noqa: S608
            f"INSERT INTO {qn(LegInventory._meta.db_table)} "
            "(leg_id, cabin, rbd, rank, authorized, sold) "
            "SELECT leg.id, v.cabin, v.rbd, v.rank, v.authorized, 0 "
            f"FROM {qn(FlightLeg._meta.db_table)} leg, v WHERE leg.id IN ({legs_in}) "
            "ORDER BY leg.id, v.cabin, v.rank",
            [*(value for row in classes for value in row), *leg_ids],
        )


def _resize_inventory(legs: list[FlightLeg]) -> None:
    """An equipment change: limits follow the new capacity but never drop below what is
    already sold; cabins the new aircraft adds get their classes."""
    ladder = _ladder()
    for leg in legs:
        current = {row.rbd: row for row in leg.inventory.all()}
        for cabin, capacity in configuration_capacities(leg.configuration).items():
            for booking_class in ladder.get(cabin, ()):
                row = current.get(booking_class.rbd)
                limit = authorized_seats(capacity, booking_class)
                if row is None:
                    LegInventory.objects.create(
                        leg=leg,
                        cabin=cabin,
                        rbd=booking_class.rbd,
                        rank=booking_class.rank,
                        authorized=limit,
                    )
                else:
                    row.authorized = max(limit, row.sold)
                    row.save(update_fields=["authorized"])


def authorized_seats(capacity: int, booking_class: BookingClass) -> int:
    return (
        capacity if booking_class.rank == 0 else capacity * booking_class.authorized_percent // 100
    )


def configuration_capacities(configuration: SeatConfiguration) -> dict[str, int]:
    return fleet.capacities(cabin_specs(configuration), configuration.blocked_seats)


def cabin_specs(configuration: SeatConfiguration) -> list[fleet.CabinSpec]:
    return [
        fleet.CabinSpec(
            cabin=c.cabin,
            name=c.name,
            first_row=c.first_row,
            last_row=c.last_row,
            seat_letters=c.seat_letters,
            skipped_rows=tuple(c.skipped_rows),
            exit_rows=tuple(c.exit_rows),
            extra_legroom_rows=tuple(c.extra_legroom_rows),
        )
        for c in configuration.cabins.all()
    ]


def _ladder() -> dict[str, list[BookingClass]]:
    ladder: dict[str, list[BookingClass]] = {}
    for booking_class in BookingClass.objects.order_by("cabin", "rank"):
        ladder.setdefault(booking_class.cabin, []).append(booking_class)
    return ladder


def _scheduled_leg(leg: SsimLeg, stations: dict, configurations: dict) -> ScheduledLeg:
    configuration = configurations[configuration_key(leg)]
    return ScheduledLeg(
        carrier=leg.airline_designator,
        flight_number=leg.flight_number,
        suffix=leg.operational_suffix,
        itinerary_variation=leg.itinerary_variation,
        leg_sequence=leg.leg_sequence,
        service_type=leg.service_type,
        period_start=leg.period_start,
        period_end=leg.period_end,
        days_of_operation="".join(str(d) for d in sorted(leg.days_of_operation)),
        frequency_rate=leg.frequency_rate,
        origin=stations[leg.departure_station],
        destination=stations[leg.arrival_station],
        departure_time=leg.passenger_std,
        arrival_time=leg.passenger_sta,
        aircraft_type_id=configuration.aircraft_type_id,
        configuration=configuration,
        govt_approval_disclosure=govt_disclosure(leg),
        source_line=leg.line,
        fingerprint=record_fingerprint(leg),
    )


def segment_markets(schedule: SsimSchedule) -> set[tuple[str, str]]:
    """Every (board point, off point) a passenger can fly on one flight number: each leg,
    and each run of consecutive legs (PVD-TPA on a PVD-CHS-TPA flight)."""
    routes: dict[tuple, dict[int, SsimLeg]] = {}
    for leg in schedule.legs:
        key = (
            leg.airline_designator,
            leg.flight_number,
            leg.operational_suffix,
            leg.itinerary_variation,
        )
        routes.setdefault(key, {})[leg.leg_sequence] = leg
    markets = set()
    for legs in routes.values():
        ordered = [legs[n] for n in sorted(legs)]
        for board in range(len(ordered)):
            for off in range(board, len(ordered)):
                markets.add((ordered[board].departure_station, ordered[off].arrival_station))
    return markets
