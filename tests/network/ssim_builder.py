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


# --- Edits of a whole file (the demo schedule): what an airline's next file changes -------

_COLUMNS = {name: (start - 1, end) for name, start, end, _ in LEG_FIELDS}
_TIMES = ("passenger_std", "aircraft_std", "aircraft_sta", "passenger_sta")


def _field(line: str, name: str) -> str:
    start, end = _COLUMNS[name]
    return line[start:end]


def _with(line: str, **values: str) -> str:
    for name, value in values.items():
        start, end = _COLUMNS[name]
        line = line[:start] + value.ljust(end - start) + line[end:]
    return line


def _date_of(raw: str) -> date:
    months = ("JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC")
    return date(2000 + int(raw[5:7]), months.index(raw[2:5]) + 1, int(raw[:2]))


def _later(raw: str, minutes: int) -> str:
    at = int(raw[:2]) * 60 + int(raw[2:]) + minutes
    if not 0 <= at < 24 * 60:
        raise ValueError(f"retiming {raw} by {minutes} min crosses midnight")
    return f"{at // 60:02d}{at % 60:02d}"


def _retimed(line: str, minutes: int) -> str:
    return _with(line, **{name: _later(_field(line, name), minutes) for name in _TIMES})


def ssim_edited(
    text: str,
    *,
    retime: dict[int, int] | None = None,
    retime_on: date | None = None,
    starts: dict[int, date] | None = None,
    drop: frozenset[int] = frozenset(),
) -> str:
    """The SSIM `text` (one carrier, daily records) with flights changed as the next file
    of an airline changes them: `retime` {flight number: minutes later} on every date, or
    only on `retime_on` (its period split around that date); `starts` {flight number:
    first date}, its dates before that cancelled (the period shortened); `drop` flights
    gone altogether. Serial numbers are written anew. The edits stay within each record's
    time fields: a retime may not cross midnight, nor `retime_on` split a flight of more
    than one leg."""
    retime, starts = retime or {}, starts or {}
    out: list[str] = []
    for line in text.splitlines():
        kind = line[:1]
        number = int(line[5:9]) if kind in "34" and line[5:9].strip() else None
        if number in drop:
            continue
        if kind == "4" and number in retime and retime_on is not None:
            raise ValueError("retime_on splits periods of single-leg flights only")
        if kind == "3" and number in starts:
            first = starts[number]
            if _date_of(_field(line, "period_end")) < first:
                continue
            if _date_of(_field(line, "period_start")) < first:
                line = _with(line, period_start=format_date(first))
        if kind == "3" and number in retime:
            minutes = retime[number]
            begins = _date_of(_field(line, "period_start"))
            ends = _date_of(_field(line, "period_end"))
            if retime_on is None:
                line = _retimed(line, minutes)
            elif begins <= retime_on <= ends:
                # Before the date (as filed), the date retimed, after it (as filed): each
                # its own itinerary variation, so that no two records share one.
                variation = int(_field(line, "itinerary_variation"))
                if begins < retime_on:
                    day_before = format_date(retime_on - timedelta(days=1))
                    out.append(_with(line, period_end=day_before))
                day = format_date(retime_on)
                out.append(
                    _retimed(
                        _with(
                            line,
                            period_start=day,
                            period_end=day,
                            itinerary_variation=f"{90 + variation % 5:02d}",
                        ),
                        minutes,
                    )
                )
                if retime_on < ends:
                    line = _with(
                        line,
                        period_start=format_date(retime_on + timedelta(days=1)),
                        itinerary_variation=f"{95 + variation % 5:02d}",
                    )
                else:
                    continue
        out.append(line)
    return _renumbered(out)


def _renumbered(lines: list[str]) -> str:
    records = [line for line in lines if set(line) != {"0"}]
    numbered = []
    for serial, line in enumerate(records, start=1):
        if line.startswith("5"):
            line = line[:187] + f"{serial - 1:06d}" + line[193:]
        numbered.append(line[:194] + f"{serial:06d}")
    return "\n".join(numbered) + "\n"
