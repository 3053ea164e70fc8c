"""The SSIM Chapter 7 reader: a real third-party file, malformed files, and time arithmetic."""

import os
from datetime import UTC, date, datetime, time, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import airportsdata
import pytest
from hypothesis import given
from hypothesis import strategies as st

from airline.network.ssim import (
    CARRIER_FIELDS,
    HEADER_FIELDS,
    LEG_FIELDS,
    SEGMENT_FIELDS,
    TRAILER_FIELDS,
    SsimError,
    SsimFileError,
    format_date,
    format_record,
    format_utc_offset,
    leg_arrival_utc,
    leg_departure_utc,
    operating_dates,
    parse_ssim,
)

REPO = Path(__file__).resolve().parents[2]
SAMPLES = Path(os.environ.get("SSIM_SAMPLES_DIR", REPO / ".." / "shared" / "ssim-samples"))
AIRPORTS = airportsdata.load("IATA")
PADDING = "0" * 200


def known_station(code: str) -> bool:
    return code in AIRPORTS


def leg(**values: str) -> str:
    """A valid record 3 of XX 100 PVD-CHS, daily in June 2025; values override fields."""
    fields = {
        "record_type": "3",
        "airline_designator": "XX",
        "flight_number": " 100",
        "itinerary_variation": "01",
        "leg_sequence": "01",
        "service_type": "J",
        "period_start": "01JUN25",
        "period_end": "30JUN25",
        "days_of_operation": "1234567",
        "departure_station": "PVD",
        "passenger_std": "0700",
        "aircraft_std": "0700",
        "departure_utc_offset": "-0400",
        "arrival_station": "CHS",
        "aircraft_sta": "0905",
        "passenger_sta": "0905",
        "arrival_utc_offset": "-0400",
        "aircraft_type": "320",
        "prbd": "CY",
        "aircraft_configuration": "C12Y138",
        "record_serial_number": "000003",
    }
    return format_record(LEG_FIELDS, {**fields, **values})


def segment(**values: str) -> str:
    fields = {
        "record_type": "4",
        "airline_designator": "XX",
        "flight_number": " 100",
        "itinerary_variation": "01",
        "leg_sequence": "01",
        "service_type": "J",
        "board_point_indicator": "A",
        "off_point_indicator": "B",
        "data_element_identifier": "505",
        "board_point": "PVD",
        "off_point": "CHS",
        "data": "ET",
    }
    return format_record(SEGMENT_FIELDS, {**fields, **values})


def ssim_file(*records: str, time_mode: str = "L") -> str:
    """Header and carrier records (lines 1 and 2), the given records from line 3, a trailer."""
    header = format_record(HEADER_FIELDS, {"record_type": "1", "title": "AIRLINE STANDARD"})
    carrier = format_record(
        CARRIER_FIELDS,
        {
            "record_type": "2",
            "time_mode": time_mode,
            "airline_designator": "XX",
            "valid_from": "01JAN25",
            "valid_to": "31DEC25",
            "creation_date": "01JAN25",
        },
    )
    trailer = format_record(
        TRAILER_FIELDS,
        {
            "record_type": "5",
            "airline_designator": "XX",
            "serial_check_reference": "000009",
            "end_code": "E",
            "record_serial_number": "000010",
        },
    )
    return "\n".join([header, carrier, *records, trailer]) + "\n"


def errors_of(text: str, **options) -> list[SsimError]:
    with pytest.raises(SsimFileError) as caught:
        parse_ssim(text, **options)
    return caught.value.errors


@pytest.fixture(scope="module")
def sample():
    return parse_ssim(
        (SAMPLES / "avionworx-sample.ssim").read_text(encoding="ascii"), known_station=known_station
    )


# The avionworx sample: a real SSIM file written by another team.


def test_it_reads_the_avionworx_sample_completely(sample):
    assert [carrier.airline_designator for carrier in sample.carriers] == ["XX", "XX"]
    assert sample.title == "AIRLINE STANDARD SCHEDULE DATA SET"
    assert len(sample.legs) == 514
    assert len({(leg.flight_number, leg.operational_suffix) for leg in sample.legs}) == 91
    assert [(t.serial_check_reference, t.record_serial_number) for t in sample.trailers] == [
        (515, 516),
        (517, 518),
    ]


def test_it_reads_the_carrier_record_of_the_sample(sample):
    carrier = sample.carriers[0]
    assert carrier.line == 6
    assert carrier.time_mode == "L"
    assert (carrier.valid_from, carrier.valid_to) == (date(2005, 6, 9), date(2005, 6, 9))
    assert carrier.creation_date == date(2024, 1, 11)
    assert sample.carriers[1].valid_from == date(2005, 10, 30)


