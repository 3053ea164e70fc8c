"""Small SSIM files for tests, written with the parser's own record layout."""

from dataclasses import dataclass, field
from datetime import date, time, timedelta

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
)


@dataclass
class Leg:
    number: int
    origin: str
    destination: str
    departs: time
    arrives: time
    start: date
    end: date
    days: str = "1234567"
    sequence: int = 1
    variation: int = 1
    departure_offset: timedelta = timedelta(hours=-5)
    arrival_offset: timedelta = timedelta(hours=-5)
    arrival_day: int = 0
    aircraft: str = "E75"
    configuration: str = "Y76"
    segment_data: list[tuple[int, str]] = field(default_factory=list)  # (DEI, text)


def ssim_file(legs: list[Leg], carrier: str = "MX") -> str:
    lines: list[str] = []

    def add(fields, values):
        lines.append(
            format_record(fields, {**values, "record_serial_number": f"{len(lines) + 1:06d}"})
        )

    def pad():
        while len(lines) % 5:
            lines.append("0" * RECORD_LENGTH)

    add(HEADER_FIELDS, {"record_type": "1", "title": "AIRLINE STANDARD SCHEDULE DATA SET"})
    pad()
    add(
        CARRIER_FIELDS,
        {
            "record_type": "2",
            "time_mode": "L",
            "airline_designator": carrier,
            "season": "W26",
            "valid_from": format_date(min(leg.start for leg in legs)),
            "valid_to": format_date(max(leg.end for leg in legs)),
            "title": "TEST",
        },
    )
    pad()
    for leg in legs:
        designator = {
            "airline_designator": carrier,
            "flight_number": f"{leg.number:>4}",
            "itinerary_variation": f"{leg.variation:02d}",
            "service_type": "J",
        }
        add(
            LEG_FIELDS,
            {
                **designator,
                "record_type": "3",
                "leg_sequence": f"{leg.sequence:02d}",
                "period_start": format_date(leg.start),
                "period_end": format_date(leg.end),
                "days_of_operation": "".join(d if d in leg.days else " " for d in "1234567"),
                "departure_station": leg.origin,
                "passenger_std": format_time(leg.departs),
                "aircraft_std": format_time(leg.departs),
                "departure_utc_offset": format_utc_offset(leg.departure_offset),
                "arrival_station": leg.destination,
                "passenger_sta": format_time(leg.arrives),
                "aircraft_sta": format_time(leg.arrives),
                "arrival_utc_offset": format_utc_offset(leg.arrival_offset),
                "aircraft_type": leg.aircraft,
                "aircraft_configuration": leg.configuration,
                "departure_date_variation": "0",
                "arrival_date_variation": str(leg.arrival_day),
            },
        )
        for dei, text in leg.segment_data:
            add(
                SEGMENT_FIELDS,
                {
                    **designator,
                    "record_type": "4",
                    "leg_sequence": f"{leg.sequence:02d}",
                    "board_point_indicator": "A",
                    "off_point_indicator": "B",
                    "data_element_identifier": f"{dei:03d}",
                    "board_point": leg.origin,
                    "off_point": leg.destination,
                    "data": text,
                },
            )
    add(
        TRAILER_FIELDS,
        {
            "record_type": "5",
            "airline_designator": carrier,
            "serial_check_reference": f"{len(lines):06d}",
            "end_code": "E",
        },
    )
    pad()
    return "\n".join(lines) + "\n"
