"""Write flows of the network: loading a schedule and the stations, fleet and flight-date
legs it implies."""

import hashlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from zoneinfo import ZoneInfo

import airportsdata
from django.db import transaction

from airline.network import fleet
from airline.network.itineraries import on_network_change
from airline.network.models import (
    AircraftType,
    BookingClass,
    CabinLayout,
    FlightLeg,
    LegInventory,
    NetworkVersion,
    ScheduledLeg,
    ScheduleLoad,
    SeatConfiguration,
    Station,
)
from airline.network.ssim import (
    SsimLeg,
    SsimSchedule,
    leg_arrival_utc,
    leg_departure_utc,
    operating_dates,
    parse_ssim,
)

# SSIM leaves Data Element Identifiers 900-999 for bilateral use; we file the
# "subject to government approval" text of a leg under this one (SPEC.md §2.2).
GOVT_APPROVAL_DEI = 901
BATCH = 2000


# Told, inside a schedule load's transaction, which flight-date legs with sales are about
# to be retimed, re-equipped or cancelled, before they are written; each returns what to
# run once they are. orders.airline_changes registers one (orders.apps): it locks the
# orders flying those legs in its first call, so a load takes order rows before leg rows
# as every change of an order does, and the two never wait on each other in a circle.
FlightsChanging = Callable[[frozenset[int], datetime], Callable[[], None]]
FLIGHTS_CHANGING: list[FlightsChanging] = []


def flights_changing(leg_ids: Iterable[int], *, now: datetime) -> Callable[[], None]:
    """Tell every FLIGHTS_CHANGING listener that these legs are about to change; the
    returned callable tells them the change is written (call it in the same
    transaction). The back office calls this around its own edits of flight legs."""
    ids = frozenset(leg_ids)
    after = [listener(ids, now) for listener in FLIGHTS_CHANGING] if ids else []

    def written() -> None:
        for done in after:
            done()

    return written


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
    # Ids of the flight legs written (created, updated, kept as cancelled, deleted): the
    # network version is bumped once with them, for workers to patch their index.
    changed_leg_ids: set[int] = field(default_factory=set)


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


