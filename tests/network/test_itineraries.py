"""Journey building (DESIGN.md §6): nonstop, direct, connections within 45 min - 6 h, no
revisited station, station-local dates, correct across DST and the date line."""

import itertools
from datetime import UTC, date, datetime, timedelta
from zoneinfo import ZoneInfo

from airline.network.itineraries import DatedLeg, NetworkIndex

ZONES = {
    "PVD": "America/New_York",
    "CHS": "America/New_York",
    "TPA": "America/New_York",
    "CLT": "America/New_York",
    "MSY": "America/Chicago",
    "PHX": "America/Phoenix",
    "HNL": "Pacific/Honolulu",
    "GUM": "Pacific/Guam",
}
_ids = itertools.count(1)


def leg(
    number: int,
    origin: str,
    destination: str,
    departs: datetime,
    minutes: int,
    sequence: int = 1,
    flight_date: date | None = None,
) -> DatedLeg:
    return DatedLeg(
        id=next(_ids),
        carrier="MX",
        flight_number=number,
        flight_date=flight_date or departs.astimezone(ZoneInfo(ZONES[origin])).date(),
        leg_sequence=sequence,
        origin=origin,
        destination=destination,
        departs_at=departs,
        arrives_at=departs + timedelta(minutes=minutes),
        aircraft_type="E75",
        configuration_id=1,
        govt_approval_disclosure="",
    )


def utc(*args) -> datetime:
    return datetime(*args, tzinfo=UTC)


def index(*legs: DatedLeg) -> NetworkIndex:
    return NetworkIndex(version=1, legs=list(legs), time_zones=ZONES)


def flights(journeys) -> list[str]:
    return ["+".join(f"{s.flight_number}" for s in j.segments) for j in journeys]


DAY = date(2027, 3, 1)


def test_a_nonstop():
    network = index(leg(101, "PVD", "CHS", utc(2027, 3, 1, 12), 125))

    [journey] = network.journeys("PVD", "CHS", DAY)

    assert (journey.stops, journey.duration, len(journey.segments)) == (
        0,
        timedelta(minutes=125),
        1,
    )


def test_a_direct_one_stop_flight_is_one_segment_of_two_legs():
    first = leg(501, "PVD", "CHS", utc(2027, 3, 1, 12), 125, sequence=1)
    second = leg(501, "CHS", "TPA", utc(2027, 3, 1, 14, 50), 90, sequence=2, flight_date=DAY)
    network = index(first, second)

    [journey] = network.journeys("PVD", "TPA", DAY)

    assert len(journey.segments) == 1
    assert journey.segments[0].legs == (first, second)
    assert journey.stops == 1  # DESIGN.md §11: total legs - 1
    assert flights(network.journeys("CHS", "TPA", DAY)) == ["501"]  # boarding at the stop
    assert flights(network.journeys("PVD", "CHS", DAY)) == ["501"]  # leaving at the stop


def test_a_connection_needs_at_least_45_minutes():
    arrival = utc(2027, 3, 1, 14)
    network = index(
        leg(1001, "PVD", "CLT", arrival - timedelta(minutes=120), 120),
        leg(1021, "CLT", "MSY", arrival + timedelta(minutes=44), 120),
        leg(1023, "CLT", "MSY", arrival + timedelta(minutes=45), 120),
    )

    journeys = network.journeys("PVD", "MSY", DAY)

    assert flights(journeys) == ["1001+1023"]
    assert journeys[0].stops == 1


def test_a_connection_may_wait_at_most_6_hours():
    arrival = utc(2027, 3, 1, 14)
    network = index(
        leg(1001, "PVD", "CLT", arrival - timedelta(minutes=120), 120),
        leg(1021, "CLT", "MSY", arrival + timedelta(hours=6), 120),
        leg(1023, "CLT", "MSY", arrival + timedelta(hours=6, minutes=1), 120),
    )

    assert flights(network.journeys("PVD", "MSY", DAY)) == ["1001+1021"]


def test_a_connection_never_revisits_a_station():
    network = index(
        leg(501, "PVD", "CHS", utc(2027, 3, 1, 12), 120, sequence=1),
        leg(501, "CHS", "TPA", utc(2027, 3, 1, 14, 45), 90, sequence=2, flight_date=DAY),
        leg(601, "TPA", "CHS", utc(2027, 3, 1, 17), 90, sequence=1),
        leg(601, "CHS", "MSY", utc(2027, 3, 1, 19), 120, sequence=2, flight_date=DAY),
    )

    [journey] = network.journeys("PVD", "MSY", DAY)

    # PVD-CHS-TPA, then TPA-CHS-MSY would visit CHS twice; only PVD-CHS then CHS-MSY is offered.
    assert [s.stations for s in journey.segments] == [("PVD", "CHS"), ("CHS", "MSY")]


