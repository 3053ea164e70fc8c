"""IATA SSIM Chapter 7 schedule files: a strict, pure-Python reader.

A Chapter 7 data set is a sequence of fixed 200-byte records: 1 header, 2 carrier, 3 flight
leg, 4 segment data, 5 trailer, plus zero-filled padding records that fill the 1000-byte
blocks of the original tape format. Positions below are the 1-based inclusive columns of
SSIM Chapter 7 §7.5.1-§7.5.5. The reader collects every error of a file and raises one
``SsimFileError`` so that a caller loads a schedule whole or not at all.

It is one module because the record layouts (*_FIELDS) are shared by the reader and
the writer (format_record), so one file holds the whole file format.
"""

import re
from collections import defaultdict
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from datetime import UTC, date, datetime, time, timedelta
from types import MappingProxyType

RECORD_LENGTH = 200
MAX_REPORTED_ERRORS = 50
OPEN_END = "00XXX00"  # SSIM: an open-ended period runs to the end of the carrier's validity


class SsimError(Exception):
    """One problem in one record, located by line number and field name."""

    def __init__(self, line: int, field: str, message: str) -> None:
        self.line = line
        self.field = field
        self.message = message
        super().__init__(str(self))

    def __str__(self) -> str:
        return f"line {self.line}, field {self.field}: {self.message}"


class SsimFileError(Exception):
    """Every error of a rejected file; nothing of the file may be loaded."""

    def __init__(self, errors: list[SsimError]) -> None:
        self.errors = list(errors)
        shown = "\n".join(str(error) for error in self.errors[:MAX_REPORTED_ERRORS])
        more = len(self.errors) - MAX_REPORTED_ERRORS
        tail = f"\n... and {more} more" if more > 0 else ""
        super().__init__(f"{len(self.errors)} error(s) in SSIM file:\n{shown}{tail}")


@dataclass(frozen=True)
class SsimCarrier:
    """Record type 2: the carrier whose legs follow, and how to read their times."""

    line: int
    airline_designator: str
    time_mode: str  # "U": times are UTC, "L": times are local to each station
    season: str
    valid_from: date
    valid_to: date
    creation_date: date | None
    title: str


@dataclass(frozen=True)
class SsimOnwardFlight:
    """The flight the aircraft operates next (SSIM DEI 6 on the leg record)."""

    airline_designator: str
    flight_number: int
    operational_suffix: str
    aircraft_rotation_layover: int  # days between this arrival and the onward departure


@dataclass(frozen=True)
class SsimSegmentData:
    """Record type 4: one data element (DEI) for a board point/off point of a flight."""

    line: int
    airline_designator: str
    flight_number: int
    operational_suffix: str
    itinerary_variation: int
    leg_sequence: int
    board_point_indicator: str
    off_point_indicator: str
    data_element_identifier: int
    board_point: str
    off_point: str
    data: str
    leg_line: int  # the record 3 this record follows


@dataclass(frozen=True)
class SsimLeg:
    """Record type 3: one leg of a flight over a period, with its days of operation."""

    line: int
    time_mode: str
    airline_designator: str
    flight_number: int
    operational_suffix: str
    itinerary_variation: int
    leg_sequence: int
    service_type: str
    period_start: date
    period_end: date
    days_of_operation: frozenset[int]  # ISO weekdays, 1 = Monday
    frequency_rate: int  # 1 = every week, 2 = every other week
    departure_station: str
    passenger_std: time
    aircraft_std: time
    departure_utc_offset: timedelta
    departure_terminal: str
    arrival_station: str
    passenger_sta: time
    aircraft_sta: time
    arrival_utc_offset: timedelta
    arrival_terminal: str
    aircraft_type: str
    prbd: str
    meal_service_note: str
    aircraft_configuration: str  # as filed, e.g. "W18Y112VV112"
    seat_configuration: Mapping[str, int] = field(hash=False)  # {"W": 18, "Y": 112}
    aircraft_version: str = ""  # after "VV" in the configuration/version field
    departure_date_variation: int | None = None  # None: field left blank
    arrival_date_variation: int | None = None
    onward_flight: SsimOnwardFlight | None = None
    traffic_restriction_code: str = ""
    secure_flight_indicator: str = ""
    segment_data: tuple[SsimSegmentData, ...] = ()

    @property
    def flight_designator(self) -> str:
        return f"{self.airline_designator} {self.flight_number}{self.operational_suffix}"