@transaction.atomic
def schedule_load(
    *, schedule: SsimSchedule, file_name: str, sha256: str, now: datetime
) -> LoadResult:
    """Load or replace the schedule of the file's carrier, in one transaction.

    Flight-date legs are diffed against what is stored: new ones are created with their
    inventory, changed ones updated, dropped ones deleted, except legs that have sales,
    which are kept and marked cancelled so no booking loses its flight. Loading the file
    that was loaded last again changes nothing."""
    carriers = {leg.airline_designator for leg in schedule.legs}
    last = ScheduleLoad.objects.first()
    if last is not None and last.sha256 == sha256:
        return LoadResult(load=None)

    stations = stations_ensure(
        {leg.departure_station for leg in schedule.legs}
        | {leg.arrival_station for leg in schedule.legs}
    )
    filed = {_configuration_key(leg): dict(leg.seat_configuration) for leg in schedule.legs}
    configurations = {
        key: configuration_ensure(aircraft_type=key[0], code=key[1], counts=counts)
        for key, counts in filed.items()
    }
    ScheduledLeg.objects.filter(carrier__in=carriers).delete()
    ScheduledLeg.objects.bulk_create(
        (_scheduled_leg(leg, stations, configurations) for leg in schedule.legs), batch_size=BATCH
    )

    wanted = {}
    for leg in schedule.legs:
        configuration = configurations[_configuration_key(leg)]
        for flight_date in operating_dates(leg):
            key = (leg.airline_designator, leg.flight_number, flight_date, leg.leg_sequence)
            wanted[key] = FlightLeg(
                carrier=leg.airline_designator,
                flight_number=leg.flight_number,
                flight_date=flight_date,
                leg_sequence=leg.leg_sequence,
                origin_id=leg.departure_station,
                destination_id=leg.arrival_station,
                departs_at=leg_departure_utc(leg, flight_date),
                arrives_at=leg_arrival_utc(leg, flight_date),
                aircraft_type_id=configuration.aircraft_type_id,
                configuration=configuration,
                service_type=leg.service_type,
                govt_approval_disclosure=_govt_disclosure(leg),
            )
    result = _apply_dated_legs(carriers, wanted, now=now)
    result.load = ScheduleLoad.objects.create(
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
    carriers: set[str], wanted: dict[tuple, FlightLeg], *, now: datetime
) -> LoadResult:
    result = LoadResult(load=None)
    existing = {
        (leg.carrier, leg.flight_number, leg.flight_date, leg.leg_sequence): leg
        for leg in FlightLeg.objects.filter(carrier__in=carriers)
    }
    with_sales = set(
        LegInventory.objects.filter(leg__carrier__in=carriers, sold__gt=0).values_list(
            "leg_id", flat=True
        )
    )

    dropped = [leg for key, leg in existing.items() if key not in wanted]
    deletable = [leg.pk for leg in dropped if leg.pk not in with_sales]
    kept = [leg for leg in dropped if leg.pk in with_sales and not leg.is_cancelled]
    changed, reconfigured = [], []
    for key, new in wanted.items():
        old = existing.get(key)
        if old is None:
            continue
        if any(getattr(old, f) != getattr(new, f) for f in COMPARED):
            if old.configuration_id != new.configuration_id:
                reconfigured.append(old)
            changed.append((old, new))
    # Bookings on the legs about to change learn of it (orders.airline_changes).
    written = flights_changing(
        {leg.pk for leg in kept} | {old.pk for old, _ in changed if old.pk in with_sales},
        now=now,
    )

    for leg in kept:
        leg.is_cancelled = True
    FlightLeg.objects.bulk_update(kept, ["is_cancelled"], batch_size=BATCH)
    for start in range(0, len(deletable), BATCH):
        FlightLeg.objects.filter(pk__in=deletable[start : start + BATCH]).delete()
    result.legs_removed, result.legs_kept_with_sales = len(deletable), len(kept)
    result.removed = sorted(str(leg) for leg in dropped if leg.pk not in with_sales)
    result.kept_with_sales = sorted(str(leg) for leg in kept)

    for old, new in changed:
        for f in COMPARED:
            setattr(old, f, getattr(new, f))
    FlightLeg.objects.bulk_update(
        [old for old, _ in changed], [f.removesuffix("_id") for f in COMPARED], batch_size=BATCH
    )
    result.legs_updated = len(changed)

    created = FlightLeg.objects.bulk_create(
        [leg for key, leg in wanted.items() if key not in existing], batch_size=BATCH
    )
    result.legs_created = len(created)
    inventory_create_for_legs(created)
    _resize_inventory(reconfigured)
    result.changed_leg_ids = (
        {leg.pk for leg in kept}
        | set(deletable)
        | {old.pk for old, _ in changed}
        | {leg.pk for leg in created}
    )
    written()
    return result


def inventory_create_for_legs(legs: list[FlightLeg]) -> None:
    """Booking-class rows for new flight-date legs, sized by each leg's configuration."""
    ladder = _ladder()
    capacity_of = {}
    rows = []
    for leg in legs:
        if leg.configuration_id not in capacity_of:
            capacity_of[leg.configuration_id] = configuration_capacities(leg.configuration)
        for cabin, capacity in capacity_of[leg.configuration_id].items():
            for booking_class in ladder.get(cabin, ()):
                rows.append(
                    LegInventory(
                        leg=leg,
                        cabin=cabin,
                        rbd=booking_class.rbd,
                        rank=booking_class.rank,
                        authorized=authorized_seats(capacity, booking_class),
                    )
                )
        if len(rows) >= BATCH * 5:
            LegInventory.objects.bulk_create(rows, batch_size=BATCH)
            rows = []
    LegInventory.objects.bulk_create(rows, batch_size=BATCH)


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
    configuration = configurations[_configuration_key(leg)]
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
        govt_approval_disclosure=_govt_disclosure(leg),
        source_line=leg.line,
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


def _configuration_key(leg: SsimLeg) -> tuple[str, str]:
    """(aircraft type, configuration code): the seat part of SSIM's aircraft
    configuration/version field, without the version after "VV" (W18Y112VV112)."""
    return leg.aircraft_type, leg.aircraft_configuration.split("VV")[0].strip()


def _govt_disclosure(leg: SsimLeg) -> str:
    for data in leg.segment_data:
        if data.data_element_identifier == GOVT_APPROVAL_DEI:
            return data.data.strip()
    return ""