def test_it_reads_a_multi_period_flight_of_the_sample(sample):
    flight = [leg for leg in sample.legs if leg.flight_number == 102]
    assert [leg.itinerary_variation for leg in flight] == list(range(1, 20))
    assert {(leg.departure_station, leg.arrival_station) for leg in flight} == {("RUN", "MRU")}
    first = flight[0]
    assert first.line == 13
    assert (first.period_start, first.period_end) == (date(2005, 5, 23), date(2005, 6, 13))
    assert first.days_of_operation == {1, 3, 5, 6}
    assert (first.passenger_std, first.passenger_sta) == (time(8, 0), time(8, 40))
    assert first.departure_utc_offset == first.arrival_utc_offset == timedelta(hours=4)
    assert first.aircraft_type == "735"
    assert dict(first.seat_configuration) == {"Y": 118}
    assert first.onward_flight.flight_number == 103
    assert flight[1].days_of_operation == {2}
    assert flight[1].aircraft_type == "733"


def test_it_reads_the_aircraft_configuration_and_version(sample):
    record = next(leg for leg in sample.legs if leg.line == 26)  # XX 102, IVI 14
    assert (record.period_start, record.period_end) == (date(2005, 10, 6), date(2005, 10, 8))
    assert record.days_of_operation == {4, 6}
    assert record.aircraft_configuration == "W18Y112VV112"
    assert list(record.seat_configuration.items()) == [("W", 18), ("Y", 112)]
    assert record.aircraft_version == "112"
    assert record.prbd == "WY"


def test_it_reads_negative_utc_offsets_and_infers_a_next_day_arrival(sample):
    record = next(leg for leg in sample.legs if leg.line == 519)  # XX 3777 SEA-RUN
    assert record.departure_utc_offset == timedelta(hours=-7)
    assert record.arrival_date_variation is None  # the sample never fills it in
    assert leg_departure_utc(record, date(2005, 5, 22)) == datetime(2005, 5, 22, 16, tzinfo=UTC)
    assert leg_arrival_utc(record, date(2005, 5, 22)) == datetime(2005, 5, 23, 11, 40, tzinfo=UTC)


def test_it_reads_the_offset_change_of_the_sample_after_european_dst(sample):
    record = next(leg for leg in sample.legs if leg.line == 455)  # XX 975 leg 2 RUN-CDG
    assert (record.flight_number, record.leg_sequence) == (975, 2)
    assert record.arrival_utc_offset == timedelta(hours=1)  # CET from 30 Oct 2005
    arrival = leg_arrival_utc(record, date(2005, 10, 29))
    assert arrival == datetime(2005, 10, 30, 3, 30, tzinfo=UTC)
    paris = datetime(2005, 10, 30, 4, 30, tzinfo=ZoneInfo("Europe/Paris"))
    assert arrival == paris


def test_it_tells_flights_apart_by_operational_suffix(sample):
    charters = [leg for leg in sample.legs if leg.flight_number == 777]
    suffixed = {
        leg.flight_designator: leg.period_start for leg in charters if leg.operational_suffix
    }
    assert suffixed == {"XX 777A": date(2005, 5, 27), "XX 777B": date(2005, 5, 27)}


def test_it_reads_the_legs_of_a_multi_leg_flight_of_the_sample(sample):
    legs = [
        leg for leg in sample.legs if leg.flight_number == 975 and leg.itinerary_variation == 17
    ]
    assert [(leg.leg_sequence, leg.departure_station, leg.arrival_station) for leg in legs] == [
        (1, "DZA", "RUN"),
        (2, "RUN", "CDG"),
    ]


# Malformed files: every error names its line and field.


def test_it_reads_a_minimal_file():
    schedule = parse_ssim(ssim_file(leg()), known_station=known_station)
    (record,) = schedule.legs
    assert record.line == 3
    assert record.flight_designator == "XX 100"
    assert list(record.seat_configuration.items()) == [("C", 12), ("Y", 138)]


def test_it_skips_padding_records_and_crlf_line_ends():
    text = ssim_file(PADDING, leg(), PADDING).replace("\n", "\r\n")
    assert [record.line for record in parse_ssim(text).legs] == [4]


def test_it_rejects_a_record_of_the_wrong_length():
    (error,) = errors_of(ssim_file(leg()[:199]))
    assert (error.line, error.field) == (3, "record")
    assert "199 characters" in error.message


def test_it_rejects_an_unknown_record_type():
    (error,) = errors_of(ssim_file("7" + leg()[1:]))
    assert (error.line, error.field) == (3, "record_type")


