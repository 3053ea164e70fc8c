"""The demo schedule of carrier MX as an SSIM Chapter 7 file (DESIGN.md §6 demo data contract).

The network is one hub, CLT, with five departure banks, plus the point-to-point nonstops and
the one-stop flights the contract names. Local departure times are fixed all year, as
airlines publish them; every other time follows from great-circle block times, and every
UTC offset from the IANA zone of the station (airportsdata), split at DST changes.

    python -m airline.network.demo_schedule --start 2025-01-01 --days 330 var/demo.ssim
"""

import argparse
import math
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from functools import cache
from itertools import groupby, pairwise
from pathlib import Path
from zoneinfo import ZoneInfo

import airportsdata

from airline.network.ssim import (
    CARRIER_FIELDS,
    HEADER_FIELDS,
    LEG_FIELDS,
    RECORD_LENGTH,
    SEGMENT_FIELDS,
    TRAILER_FIELDS,
    format_date,
    format_record,
    format_time,
    format_utc_offset,
    parse_ssim,
)

CARRIER = "MX"
HUB = "CLT"
# Hub banks: inbound flights arrive by the bank time and outbound flights leave BANK_TURN
# later, so the shortest connection at CLT is 65 min (minimum 45) and a bank connects to
# the next one too (4 h 05); two banks later is past the 6 h maximum connecting time.
BANKS = {1: time(8, 45), 2: time(11, 45), 3: time(14, 45), 4: time(17, 45), 5: time(20, 45)}
BANK_TURN = timedelta(minutes=65)
# Spokes and the banks they are flown in, both ways. PVD and MSY share banks, so PVD-MSY is
# sold as a connection at CLT: the contract wants it served by connections only.
SPOKES: dict[str, tuple[int, ...]] = {
    "PVD": (1, 3, 5), "MSY": (1, 3, 5), "CHS": (2, 3, 4), "TPA": (1, 3, 5),
    "BDL": (2, 3, 4), "MCO": (1, 2, 4, 5), "ORF": (2, 4), "PIT": (1, 3, 5),
    "BOS": (1, 2, 4, 5), "LGA": (1, 2, 3, 4, 5), "PHL": (2, 3, 5), "BWI": (1, 3, 5),
    "DCA": (1, 2, 4, 5), "RDU": (2, 4), "SAV": (1, 4), "JAX": (2, 3, 5),
    "MIA": (1, 3, 5), "FLL": (2, 4), "BNA": (1, 3, 5), "DTW": (2, 4),
    "CMH": (1, 4), "ORD": (1, 3, 5), "AUS": (2, 4), "DFW": (1, 3, 5),
    "DEN": (2, 3, 5), "PHX": (2, 3, 5),
}  # fmt: skip
# Daily nonstops both ways (contract markets), twice a day each way.
NONSTOP_MARKETS = (
    ("CHS", "PVD"), ("TPA", "PVD"), ("CHS", "BDL"), ("MCO", "BDL"), ("TPA", "ORF"), ("MSY", "PIT"),
)  # fmt: skip
NONSTOP_TIMES = ((time(7, 10), time(10, 25)), (time(16, 40), time(19, 55)))  # (out, back)
# Direct one-stop flights: one flight number, two legs.
ONE_STOP_FLIGHTS = (
    (501, ("PVD", "CHS", "TPA"), time(7, 0)),
    (502, ("TPA", "CHS", "PVD"), time(15, 30)),
)
ONE_STOP_GROUND_TIME = timedelta(minutes=45)
# Aircraft type (IATA code): configuration/version and PRBD. The A320 has a premium cabin.
AIRCRAFT = {"320": ("C12Y138", "CY"), "E75": ("Y76", "Y")}
A320_FROM_KM = 1000  # legs this long or longer get the A320, shorter ones the E175
CRUISE_KMH = 780
TAXI = timedelta(minutes=30)
EARLIEST, LATEST = time(6, 0), time(22, 0)  # local departure window
ELECTRONIC_TICKETING_DEI = 505  # SSIM DEI 505: electronic ticketing information


@dataclass(frozen=True)
class DemoFlight:
    number: int
    route: tuple[str, ...]  # stations in order; two legs for a one-stop flight
    departure: time  # local time at route[0]


@cache
def _airports() -> dict[str, dict]:
    return airportsdata.load("IATA")


def _zone(station: str) -> ZoneInfo:
    return ZoneInfo(_airports()[station]["tz"])


def distance_km(origin: str, destination: str) -> float:
    """Great-circle distance between two stations (haversine, mean Earth radius)."""
    a, b = _airports()[origin], _airports()[destination]
    lat1, lon1, lat2, lon2 = map(math.radians, (a["lat"], a["lon"], b["lat"], b["lon"]))
    h = math.sin((lat2 - lat1) / 2) ** 2
    h += math.cos(lat1) * math.cos(lat2) * math.sin((lon2 - lon1) / 2) ** 2
    return 2 * 6371.0 * math.asin(math.sqrt(h))


