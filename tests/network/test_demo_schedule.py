"""The demo schedule generator against DESIGN.md §6's demo data contract."""

from collections import defaultdict
from datetime import UTC, date, datetime, timedelta
from zoneinfo import ZoneInfo

import airportsdata
import pytest

from airline.network.demo_schedule import HUB, block_time, demo_ssim, main
from airline.network.ssim import (
    SsimLeg,
    leg_arrival_utc,
    leg_departure_utc,
    operating_dates,
    parse_ssim,
)

AIRPORTS = airportsdata.load("IATA")
START = date(2025, 1, 1)  # spring forward 09MAR25, fall back 02NOV25
DAYS = 330
CONTRACT_NONSTOPS = [
    ("CHS", "PVD"),
    ("TPA", "PVD"),
    ("CHS", "BDL"),
    ("MCO", "BDL"),
    ("TPA", "ORF"),
    ("MSY", "PIT"),
]


@pytest.fixture(scope="module")
def text() -> str:
    return demo_ssim(START, DAYS)


@pytest.fixture(scope="module")
def schedule(text):
    return parse_ssim(text, known_station=AIRPORTS.__contains__)


def flights(schedule) -> dict[tuple[int, int], list[SsimLeg]]:
    """Legs by (flight number, itinerary variation), in leg sequence."""
    by_flight = defaultdict(list)
    for leg in schedule.legs:
        by_flight[(leg.flight_number, leg.itinerary_variation)].append(leg)
    return by_flight


def all_days() -> set[date]:
    return {START + timedelta(days=n) for n in range(DAYS)}


def nonstop_dates(schedule, origin: str, destination: str) -> set[date]:
    return {
        day
        for legs in flights(schedule).values()
        if len(legs) == 1
        and (legs[0].departure_station, legs[0].arrival_station) == (origin, destination)
        for day in operating_dates(legs[0])
    }


def test_it_writes_a_file_the_parser_accepts_with_known_stations(text, schedule):
    assert all(len(line) == 200 for line in text.splitlines())
    assert [carrier.airline_designator for carrier in schedule.carriers] == ["MX"]
    assert len(schedule.legs) > 300


def test_it_covers_the_requested_days_from_the_start(schedule):
    (carrier,) = schedule.carriers
    assert (carrier.valid_from, carrier.valid_to) == (START, START + timedelta(days=DAYS - 1))
    assert min(leg.period_start for leg in schedule.legs) == START
    assert max(leg.period_end for leg in schedule.legs) == START + timedelta(days=DAYS - 1)


@pytest.mark.parametrize(("a", "b"), CONTRACT_NONSTOPS)
def test_it_flies_the_contract_nonstops_daily_both_ways(schedule, a, b):
    assert nonstop_dates(schedule, a, b) == all_days()
    assert nonstop_dates(schedule, b, a) == all_days()


@pytest.mark.parametrize("route", [("PVD", "CHS", "TPA"), ("TPA", "CHS", "PVD")])
def test_it_flies_a_one_stop_flight_on_one_flight_number(schedule, route):
    variations = [
        legs
        for legs in flights(schedule).values()
        if (legs[0].departure_station, *(leg.arrival_station for leg in legs)) == route
    ]
    assert len({legs[0].flight_number for legs in variations}) == 1
    days = set()
    for first, second in variations:
        assert (first.leg_sequence, second.leg_sequence) == (1, 2)
        assert (first.period_start, first.period_end) == (second.period_start, second.period_end)
        assert first.arrival_station == second.departure_station == "CHS"
        days |= set(operating_dates(first))
        for day in operating_dates(first):
            ground = leg_departure_utc(second, day) - leg_arrival_utc(first, day)
            assert ground == timedelta(minutes=45)
    assert days == all_days()


def test_it_serves_pvd_msy_by_connections_only(schedule):
    for legs in flights(schedule).values():
        stations = {legs[0].departure_station} | {leg.arrival_station for leg in legs}
        assert not {"PVD", "MSY"} <= stations, legs[0].flight_designator


@pytest.mark.parametrize(("origin", "destination"), [("PVD", "MSY"), ("MSY", "PVD")])
@pytest.mark.parametrize("day", [date(2025, 1, 15), date(2025, 3, 9), date(2025, 7, 4)])
def test_it_connects_pvd_and_msy_at_the_hub_within_45_minutes_to_6_hours(
    schedule, origin, destination, day
):
    def legs_on(a: str, b: str) -> list[SsimLeg]:
        return [
            leg
            for leg in schedule.legs
            if (leg.departure_station, leg.arrival_station) == (a, b)
            and list(operating_dates(leg, day, day))
        ]

    connections = [
        (first.flight_number, second.flight_number)
        for first in legs_on(origin, HUB)
        for second in legs_on(HUB, destination)
        if timedelta(minutes=45)
        <= leg_departure_utc(second, day) - leg_arrival_utc(first, day)
        <= timedelta(hours=6)
    ]
    assert len(connections) >= 2