def test_it_rejects_a_period_ending_before_it_starts():
    (error,) = errors_of(ssim_file(leg(period_start="09JUN25", period_end="01JAN25")))
    assert (error.line, error.field) == (3, "period_of_operation")
    assert str(error) == "line 3, field period_of_operation: end 01JAN25 before start 09JUN25"


def test_it_rejects_an_impossible_date():
    (error,) = errors_of(ssim_file(leg(period_end="30FEB25")))
    assert (error.line, error.field) == (3, "period_end")


def test_it_runs_an_open_ended_period_to_the_end_of_the_carrier_validity():
    (record,) = parse_ssim(ssim_file(leg(period_end="00XXX00"))).legs
    assert record.period_end == date(2025, 12, 31)


def test_it_rejects_an_unknown_station():
    text = ssim_file(leg(), leg(arrival_station="ZZZ", flight_number=" 101"))
    (error,) = errors_of(text, known_station=known_station)
    assert (error.line, error.field) == (4, "arrival_station")
    assert error.message == "unknown station ZZZ"
    assert parse_ssim(text).legs[1].arrival_station == "ZZZ"  # without a station list


def test_it_rejects_a_malformed_station_code():
    (error,) = errors_of(ssim_file(leg(departure_station="P1D")))
    assert (error.line, error.field) == (3, "departure_station")


def test_it_rejects_overlapping_periods_of_the_same_flight_leg():
    text = ssim_file(
        leg(period_start="01JUN25", period_end="15JUN25"),
        leg(itinerary_variation="02", period_start="10JUN25", period_end="30JUN25"),
    )
    (error,) = errors_of(text)
    assert (error.line, error.field) == (4, "period_of_operation")
    assert "overlaps line 3 on 10JUN25" in error.message


def test_it_accepts_overlapping_periods_on_different_days():
    text = ssim_file(
        leg(days_of_operation="1 3 5  "),
        leg(itinerary_variation="02", days_of_operation=" 2 4 67"),
        leg(flight_number=" 100", operational_suffix="A"),  # another flight
        leg(leg_sequence="02", departure_station="CHS", arrival_station="TPA"),
    )
    assert len(parse_ssim(text).legs) == 4


def test_it_rejects_bad_days_of_operation():
    (error,) = errors_of(ssim_file(leg(days_of_operation="1 3 6  ")))
    assert (error.line, error.field) == (3, "days_of_operation")
    assert "position 5 holds '6'" in error.message


def test_it_rejects_a_leg_without_days_of_operation():
    (error,) = errors_of(ssim_file(leg(days_of_operation="")))
    assert (error.line, error.field) == (3, "days_of_operation")


def test_it_rejects_a_bad_time():
    (error,) = errors_of(ssim_file(leg(), leg(itinerary_variation="02", passenger_sta="2460")))
    assert (error.line, error.field) == (4, "passenger_sta")
    assert error.message == "'2460' is not a valid HHMM time"


def test_it_rejects_a_bad_utc_variation():
    (error,) = errors_of(ssim_file(leg(departure_utc_offset="0400")))
    assert (error.line, error.field) == (3, "departure_utc_offset")


def test_it_rejects_an_arrival_date_variation_before_departure():
    (error,) = errors_of(ssim_file(leg(arrival_date_variation="A")))
    assert (error.line, error.field) == (3, "arrival_date_variation")


def test_it_lists_every_error_of_a_file():
    text = ssim_file(
        leg(passenger_std="9999"),
        PADDING[:10],
        leg(itinerary_variation="02", days_of_operation="7654321"),
    )
    with pytest.raises(SsimFileError) as caught:
        parse_ssim(text)
    assert [(e.line, e.field) for e in caught.value.errors] == [
        (3, "passenger_std"),
        (4, "record"),
        (5, "days_of_operation"),
    ]
    assert "3 error(s)" in str(caught.value)
    assert "line 5, field days_of_operation" in str(caught.value)


def test_it_rejects_legs_before_a_carrier_record():
    (error,) = errors_of(leg() + "\n")
    assert (error.line, error.field) == (1, "record_type")


def test_it_attaches_segment_data_to_its_leg():
    schedule = parse_ssim(ssim_file(leg(), segment()), known_station=known_station)
    (record,) = schedule.legs
    (data,) = record.segment_data
    assert (data.line, data.leg_line) == (4, 3)
    assert (data.data_element_identifier, data.board_point, data.off_point) == (505, "PVD", "CHS")
    assert data.data == "ET"
    assert schedule.segment_data == (data,)


def test_it_rejects_segment_data_of_another_flight():
    (error,) = errors_of(ssim_file(leg(), segment(flight_number=" 101")))
    assert (error.line, error.field) == (4, "flight_number")