@dataclass(frozen=True)
class SsimTrailer:
    """Record type 5: closes a carrier's records."""

    line: int
    airline_designator: str
    serial_check_reference: int  # serial number of the record before the trailer
    end_code: str
    record_serial_number: int


@dataclass(frozen=True)
class SsimSchedule:
    """A whole, valid SSIM data set."""

    title: str
    carriers: tuple[SsimCarrier, ...]
    legs: tuple[SsimLeg, ...]
    segment_data: tuple[SsimSegmentData, ...]
    trailers: tuple[SsimTrailer, ...]


# Converters: each takes the raw columns and returns a value or raises ValueError whose
# text becomes the SsimError message.

_MONTHS = ("JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC")
_CONFIGURATION = re.compile(r"((?:[A-Z]\d{1,3})+)(?:VV(\S*))?")
_CABIN = re.compile(r"([A-Z])(\d{1,3})")
_STATION = re.compile(r"[A-Z]{3}")


def _text(raw: str) -> str:
    return raw.strip()


def _int(raw: str) -> int:
    if not raw.strip().isdigit():
        raise ValueError(f"{raw!r} is not a number")
    return int(raw)


def _date(raw: str) -> date:
    """DDMMMYY; SSIM carries two-digit years, read here as 20YY."""
    if len(raw) != 7 or not (raw[:2].isdigit() and raw[5:].isdigit()) or raw[2:5] not in _MONTHS:
        raise ValueError(f"{raw!r} is not a DDMMMYY date")
    try:
        return date(2000 + int(raw[5:]), _MONTHS.index(raw[2:5]) + 1, int(raw[:2]))
    except ValueError:
        raise ValueError(f"{raw} is not a calendar date") from None


def _optional_date(raw: str) -> date | None:
    return _date(raw) if raw.strip() else None


def _time(raw: str) -> time:
    if not (len(raw) == 4 and raw.isdigit() and int(raw[:2]) < 24 and int(raw[2:]) < 60):
        raise ValueError(f"{raw!r} is not a valid HHMM time")
    return time(int(raw[:2]), int(raw[2:]))


def _utc_offset(raw: str) -> timedelta:
    """UTC/local time variation, ±HHMM (SSIM: the station's offset on the leg's dates)."""
    digits = raw[1:]
    well_formed = raw[:1] in ("+", "-") and len(digits) == 4 and digits.isdigit()
    if not (well_formed and int(digits[:2]) <= 14 and int(digits[2:]) < 60):
        raise ValueError(f"{raw!r} is not a UTC variation of the form +HHMM or -HHMM")
    offset = timedelta(hours=int(digits[:2]), minutes=int(digits[2:]))
    return -offset if raw[0] == "-" else offset


def _days_of_operation(raw: str) -> frozenset[int]:
    """Seven columns, column n holds the digit n (ISO weekday) or a blank."""
    for position, char in enumerate(raw, start=1):
        if char not in (" ", str(position)):
            raise ValueError(f"position {position} holds {char!r}; expected {position} or blank")
    days = frozenset(int(char) for char in raw if char != " ")
    if not days:
        raise ValueError("no day of operation")
    return days


def _frequency_rate(raw: str) -> int:
    if raw not in (" ", "1", "2"):
        raise ValueError(f"{raw!r} is not a frequency rate (blank, 1 or 2)")
    return 2 if raw == "2" else 1


def _date_variation(raw: str) -> int | None:
    """SSIM date variation: blank, 0, 1, 2 days later, or A for the day before."""
    values = {" ": None, "0": 0, "1": 1, "2": 2, "A": -1}
    if raw not in values:
        raise ValueError(f"{raw!r} is not a date variation (0, 1, 2, A or blank)")
    return values[raw]


def _station(raw: str) -> str:
    if not _STATION.fullmatch(raw):
        raise ValueError(f"{raw!r} is not a 3-letter station code")
    return raw