def block_time(origin: str, destination: str) -> timedelta:
    """Gate to gate: cruise at CRUISE_KMH plus taxi, rounded to 5 minutes."""
    minutes = distance_km(origin, destination) / CRUISE_KMH * 60 + TAXI.total_seconds() / 60
    return timedelta(minutes=5 * round(minutes / 5))


def _aircraft(route: tuple[str, ...]) -> str:
    longest = max(distance_km(a, b) for a, b in pairwise(route))
    return "320" if longest >= A320_FROM_KM else "E75"


def _in_window(departure: time) -> bool:
    return EARLIEST <= departure <= LATEST


def _hub_flights(reference: date) -> Iterator[DemoFlight]:
    """Bank flights, both ways, for each spoke's banks.

    Inbound times are set on the reference date's offsets and then kept, as local times
    are; so Phoenix, which keeps standard time, reaches CLT an hour later in summer.
    """
    for index, (spoke, banks) in enumerate(SPOKES.items()):
        for bank in banks:
            number = 1001 + 20 * index + 2 * (bank - 1)
            arrival = datetime.combine(reference, BANKS[bank], tzinfo=_zone(HUB))
            outbound = (arrival + BANK_TURN).time()
            inbound_at = (arrival.astimezone(UTC) - block_time(spoke, HUB)).astimezone(_zone(spoke))
            inbound = time(inbound_at.hour, inbound_at.minute - inbound_at.minute % 5)
            if _in_window(outbound):
                yield DemoFlight(number, (HUB, spoke), outbound)
            if _in_window(inbound):
                yield DemoFlight(number + 1, (spoke, HUB), inbound)


def demo_flights() -> list[DemoFlight]:
    """Every flight of the demo network, in flight number order."""
    flights = [DemoFlight(number, route, at) for number, route, at in ONE_STOP_FLIGHTS]
    for index, (a, b) in enumerate(NONSTOP_MARKETS):
        shift = timedelta(minutes=10 * index)  # spread the markets over the morning
        for trip, (out, back) in enumerate(NONSTOP_TIMES):
            number = 101 + 4 * index + 2 * trip
            flights.append(DemoFlight(number, (a, b), _later(out, shift)))
            flights.append(DemoFlight(number + 1, (b, a), _later(back, shift)))
    flights.extend(_hub_flights(date(2025, 1, 15)))  # fixed reference: same timetable yearly
    return sorted(flights, key=lambda flight: flight.number)


def _later(at: time, delta: timedelta) -> time:
    return (datetime.combine(date(2000, 1, 1), at) + delta).time()


def _leg_times(flight: DemoFlight, day: date) -> tuple[tuple[datetime, datetime], ...]:
    """(local departure, local arrival) of each leg of a flight on its flight date."""
    # Aware arithmetic in one zone is wall-clock arithmetic, so durations are added in UTC.
    legs = []
    departure = datetime.combine(day, flight.departure, tzinfo=_zone(flight.route[0]))
    for origin, destination in pairwise(flight.route):
        arrival_utc = departure.astimezone(UTC) + block_time(origin, destination)
        legs.append((departure, arrival_utc.astimezone(_zone(destination))))
        departure = (arrival_utc + ONE_STOP_GROUND_TIME).astimezone(_zone(destination))
    return tuple(legs)


def _periods(flight: DemoFlight, start: date, days: int) -> Iterator[tuple[date, date, tuple]]:
    """Runs of consecutive dates on which every leg has the same local times and offsets.

    A record carries one UTC offset per station, so a period may not span a DST change at
    either end of any leg (SSIM: UTC/local time variation applies to the whole period).
    """

    def shape(day: date) -> tuple:
        return tuple(
            (dep.time(), dep.utcoffset(), (dep.date() - day).days,
             arr.time(), arr.utcoffset(), (arr.date() - day).days)
            for dep, arr in _leg_times(flight, day)
        )  # fmt: skip

    dates = (start + timedelta(days=offset) for offset in range(days))
    for legs, run in groupby(dates, key=shape):
        run_dates = list(run)
        yield run_dates[0], run_dates[-1], legs


def _season(day: date) -> str:
    """IATA season: summer from the last Sunday of March, winter from that of October."""

    def last_sunday(month: int) -> date:
        end = date(day.year, month, 31)
        return end - timedelta(days=(end.weekday() + 1) % 7)

    if day < last_sunday(3):
        return f"W{(day.year - 1) % 100:02d}"
    return f"S{day.year % 100:02d}" if day < last_sunday(10) else f"W{day.year % 100:02d}"