# Multi-leg flights, days of operation and UTC times.


def test_it_times_a_multi_leg_flight_over_midnight():
    text = ssim_file(
        leg(passenger_std="2100", passenger_sta="2305", arrival_station="CHS"),
        leg(
            leg_sequence="02",
            departure_station="CHS",
            passenger_std="0005",
            arrival_station="MSY",
            passenger_sta="0045",
            arrival_utc_offset="-0500",
            departure_date_variation="1",
            arrival_date_variation="1",
        ),
    )
    first, second = parse_ssim(text, known_station=known_station).legs
    day = date(2025, 6, 2)
    assert leg_arrival_utc(first, day) == datetime(2025, 6, 3, 3, 5, tzinfo=UTC)
    assert leg_departure_utc(second, day) == datetime(2025, 6, 3, 4, 5, tzinfo=UTC)
    assert leg_arrival_utc(second, day) == datetime(2025, 6, 3, 5, 45, tzinfo=UTC)


def test_it_expands_days_of_operation():
    (record,) = parse_ssim(ssim_file(leg(days_of_operation="1 3    "))).legs
    days = list(operating_dates(record, date(2025, 6, 1), date(2025, 6, 15)))
    assert days == [date(2025, 6, d) for d in (2, 4, 9, 11)]
    assert all(day.isoweekday() in (1, 3) for day in operating_dates(record))


def test_it_expands_a_fortnightly_frequency_from_the_week_of_the_period_start():
    # 05JUN25 is a Thursday: its week and every other week after it operate.
    text = ssim_file(leg(period_start="05JUN25", days_of_operation="1  4   ", frequency_rate="2"))
    (record,) = parse_ssim(text).legs
    assert list(operating_dates(record)) == [
        date(2025, 6, 5),
        date(2025, 6, 16),
        date(2025, 6, 19),
        date(2025, 6, 30),
    ]


def test_it_times_a_departure_on_the_us_spring_forward_night():
    # 09MAR25 02:00 EST becomes 03:00 EDT: a 01:30 departure is still EST, the arrival EDT.
    text = ssim_file(
        leg(
            period_start="09MAR25",
            period_end="09MAR25",
            passenger_std="0130",
            departure_utc_offset="-0500",
            departure_station="BOS",
            arrival_station="MCO",
            passenger_sta="0530",
            arrival_utc_offset="-0400",
        )
    )
    (record,) = parse_ssim(text, known_station=known_station).legs
    new_york = ZoneInfo("America/New_York")
    departure = leg_departure_utc(record, date(2025, 3, 9))
    arrival = leg_arrival_utc(record, date(2025, 3, 9))
    assert (
        departure
        == datetime(2025, 3, 9, 1, 30, tzinfo=new_york)
        == datetime(2025, 3, 9, 6, 30, tzinfo=UTC)
    )
    assert arrival == datetime(2025, 3, 9, 5, 30, tzinfo=new_york)
    assert arrival - departure == timedelta(hours=3)


def test_it_times_an_arrival_on_the_next_day():
    text = ssim_file(
        leg(
            departure_station="LAX",
            passenger_std="2230",
            departure_utc_offset="-0700",
            arrival_station="JFK",
            passenger_sta="0650",
            arrival_utc_offset="-0400",
            arrival_date_variation="1",
        )
    )
    (record,) = parse_ssim(text, known_station=known_station).legs
    assert leg_departure_utc(record, date(2025, 6, 5)) == datetime(2025, 6, 6, 5, 30, tzinfo=UTC)
    assert leg_arrival_utc(record, date(2025, 6, 5)) == datetime(2025, 6, 6, 10, 50, tzinfo=UTC)


def test_it_reads_times_as_utc_in_utc_time_mode():
    (record,) = parse_ssim(ssim_file(leg(), time_mode="U")).legs
    assert leg_departure_utc(record, date(2025, 6, 5)) == datetime(2025, 6, 5, 7, 0, tzinfo=UTC)


@given(
    day=st.dates(date(2000, 1, 1), date(2099, 12, 31)),
    quarters=st.integers(min_value=-12 * 4, max_value=14 * 4),
)
def test_it_reads_back_every_date_and_utc_variation_it_formats(day, quarters):
    offset = timedelta(minutes=15 * quarters)
    text = ssim_file(
        leg(
            period_start=format_date(day),
            period_end=format_date(day),
            departure_utc_offset=format_utc_offset(offset),
        )
    )
    (record,) = parse_ssim(text).legs
    assert (record.period_start, record.departure_utc_offset) == (day, offset)