def test_it_serves_at_least_25_us_stations(schedule):
    stations = {leg.departure_station for leg in schedule.legs}
    stations |= {leg.arrival_station for leg in schedule.legs}
    assert len(stations) >= 25
    assert {AIRPORTS[code]["country"] for code in stations} == {"US"}


def test_it_uses_two_aircraft_types_with_different_seat_maps(schedule):
    configurations = {leg.aircraft_type: dict(leg.seat_configuration) for leg in schedule.legs}
    assert configurations == {"320": {"C": 12, "Y": 138}, "E75": {"Y": 76}}


def test_its_hub_spokes_fly_several_times_a_day_both_ways(schedule):
    day = date(2025, 6, 1)
    per_day = defaultdict(int)
    for leg in schedule.legs:
        if HUB in (leg.departure_station, leg.arrival_station) and list(
            operating_dates(leg, day, day)
        ):
            per_day[(leg.departure_station, leg.arrival_station)] += 1
    spokes = {a for a, b in per_day if b == HUB}
    assert len(spokes) >= 24
    assert all(per_day[(spoke, HUB)] >= 1 and per_day[(HUB, spoke)] >= 2 for spoke in spokes)


def test_its_departures_are_between_6_and_22_local(schedule):
    assert all("06:00" <= leg.passenger_std.isoformat() <= "22:00" for leg in schedule.legs)


def test_its_block_times_follow_the_great_circle_distance(schedule):
    assert block_time("CLT", "PVD") == timedelta(hours=1, minutes=55)
    leg = next(
        leg
        for leg in schedule.legs
        if (leg.departure_station, leg.arrival_station) == ("CLT", "PVD")
    )
    assert leg_arrival_utc(leg, leg.period_start) - leg_departure_utc(leg, leg.period_start) == (
        block_time("CLT", "PVD")
    )


def test_its_utc_offsets_match_the_time_zones_on_every_date(schedule):
    for leg in schedule.legs:
        departure_zone = ZoneInfo(AIRPORTS[leg.departure_station]["tz"])
        arrival_zone = ZoneInfo(AIRPORTS[leg.arrival_station]["tz"])
        for day in operating_dates(leg):
            departure = leg_departure_utc(leg, day).astimezone(departure_zone)
            arrival = leg_arrival_utc(leg, day).astimezone(arrival_zone)
            assert departure.utcoffset() == leg.departure_utc_offset, (leg.line, day)
            assert arrival.utcoffset() == leg.arrival_utc_offset, (leg.line, day)
            assert departure.time() == leg.passenger_std
            assert arrival.time() == leg.passenger_sta


def test_it_splits_periods_at_the_us_dst_changes(schedule):
    (before, summer, after) = [
        leg for leg in schedule.legs if leg.flight_number == 101 and leg.leg_sequence == 1
    ]
    assert (before.period_end, summer.period_start) == (date(2025, 3, 8), date(2025, 3, 9))
    assert (summer.period_end, after.period_start) == (date(2025, 11, 1), date(2025, 11, 2))
    assert before.departure_utc_offset == after.departure_utc_offset == timedelta(hours=-5)
    assert summer.departure_utc_offset == timedelta(hours=-4)
    charleston = ZoneInfo("America/New_York")
    for record, day in ((before, date(2025, 3, 8)), (summer, date(2025, 3, 9))):
        local = datetime.combine(day, record.passenger_std, tzinfo=charleston)
        assert leg_departure_utc(record, day) == local.astimezone(UTC)


def test_it_keeps_phoenix_on_standard_time_all_year(schedule):
    offsets = {leg.departure_utc_offset for leg in schedule.legs if leg.departure_station == "PHX"}
    assert offsets == {timedelta(hours=-7)}


def test_it_is_deterministic(text):
    assert demo_ssim(START, DAYS) == text


def test_it_starts_on_any_date():
    text = demo_ssim(date(2026, 10, 20), 30)  # across the 01NOV26 change
    schedule = parse_ssim(text, known_station=AIRPORTS.__contains__)
    assert max(leg.period_end for leg in schedule.legs) == date(2026, 11, 18)


def test_its_command_writes_the_file(tmp_path, capsys):
    out = tmp_path / "demo.ssim"
    main(["--start", "2025-01-01", "--days", "10", str(out)])
    assert out.read_text(encoding="ascii") == demo_ssim(START, 10)
    assert parse_ssim(out.read_text(encoding="ascii")).carriers[0].valid_to == date(2025, 1, 10)
    assert "leg records" in capsys.readouterr().out