def test_staying_on_the_same_flight_is_not_a_connection():
    network = index(
        leg(501, "PVD", "CHS", utc(2027, 3, 1, 12), 120, sequence=1),
        leg(501, "CHS", "TPA", utc(2027, 3, 1, 14, 45), 90, sequence=2, flight_date=DAY),
    )

    assert flights(network.journeys("PVD", "TPA", DAY)) == ["501"]


def test_the_date_is_the_origins_local_date():
    network = index(
        leg(1, "PVD", "CHS", utc(2027, 3, 1, 5, 30), 120),  # 00:30 local on the 1st
        leg(2, "PVD", "CHS", utc(2027, 3, 2, 4, 30), 120),  # 23:30 local on the 1st
        leg(3, "PVD", "CHS", utc(2027, 3, 2, 5, 30), 120),  # 00:30 local on the 2nd
    )

    assert flights(network.journeys("PVD", "CHS", DAY)) == ["1", "2"]


def test_a_flight_on_the_spring_forward_night_has_its_true_duration():
    """2027-03-14: New York goes from 02:00 EST to 03:00 EDT. 01:30 EST to 04:30 EDT is
    two hours in the air, not three."""
    departs = datetime(2027, 3, 14, 1, 30, tzinfo=ZoneInfo("America/New_York"))
    network = index(leg(7, "PVD", "CHS", departs.astimezone(UTC), 120))

    [journey] = network.journeys("PVD", "CHS", date(2027, 3, 14))

    assert journey.duration == timedelta(hours=2)
    assert journey.arrives_at.astimezone(ZoneInfo("America/New_York")).hour == 4


def test_the_local_day_is_23_hours_on_the_spring_forward_date():
    new_york = ZoneInfo("America/New_York")
    network = index(
        leg(1, "PVD", "CHS", datetime(2027, 3, 14, 0, 10, tzinfo=new_york).astimezone(UTC), 60),
        leg(2, "PVD", "CHS", datetime(2027, 3, 14, 23, 50, tzinfo=new_york).astimezone(UTC), 60),
        leg(3, "PVD", "CHS", datetime(2027, 3, 15, 0, 10, tzinfo=new_york).astimezone(UTC), 60),
    )

    assert flights(network.journeys("PVD", "CHS", date(2027, 3, 14))) == ["1", "2"]


def test_a_flight_across_the_date_line_takes_its_flying_time_not_the_clock_difference():
    departs = datetime(2027, 3, 1, 14, 0, tzinfo=ZoneInfo("Pacific/Honolulu"))  # 00:00Z on the 2nd
    network = index(leg(9, "HNL", "GUM", departs.astimezone(UTC), 7 * 60 + 35))

    [journey] = network.journeys("HNL", "GUM", DAY)

    arrival = journey.arrives_at.astimezone(ZoneInfo("Pacific/Guam"))
    assert (arrival.date(), arrival.hour, arrival.minute) == (
        date(2027, 3, 2),
        17,
        35,
    )  # next day locally
    assert journey.duration == timedelta(hours=7, minutes=35)
    assert network.journeys("HNL", "GUM", date(2027, 3, 2)) == []


def test_a_connection_into_the_next_day_counts():
    network = index(
        leg(
            1, "PHX", "CLT", utc(2027, 3, 2, 1), 240
        ),  # 18:00 local on the 1st, arrives 05:00Z on the 2nd
        leg(2, "CLT", "PVD", utc(2027, 3, 2, 11), 120),  # 06:00 local on the 2nd
    )

    assert flights(network.journeys("PHX", "PVD", DAY)) == ["1+2"]


def test_journeys_are_earliest_first_then_shortest():
    network = index(
        leg(1, "PVD", "CHS", utc(2027, 3, 1, 15), 120),
        leg(2, "PVD", "CLT", utc(2027, 3, 1, 12), 100),
        leg(3, "CLT", "CHS", utc(2027, 3, 1, 14, 30), 60),
        leg(4, "PVD", "CHS", utc(2027, 3, 1, 12), 130),
    )

    assert flights(network.journeys("PVD", "CHS", DAY)) == ["4", "2+3", "1"]


def test_served_markets_include_connections_but_not_unserved_pairs():
    network = index(
        leg(1001, "PVD", "CLT", utc(2027, 3, 1, 12), 120),
        leg(1021, "CLT", "MSY", utc(2027, 3, 1, 15), 120),
    )

    assert {("PVD", "CLT"), ("CLT", "MSY"), ("PVD", "MSY")} == set(network.served_markets)


def test_dates_at_the_ends_of_the_calendar_have_no_flights():
    network = index(leg(1, "PVD", "CHS", utc(2027, 3, 1, 12), 120))

    assert network.journeys("PVD", "CHS", date.max) == []
    assert network.journeys("PVD", "CHS", date.min) == []


def test_unknown_stations_and_same_station_give_nothing():
    network = index(leg(1, "PVD", "CHS", utc(2027, 3, 1, 12), 120))

    assert network.journeys("PVD", "PVD", DAY) == []
    assert network.journeys("XXX", "CHS", DAY) == []