def _date_variation(days: int) -> str:
    return "A" if days == -1 else str(days)


class _Writer:
    """Numbers records serially and pads blocks of five, as SSIM Chapter 7 files are."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.serial = 0

    def add(self, fields: tuple, values: dict[str, str]) -> None:
        self.serial += 1
        values = {**values, "record_serial_number": f"{self.serial:06d}"}
        self.lines.append(format_record(fields, values))

    def pad(self) -> None:
        while len(self.lines) % 5:
            self.lines.append("0" * RECORD_LENGTH)


def demo_ssim(start: date, days: int = 330) -> str:
    """The demo schedule from start for days days, as SSIM text; the same for the same input."""
    if days < 1:
        raise ValueError("days must be at least 1")
    end = start + timedelta(days=days - 1)
    writer = _Writer()
    writer.add(HEADER_FIELDS, {"record_type": "1", "title": "AIRLINE STANDARD SCHEDULE DATA SET"})
    writer.pad()
    writer.add(
        CARRIER_FIELDS,
        {
            "record_type": "2",
            "time_mode": "L",
            "airline_designator": CARRIER,
            "season": _season(start),
            "valid_from": format_date(start),
            "valid_to": format_date(end),
            "creation_date": format_date(start),
            "title": "MX DEMO SCHEDULE",
        },
    )
    writer.pad()
    for flight in demo_flights():
        aircraft = _aircraft(flight.route)
        configuration, prbd = AIRCRAFT[aircraft]
        periods = _periods(flight, start, days)
        for variation, (first, last, legs) in enumerate(periods, start=1):
            designator = {
                "airline_designator": CARRIER,
                "flight_number": f"{flight.number:>4}",
                "itinerary_variation": f"{variation % 100:02d}",
                "itinerary_variation_overflow": str(variation // 100) if variation > 99 else "",
                "service_type": "J",
            }
            stations = pairwise(flight.route)
            for sequence, ((origin, destination), shape) in enumerate(
                zip(stations, legs, strict=True), start=1
            ):
                std, dep_offset, dep_days, sta, arr_offset, arr_days = shape
                writer.add(
                    LEG_FIELDS,
                    {
                        **designator,
                        "record_type": "3",
                        "leg_sequence": f"{sequence:02d}",
                        "period_start": format_date(first),
                        "period_end": format_date(last),
                        "days_of_operation": "1234567",
                        "departure_station": origin,
                        "passenger_std": format_time(std),
                        "aircraft_std": format_time(std),
                        "departure_utc_offset": format_utc_offset(dep_offset),
                        "arrival_station": destination,
                        "aircraft_sta": format_time(sta),
                        "passenger_sta": format_time(sta),
                        "arrival_utc_offset": format_utc_offset(arr_offset),
                        "aircraft_type": aircraft,
                        "prbd": prbd,
                        "aircraft_configuration": configuration,
                        "departure_date_variation": _date_variation(dep_days),
                        "arrival_date_variation": _date_variation(arr_days),
                    },
                )
            if len(flight.route) > 2:
                _add_segment_data(writer, designator, flight.route)
    writer.add(
        TRAILER_FIELDS,
        {
            "record_type": "5",
            "airline_designator": CARRIER,
            "serial_check_reference": f"{writer.serial:06d}",
            "end_code": "E",
        },
    )
    writer.pad()
    return "\n".join(writer.lines) + "\n"


def _add_segment_data(writer: _Writer, designator: dict, route: tuple[str, ...]) -> None:
    """Every segment of a multi-leg flight is electronically ticketed (DEI 505 'ET')."""
    points = "ABCDEFGHIJ"
    for board in range(len(route)):
        for off in range(board + 1, len(route)):
            writer.add(
                SEGMENT_FIELDS,
                {
                    **designator,
                    "record_type": "4",
                    "leg_sequence": f"{len(route) - 1:02d}",  # the leg record it follows
                    "board_point_indicator": points[board],
                    "off_point_indicator": points[off],
                    "data_element_identifier": f"{ELECTRONIC_TICKETING_DEI:03d}",
                    "board_point": route[board],
                    "off_point": route[off],
                    "data": "ET",
                },
            )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Write the MX demo schedule as SSIM.")
    parser.add_argument("--start", type=date.fromisoformat, default=datetime.now(UTC).date())
    parser.add_argument("--days", type=int, default=330)
    parser.add_argument("out", type=Path)
    args = parser.parse_args(argv)
    text = demo_ssim(args.start, args.days)
    schedule = parse_ssim(text, known_station=_airports().__contains__)  # never write a bad file
    args.out.write_text(text, encoding="ascii")
    print(f"wrote {len(schedule.legs)} leg records to {args.out}")


if __name__ == "__main__":
    main()