def _seat_configuration(raw: str) -> tuple[Mapping[str, int], str]:
    """Aircraft configuration/version such as C12Y138 or W18Y112VV112; free text else."""
    match = _CONFIGURATION.fullmatch(raw.strip())
    if not match:
        return MappingProxyType({}), ""
    seats = {cabin: int(count) for cabin, count in _CABIN.findall(match.group(1))}
    return MappingProxyType(seats), match.group(2) or ""


def _time_mode(raw: str) -> str:
    if raw not in ("U", "L"):
        raise ValueError(f"{raw!r} is not U (UTC) or L (local)")
    return raw


# The record layouts: (field name, first column, last column, converter), columns as printed
# in SSIM Chapter 7 §7.5, for the fields this service reads or writes (others are spare or
# unused). Fields with a converter map one-to-one onto the dataclass of their record; those
# without are read specially or only written.
FieldSpec = tuple[str, int, int, Callable[[str], object] | None]

HEADER_FIELDS: tuple[FieldSpec, ...] = (
    ("record_type", 1, 1, None),
    ("title", 2, 35, _text),
    ("record_serial_number", 195, 200, None),
)
CARRIER_FIELDS: tuple[FieldSpec, ...] = (
    ("record_type", 1, 1, None),
    ("time_mode", 2, 2, _time_mode),
    ("airline_designator", 3, 5, _text),
    ("season", 11, 13, _text),
    ("valid_from", 15, 21, _date),
    ("valid_to", 22, 28, _date),
    ("creation_date", 29, 35, _optional_date),
    ("title", 36, 64, _text),
    ("record_serial_number", 195, 200, None),
)
LEG_FIELDS: tuple[FieldSpec, ...] = (
    ("record_type", 1, 1, None),
    ("operational_suffix", 2, 2, _text),
    ("airline_designator", 3, 5, _text),
    ("flight_number", 6, 9, _int),
    ("itinerary_variation", 10, 11, None),
    ("leg_sequence", 12, 13, _int),
    ("service_type", 14, 14, _text),
    ("period_start", 15, 21, _date),
    ("period_end", 22, 28, None),  # a date, or 00XXX00 for an open end
    ("days_of_operation", 29, 35, _days_of_operation),
    ("frequency_rate", 36, 36, _frequency_rate),
    ("departure_station", 37, 39, _station),
    ("passenger_std", 40, 43, _time),
    ("aircraft_std", 44, 47, _time),
    ("departure_utc_offset", 48, 52, _utc_offset),
    ("departure_terminal", 53, 54, _text),
    ("arrival_station", 55, 57, _station),
    ("aircraft_sta", 58, 61, _time),  # the arrival side puts the aircraft time first
    ("passenger_sta", 62, 65, _time),
    ("arrival_utc_offset", 66, 70, _utc_offset),
    ("arrival_terminal", 71, 72, _text),
    ("aircraft_type", 73, 75, _text),
    ("prbd", 76, 95, _text),
    ("meal_service_note", 101, 110, _text),
    ("secure_flight_indicator", 122, 122, _text),
    ("itinerary_variation_overflow", 128, 128, None),
    ("onward_airline_designator", 138, 140, None),
    ("onward_flight_number", 141, 144, None),
    ("onward_aircraft_rotation_layover", 145, 145, None),
    ("onward_operational_suffix", 146, 146, None),
    ("traffic_restriction_code", 150, 160, _text),
    ("aircraft_configuration", 173, 192, None),
    ("departure_date_variation", 193, 193, _date_variation),
    ("arrival_date_variation", 194, 194, _date_variation),
    ("record_serial_number", 195, 200, None),
)
SEGMENT_FIELDS: tuple[FieldSpec, ...] = (
    ("record_type", 1, 1, None),
    ("operational_suffix", 2, 2, _text),
    ("airline_designator", 3, 5, _text),
    ("flight_number", 6, 9, _int),
    ("itinerary_variation", 10, 11, None),
    ("leg_sequence", 12, 13, _int),
    ("service_type", 14, 14, None),
    ("itinerary_variation_overflow", 28, 28, None),
    ("board_point_indicator", 29, 29, _text),
    ("off_point_indicator", 30, 30, _text),
    ("data_element_identifier", 31, 33, _int),
    ("board_point", 34, 36, _station),
    ("off_point", 37, 39, _station),
    ("data", 40, 194, _text),
    ("record_serial_number", 195, 200, None),
)
TRAILER_FIELDS: tuple[FieldSpec, ...] = (
    ("record_type", 1, 1, None),
    ("airline_designator", 3, 5, _text),
    ("serial_check_reference", 188, 193, _int),  # serial number of the record before
    ("end_code", 194, 194, _text),  # C: another carrier follows, E: end of data set
    ("record_serial_number", 195, 200, _int),
)
RECORD_FIELDS = {
    "1": HEADER_FIELDS,
    "2": CARRIER_FIELDS,
    "3": LEG_FIELDS,
    "4": SEGMENT_FIELDS,
    "5": TRAILER_FIELDS,
}


