"""What a schedule file changes, in time proportional to what it changes.

A schedule is a few hundred SSIM leg records that expand into tens of thousands of
flight-date legs (the demo: 58,410). Diffing every dated leg of the file against every
stored one cost seconds for a file that retimes one flight. Instead, each stored SSIM
record keeps a fingerprint of what it files (`ScheduledLeg.fingerprint`); a flight whose
records' fingerprints are the same in the file as in the store produces the same dated
legs and is left alone. Only the touched flights (a record added, dropped or changed) are
expanded into dated legs and compared with their stored legs.

Both the loader (`services.schedule_load`) and the back office's preview
(`preview.schedule_preview`) work from this one diff.
"""

import hashlib
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import datetime

from airline.network.models import FlightLeg, ScheduledLeg
from airline.network.ssim import (
    SsimLeg,
    SsimSchedule,
    leg_arrival_utc,
    leg_departure_utc,
    operating_dates,
)

# SSIM leaves Data Element Identifiers 900-999 for bilateral use; we file the
# "subject to government approval" text of a leg under this one (SPEC.md §2.2).
GOVT_APPROVAL_DEI = 901

Flight = tuple[str, int]  # (carrier, flight number)
LegKey = tuple[str, int, object, int]  # (carrier, flight number, flight date, leg sequence)


@dataclass(frozen=True)
class PlannedLeg:
    """A flight-date leg as the file has it."""

    origin: str
    destination: str
    departs_at: datetime  # UTC
    arrives_at: datetime  # UTC
    aircraft_type: str  # IATA code
    configuration: tuple[str, str]  # (aircraft type, configuration code): configuration_key
    service_type: str
    govt_approval_disclosure: str


@dataclass
class ScheduleDiff:
    """The flight-date legs of the flights a file touches: as stored and as filed."""

    carriers: set[str]
    flights: set[Flight]  # touched: a record of theirs is added, dropped or changed
    existing: dict[LegKey, FlightLeg] = field(default_factory=dict)
    wanted: dict[LegKey, PlannedLeg] = field(default_factory=dict)

    @property
    def dropped(self) -> list[FlightLeg]:
        return [leg for key, leg in self.existing.items() if key not in self.wanted]

    @property
    def added(self) -> list[tuple[LegKey, PlannedLeg]]:
        return [(key, plan) for key, plan in self.wanted.items() if key not in self.existing]

    @property
    def kept(self) -> list[tuple[FlightLeg, PlannedLeg]]:
        """Stored legs the file still has (changed or not)."""
        return [(leg, plan) for key, leg in self.existing.items() if (plan := self.wanted.get(key))]

    def untouched_count(self) -> int:
        """Stored legs of the file's carriers on flights the file does not touch."""
        touched = {number for carrier, number in self.flights}
        return (
            FlightLeg.objects.filter(carrier__in=self.carriers)
            .exclude(flight_number__in=touched)
            .count()
        )


def schedule_diff(schedule: SsimSchedule, *, related: tuple[str, ...] = ()) -> ScheduleDiff:
    """The touched flights of `schedule` with their stored and filed dated legs (stored
    rows with `related` selected). Reads the stored records and the touched flights' legs;
    writes nothing."""
    carriers = {leg.airline_designator for leg in schedule.legs}
    filed: dict[Flight, list[str]] = defaultdict(list)
    for leg in schedule.legs:
        filed[(leg.airline_designator, leg.flight_number)].append(record_fingerprint(leg))
    stored: dict[Flight, list[str]] = defaultdict(list)
    for carrier, number, fingerprint in ScheduledLeg.objects.filter(
        carrier__in=carriers
    ).values_list("carrier", "flight_number", "fingerprint"):
        # A record stored before fingerprints were kept has none: its flight is diffed.
        stored[(carrier, number)].append(fingerprint or "?")
    flights = {
        flight
        for flight in filed.keys() | stored.keys()
        if sorted(filed.get(flight, ())) != sorted(stored.get(flight, ()))
    }
    diff = ScheduleDiff(carriers=carriers, flights=flights)
    if not flights:
        return diff
    for leg in schedule.legs:
        if (leg.airline_designator, leg.flight_number) in flights:
            for day in operating_dates(leg):
                key = (leg.airline_designator, leg.flight_number, day, leg.leg_sequence)
                diff.wanted[key] = planned_leg(leg, day)
    by_carrier: dict[str, list[int]] = defaultdict(list)
    for carrier, number in flights:
        by_carrier[carrier].append(number)
    for carrier, numbers in by_carrier.items():
        rows = FlightLeg.objects.filter(carrier=carrier, flight_number__in=numbers)
        for leg in rows.select_related(*related):
            diff.existing[(leg.carrier, leg.flight_number, leg.flight_date, leg.leg_sequence)] = leg
    return diff


def planned_leg(leg: SsimLeg, day) -> PlannedLeg:
    return PlannedLeg(
        origin=leg.departure_station,
        destination=leg.arrival_station,
        departs_at=leg_departure_utc(leg, day),
        arrives_at=leg_arrival_utc(leg, day),
        aircraft_type=leg.aircraft_type,
        configuration=configuration_key(leg),
        service_type=leg.service_type,
        govt_approval_disclosure=govt_disclosure(leg),
    )


def record_fingerprint(leg: SsimLeg) -> str:
    """What an SSIM leg record files, as a short digest: every field but its line number
    in the file (which moves when a record is added above it)."""
    filed = (
        leg.time_mode,
        leg.airline_designator,
        leg.flight_number,
        leg.operational_suffix,
        leg.itinerary_variation,
        leg.leg_sequence,
        leg.service_type,
        leg.period_start,
        leg.period_end,
        sorted(leg.days_of_operation),
        leg.frequency_rate,
        leg.departure_station,
        leg.passenger_std,
        leg.departure_utc_offset,
        leg.arrival_station,
        leg.passenger_sta,
        leg.arrival_utc_offset,
        leg.aircraft_type,
        leg.aircraft_configuration,
        sorted(leg.seat_configuration.items()),
        leg.departure_date_variation,
        leg.arrival_date_variation,
        govt_disclosure(leg),
    )
    return hashlib.sha256(repr(filed).encode()).hexdigest()[:40]


def configuration_key(leg: SsimLeg) -> tuple[str, str]:
    """(aircraft type, configuration code): the seat part of SSIM's aircraft
    configuration/version field, without the version after "VV" (W18Y112VV112)."""
    return leg.aircraft_type, leg.aircraft_configuration.split("VV")[0].strip()


def govt_disclosure(leg: SsimLeg) -> str:
    for data in leg.segment_data:
        if data.data_element_identifier == GOVT_APPROVAL_DEI:
            return data.data.strip()
    return ""