def format_date(value: date) -> str:
    """The SSIM DDMMMYY form of a date."""
    return f"{value.day:02d}{_MONTHS[value.month - 1]}{value.year % 100:02d}"


def format_time(value: time) -> str:
    return f"{value.hour:02d}{value.minute:02d}"


def format_utc_offset(value: timedelta) -> str:
    minutes = int(value.total_seconds()) // 60
    sign = "-" if minutes < 0 else "+"
    return f"{sign}{abs(minutes) // 60:02d}{abs(minutes) % 60:02d}"


def format_record(fields: tuple[FieldSpec, ...], values: Mapping[str, str]) -> str:
    """Lay values into a blank 200-column record; numbers must come already justified."""
    buffer = [" "] * RECORD_LENGTH
    spec = {name: (start, end) for name, start, end, _ in fields}
    for name, value in values.items():
        start, end = spec[name]
        width = end - start + 1
        if len(value) > width:
            raise ValueError(f"{name} {value!r} is wider than {width} columns")
        buffer[start - 1 : end] = value.ljust(width)
    return "".join(buffer)


class _Record:
    """One record being read: its columns by field name, and the errors found in it."""

    def __init__(
        self, line: int, text: str, fields: tuple[FieldSpec, ...], errors: list[SsimError]
    ) -> None:
        self.line = line
        self.fields = fields
        self.raw = {name: text[start - 1 : end] for name, start, end, _ in fields}
        self.errors = errors
        self.valid = True

    def error(self, field_name: str, message: str) -> None:
        self.errors.append(SsimError(self.line, field_name, message))
        self.valid = False

    def get(self, name: str, convert: Callable = _text):
        try:
            return convert(self.raw[name])
        except ValueError as exc:
            self.error(name, str(exc))
            return None


class _Reader:
    """Reads records in file order; state is the carrier whose legs are being read."""

    def __init__(self, known_station: Callable[[str], bool] | None) -> None:
        self.known_station = known_station
        self.errors: list[SsimError] = []
        self.title = ""
        self.carrier: SsimCarrier | None = None
        self.carriers: list[SsimCarrier] = []
        self.legs: list[SsimLeg] = []
        self.segment_data: list[SsimSegmentData] = []
        self.trailers: list[SsimTrailer] = []
        # The leg that segment data may follow, or _FAILED after a rejected leg record.
        self.last_leg: SsimLeg | object | None = None

    def read(self, line: int, text: str) -> None:
        if len(text) != RECORD_LENGTH:
            message = f"record is {len(text)} characters long; SSIM records are exactly 200"
            self.errors.append(SsimError(line, "record", message))
            return
        if set(text) == {"0"}:  # block padding
            return
        kind = text[0]
        if kind not in RECORD_FIELDS:
            self.errors.append(SsimError(line, "record_type", f"unknown record type {kind!r}"))
            return
        record = _Record(line, text, RECORD_FIELDS[kind], self.errors)
        if kind not in ("3", "4"):
            self.last_leg = None
        if kind == "1":
            self.title = record.get("title")
        elif kind == "2":
            self._carrier(record)
        elif self.carrier is None:
            record.error("record_type", f"record type {kind} before any carrier record")
        elif kind == "3":
            self._leg(record, self.carrier)
        elif kind == "4":
            self._segment(record)
        else:
            self._trailer(record)

    def _values(self, record: _Record) -> dict:
        """Convert every field that has a converter; check stations against the list."""
        values: dict = {"line": record.line}
        for name, _, _, convert in record.fields:
            if convert is None:
                continue
            values[name] = value = record.get(name, convert)
            known = self.known_station
            if convert is _station and value and known and not known(value):
                record.error(name, f"unknown station {value}")
        return values

    def _carrier(self, record: _Record) -> None:
        values = self._values(record)
        if record.valid and values["valid_to"] < values["valid_from"]:
            record.error("period_of_validity", _ordering_message(record, "valid_from", "valid_to"))
        # A bad carrier record still opens its block, so that its legs are checked too.
        self.carrier = SsimCarrier(**values) if record.valid else _PLACEHOLDER_CARRIER
        if record.valid:
            self.carriers.append(self.carrier)

    def _leg(self, record: _Record, carrier: SsimCarrier) -> None:
        self.last_leg = _FAILED
        values = self._values(record)
        airline = values["airline_designator"]
        if carrier.airline_designator and airline != carrier.airline_designator:
            message = f"{airline} under the carrier record of {carrier.airline_designator}"
            record.error("airline_designator", message)
        if record.raw["period_end"] != OPEN_END:
            values["period_end"] = record.get("period_end", _date)
        elif carrier is _PLACEHOLDER_CARRIER:
            record.error("period_end", "open end under an invalid carrier record")
        else:
            values["period_end"] = carrier.valid_to
        configuration = record.raw["aircraft_configuration"].strip()
        seats, version = _seat_configuration(configuration)
        values.update(
            time_mode=carrier.time_mode,
            itinerary_variation=_itinerary_variation(record),
            aircraft_configuration=configuration,
            seat_configuration=seats,
            aircraft_version=version,
            onward_flight=_onward_flight(record),
        )
        if not record.valid:
            return
        if values["period_end"] < values["period_start"]:
            message = _ordering_message(record, "period_start", "period_end")
            record.error("period_of_operation", message)
            return
        leg = SsimLeg(**values)
        if leg.arrival_date_variation is not None:
            first = next(operating_dates(leg), leg.period_start)
            if leg_arrival_utc(leg, first) <= leg_departure_utc(leg, first):
                record.error("arrival_date_variation", "arrival is not after departure")
                return
        self.legs.append(leg)
        self.last_leg = leg

    def _segment(self, record: _Record) -> None:
        values = self._values(record)
        values["itinerary_variation"] = _itinerary_variation(record)
        previous = self.last_leg
        if not record.valid or previous is _FAILED:
            return
        # SSIM: segment data follows the leg records of its flight's itinerary variation.
        same_flight = ("airline_designator", "flight_number", "itinerary_variation")
        if previous is None or any(getattr(previous, n) != values[n] for n in same_flight):
            record.error("flight_number", "segment data does not follow a leg of its flight")
            return
        self.segment_data.append(SsimSegmentData(**values, leg_line=previous.line))

    def _trailer(self, record: _Record) -> None:
        values = self._values(record)
        if record.valid:
            self.trailers.append(SsimTrailer(**values))
        self.carrier = None

    def check_overlaps(self) -> None:
        """The same flight leg (any itinerary variation) may not operate twice on a date."""
        by_leg: dict[tuple, list[SsimLeg]] = defaultdict(list)
        for leg in self.legs:
            key = (leg.airline_designator, leg.flight_number, leg.operational_suffix)
            by_leg[(*key, leg.leg_sequence)].append(leg)
        for legs in by_leg.values():
            first_leg_on: dict[date, SsimLeg] = {}
            for leg in legs:
                clashes: dict[int, date] = {}
                for day in operating_dates(leg):
                    other = first_leg_on.setdefault(day, leg)
                    if other is not leg:
                        clashes.setdefault(other.line, day)
                for other_line, day in clashes.items():
                    message = (
                        f"{leg.flight_designator} leg {leg.leg_sequence} overlaps line "
                        f"{other_line} on {format_date(day)}"
                    )
                    self.errors.append(SsimError(leg.line, "period_of_operation", message))

    def schedule(self) -> SsimSchedule:
        self.check_overlaps()
        if self.errors:
            raise SsimFileError(sorted(self.errors, key=lambda error: error.line))
        by_leg: dict[int, list[SsimSegmentData]] = defaultdict(list)
        for item in self.segment_data:
            by_leg[item.leg_line].append(item)
        legs = tuple(replace(leg, segment_data=tuple(by_leg[leg.line])) for leg in self.legs)
        return SsimSchedule(
            self.title, tuple(self.carriers), legs, tuple(self.segment_data), tuple(self.trailers)
        )


# Stands in for a carrier record that failed, so that its legs are still checked.
_PLACEHOLDER_CARRIER = SsimCarrier(0, "", "L", "", date.min, date.min, None, "")
_FAILED = object()


def _ordering_message(record: _Record, first: str, last: str) -> str:
    return f"end {record.raw[last]} before start {record.raw[first]}"


def _itinerary_variation(record: _Record) -> int | None:
    """Two digits, with a hundreds digit in the overflow column (SSIM col 128)."""
    overflow = record.raw["itinerary_variation_overflow"]
    variation = record.get("itinerary_variation", _int)
    if overflow != " " and not overflow.isdigit():
        record.error("itinerary_variation_overflow", f"{overflow!r} is not a digit")
    if variation is None:
        return None
    return variation + (100 * int(overflow) if overflow.isdigit() else 0)


def _onward_flight(record: _Record) -> SsimOnwardFlight | None:
    """Onward flight columns 138-146; blank when the leg has none."""
    if not record.raw["onward_airline_designator"].strip():
        return None
    layover = record.raw["onward_aircraft_rotation_layover"]
    return SsimOnwardFlight(
        airline_designator=record.get("onward_airline_designator"),
        flight_number=record.get("onward_flight_number", _int),
        operational_suffix=record.get("onward_operational_suffix"),
        aircraft_rotation_layover=int(layover) if layover.isdigit() else 0,
    )


def parse_ssim(text: str, *, known_station: Callable[[str], bool] | None = None) -> SsimSchedule:
    """Read a whole SSIM Chapter 7 data set, or raise SsimFileError listing its errors."""
    reader = _Reader(known_station)
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    for number, line in enumerate(lines, start=1):
        reader.read(number, line.removesuffix("\r"))
    return reader.schedule()


def operating_dates(
    leg: SsimLeg, start: date | None = None, end: date | None = None
) -> Iterator[date]:
    """The flight dates of a leg, optionally clipped to [start, end].

    With frequency rate 2 the leg operates in every other calendar week (Monday to
    Sunday), counting the week of the period start as the first.
    """
    first_monday = leg.period_start - timedelta(days=leg.period_start.weekday())
    day = max(leg.period_start, start or leg.period_start)
    last = min(leg.period_end, end or leg.period_end)
    while day <= last:
        if day.isoweekday() in leg.days_of_operation and (
            leg.frequency_rate == 1 or ((day - first_monday).days // 7) % 2 == 0
        ):
            yield day
        day += timedelta(days=1)


def _utc(leg: SsimLeg, day: date, at: time, offset: timedelta) -> datetime:
    moment = datetime.combine(day, at, tzinfo=UTC)
    return moment if leg.time_mode == "U" else moment - offset


def leg_departure_utc(leg: SsimLeg, flight_date: date) -> datetime:
    """Aware UTC departure of the leg on a flight date (one of its operating dates)."""
    day = flight_date + timedelta(days=leg.departure_date_variation or 0)
    return _utc(leg, day, leg.passenger_std, leg.departure_utc_offset)


def leg_arrival_utc(leg: SsimLeg, flight_date: date) -> datetime:
    """Aware UTC arrival of the leg on a flight date.

    Uses the arrival date variation when filed. Many files (the avionworx sample among
    them) leave it blank on overnight legs; then the arrival is the first STA after the
    departure.
    """
    if leg.arrival_date_variation is not None:
        day = flight_date + timedelta(days=leg.arrival_date_variation)
        return _utc(leg, day, leg.passenger_sta, leg.arrival_utc_offset)
    departure = leg_departure_utc(leg, flight_date)
    day = departure.date() - timedelta(days=1)
    arrival = _utc(leg, day, leg.passenger_sta, leg.arrival_utc_offset)
    while arrival <= departure:
        day += timedelta(days=1)
        arrival = _utc(leg, day, leg.passenger_sta, leg.arrival_utc_offset)
    return arrival
