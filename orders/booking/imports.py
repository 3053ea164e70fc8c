"""Bookings made in another channel, imported as orders (DESIGN.md §8, §10:
`manage.py import_bookings FILE`), so that they can be retrieved and listed like any other.

The file is JSON lines: one booking per line, a JSON object with exactly these fields
(any other field is an error for that line; blank lines are ignored):

- `recordLocator` (required): the booking's 6-letter/digit locator in the other system,
  kept as its record locator here (uppercased). A locator already imported is skipped,
  so a file can be imported again after fixing its failed lines.
- `status` (required): `CONFIRMED` (paid in full; e-tickets are issued here) or
  `PENDING` (awaiting confirmation; nothing paid, no payment time limit).
- `agencyCode` (optional): the agency (organization) code, up to 10 letters/digits; an
  agency's API keys list its bookings (SPEC.md §4.8).
- `sellerCode` (optional): the seller the booking belongs to; without it, the
  `--seller` given to the command.
- `createdAt` (optional): when it was booked, UTC ISO 8601 (`2025-05-01T12:00:00Z`);
  default the time of the import.
- `remarks` (optional): free text, up to 500 characters.
- `passengers` (required, 1 to 9): `{type, givenName, surname, dateOfBirth?}`, type ADT,
  CHD or INF, date `YYYY-MM-DD`. The booking rules apply (an adult travels, infants not
  above adults, names of letters, a date of birth fits the type on the first flight
  date). Infants ride on adults' laps in order: the first infant with the first adult,
  the second with the second...
- `contact` (required): `{emailAddress, phoneNumber?, name?: {givenName?, surname?},
  postalAddress?}` as in create order (SPEC.md §2.5.1); the phone becomes E.164, the
  name defaults to the lead adult's.
- `journeys` (required, 1 to 6): each a list of 1 to 4 segments in travel order,
  `{flightNumber, departureDate, origin, destination, rbd}`: `MX101` or `101` (our own
  flights only), the flight's date as our schedule files it (the local date of the
  flight's first departure), the board and off points, and the booking class. Each
  segment must be a flight of our schedule on that date flying from `origin` to
  `destination` (one or more legs); its seats are taken from inventory for every
  passenger but lap infants. A flight without the seats is an error for that line.
- `totalPrice` (required): `{amount, currency, taxes?: [{code, amount}]}`, USD only;
  amounts are numbers or strings with at most two decimals. The taxes are part of the
  amount (base = amount - taxes). The price is shared equally among the journeys' order
  items (the first takes the odd cents).

Each line is imported in its own transaction: a line either becomes a whole order, with
its seats, or leaves nothing behind.

It is one module because it is one flow read top to bottom: the file format above, its shapes,
the checks and the write are each used only by this import.

Example line:

    {"recordLocator": "QX7R2M", "status": "CONFIRMED", "agencyCode": "ACMEAGT",
     "sellerCode": "ACME1", "passengers": [{"type": "ADT", "givenName": "Ada",
     "surname": "Lovelace"}], "contact": {"emailAddress": "ada@example.com"},
     "journeys": [[{"flightNumber": "MX101", "departureDate": "2026-03-02",
     "origin": "PVD", "destination": "CHS", "rbd": "Y"}]],
     "totalPrice": {"amount": 189.60, "currency": "USD",
     "taxes": [{"code": "US", "amount": 12.40}]}}

(on one line in the file).
"""

import itertools
import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from decimal import ROUND_DOWN, Decimal
from typing import Any, Literal
from zoneinfo import ZoneInfo

import orjson
from django.conf import settings
from django.db import IntegrityError, transaction
from rest_framework import serializers

from airline.api import clock
from airline.api.errors import ApiError
from airline.api.responses import dumps
from airline.api.serializers import IsoDateField, StrictSerializer
from airline.fares.money import CENT, ZERO, Price, Tax
from airline.network.inventory import SeatChange, SoldOut, booking_class_position, inventory_apply
from airline.network.itineraries import DatedLeg
from airline.network.itineraries import Journey as NetworkJourney
from airline.network.itineraries import Segment as NetworkSegment
from airline.network.models import CabinCode, FlightLeg
from offers.wire import journey_id
from orders.booking.writes import contact_write, journey_row, passengers_write, segments_write
from orders.core import events, ids
from orders.models import Channel, Order, OrderItem, OrderStatus, Payment
from orders.money.tickets import tickets_issue
from orders.requests.checks import check_contact, check_passengers, lead_of
from orders.requests.inputs import PassengerData
from orders.requests.serializers import ContactIn, contact_data
from sellers.models import Seller

ACTOR = "import_bookings"
IMPORT_BUNDLE = "IMPORT"  # OrderItem.bundle: sold elsewhere, in none of our bundles
EXTERNAL_PAYMENT = Payment.Method.EXTERNAL  # money the other channel collected
MAX_LINE_CHARS = 65_536  # a booking is a few kB; anything longer is not one


class ImportPassengerIn(StrictSerializer):
    type = serializers.ChoiceField(choices=["ADT", "CHD", "INF"])
    givenName = serializers.CharField(max_length=64)
    surname = serializers.CharField(max_length=64)
    dateOfBirth = IsoDateField(required=False)


class ImportSegmentIn(StrictSerializer):
    flightNumber = serializers.RegexField(r"^(?:[A-Za-z0-9]{2})?\d{1,4}$")
    departureDate = IsoDateField()
    origin = serializers.RegexField(r"^[A-Za-z]{3}$")
    destination = serializers.RegexField(r"^[A-Za-z]{3}$")
    rbd = serializers.RegexField(r"^[A-Za-z]$")


class ImportTaxIn(StrictSerializer):
    code = serializers.RegexField(r"^[A-Za-z0-9]{2,3}$")
    amount = serializers.DecimalField(max_digits=12, decimal_places=2, min_value=ZERO)


class ImportPriceIn(StrictSerializer):
    amount = serializers.DecimalField(max_digits=12, decimal_places=2, min_value=ZERO)
    currency = serializers.RegexField(r"^[A-Z]{3}$")
    taxes = ImportTaxIn(many=True, required=False)


class ImportedBookingIn(StrictSerializer):
    """One line of an import file (the module docstring describes it)."""

    recordLocator = serializers.RegexField(r"^[A-Za-z0-9]{6}$")
    status = serializers.ChoiceField(choices=[OrderStatus.CONFIRMED, OrderStatus.PENDING])
    agencyCode = serializers.RegexField(r"^[A-Za-z0-9]{1,10}$", required=False)
    sellerCode = serializers.CharField(max_length=16, required=False)
    createdAt = serializers.DateTimeField(required=False, default_timezone=UTC)
    remarks = serializers.CharField(max_length=500, required=False, allow_blank=True)
    passengers = ImportPassengerIn(many=True, allow_empty=False, max_length=9)
    contact = ContactIn()
    journeys = serializers.ListField(
        child=serializers.ListField(child=ImportSegmentIn(), min_length=1, max_length=4),
        min_length=1,
        max_length=6,
    )
    totalPrice = ImportPriceIn()


@dataclass(frozen=True)
class LineResult:
    """What became of one line of the file."""

    line: int
    outcome: Literal["created", "skipped", "error"]
    record_locator: str = ""
    message: str = ""


@dataclass
class ImportReport:
    """Every non-blank line's result, in file order."""

    results: list[LineResult] = field(default_factory=list)

    def count(self, outcome: str) -> int:
        """How many lines had this outcome."""
        return sum(1 for r in self.results if r.outcome == outcome)

    @property
    def created(self) -> int:
        return self.count("created")

    @property
    def skipped(self) -> int:
        return self.count("skipped")

    @property
    def errors(self) -> int:
        return self.count("error")


class ImportRefused(Exception):
    """A line that cannot become an order; the message says why, for the operator."""


class AlreadyImported(Exception):
    """The line's record locator is already an imported order."""


@dataclass(frozen=True)
class ResolvedSegment:
    """A segment of the file on our schedule, with the class its seats are sold in."""

    segment: NetworkSegment
    cabin: str
    rbd: str
    origin_zone: ZoneInfo


def orders_import(
    lines: Iterable[str],
    *,
    default_seller: Seller | None = None,
    on_result: Callable[[LineResult], None] | None = None,
) -> ImportReport:
    """Import JSON-lines bookings, each line in its own transaction; `on_result` hears of
    each line as it is done (the command prints it)."""
    report = ImportReport()
    sellers: dict[str, Seller | None] = {}
    for number, text in enumerate(lines, start=1):
        if not text.strip():
            continue
        result = order_import(text, line=number, default_seller=default_seller, sellers=sellers)
        report.results.append(result)
        if on_result is not None:
            on_result(result)
    return report


def order_import(
    text: str,
    *,
    line: int,
    default_seller: Seller | None = None,
    sellers: dict[str, Seller | None] | None = None,
) -> LineResult:
    """One line of an import file as a new order, or why not."""
    locator = ""
    try:
        data = _parse(text)
        locator = data["recordLocator"].upper()
        _check_not_imported(locator)
        seller = _seller_of(data, default_seller, {} if sellers is None else sellers)
        _write(data, seller=seller, now=clock.now())
    except AlreadyImported as exc:
        return LineResult(line, "skipped", locator, str(exc))
    except ImportRefused as exc:
        return LineResult(line, "error", locator, str(exc))
    except ApiError as exc:
        # The booking rules of create order (orders.requests.checks), worded for the operator.
        where = f" ({exc.path})" if exc.path else ""
        return LineResult(line, "error", locator, f"{exc.description}{where}")
    return LineResult(line, "created", locator)


def _parse(text: str) -> dict[str, Any]:
    if len(text) > MAX_LINE_CHARS:
        raise ImportRefused(f"Line longer than {MAX_LINE_CHARS} characters")
    try:
        # Decimal, not float: amounts are money and must arrive exactly as written.
        raw = json.loads(text, parse_float=Decimal)
    except ValueError as exc:
        raise ImportRefused(f"Not JSON: {exc}") from None
    if not isinstance(raw, dict):
        raise ImportRefused("A line must be one JSON object")
    shape = ImportedBookingIn(data=raw)
    if not shape.is_valid():
        raise ImportRefused("; ".join(_messages(shape.errors)))
    data = shape.validated_data
    price = data["totalPrice"]
    if price["currency"] != "USD":
        raise ImportRefused("totalPrice.currency: only USD is sold")  # SPEC.md §8
    if sum((t["amount"] for t in price.get("taxes", ())), ZERO) > price["amount"]:
        raise ImportRefused("totalPrice: the taxes add up to more than the amount")
    if data.get("createdAt") and data["createdAt"] > clock.now():
        raise ImportRefused("createdAt: in the future")
    return data


def _messages(errors: Any, path: str = "") -> list[str]:
    """DRF's nested error structure as `field.path: message` lines."""
    if isinstance(errors, Mapping):
        return [m for key, value in errors.items() for m in _messages(value, _at(path, key))]
    if isinstance(errors, list) and errors and not isinstance(errors[0], str):
        return [
            m
            for index, value in enumerate(errors)
            if value
            for m in _messages(value, f"{path}[{index}]")
        ]
    if isinstance(errors, list):
        return [f"{path}: {message}" for message in errors]
    return [f"{path}: {errors}"]


def _at(path: str, key: Any) -> str:
    if isinstance(key, int):
        return f"{path}[{key}]"  # DRF keys a list's errors by position
    if key == "non_field_errors":
        return path
    return f"{path}.{key}" if path else str(key)


def _seller_of(
    data: Mapping[str, Any], default: Seller | None, cache: dict[str, Seller | None]
) -> Seller:
    code = (data.get("sellerCode") or "").upper()
    if not code:
        if default is None:
            raise ImportRefused("No sellerCode, and no --seller default was given")
        return default
    if code not in cache:
        cache[code] = Seller.objects.filter(code=code, is_active=True).first()
    if cache[code] is None:
        raise ImportRefused(f"sellerCode: no active seller {code}")
    return cache[code]


def _check_not_imported(locator: str) -> None:
    channel = Order.objects.filter(record_locator=locator).values_list("channel", flat=True)
    _refuse_duplicate(locator, channel.first())


def _refuse_duplicate(locator: str, channel: str | None) -> None:
    if channel == Channel.IMPORT:
        raise AlreadyImported(f"{locator} was imported before")
    if channel is not None:
        raise ImportRefused(f"recordLocator: {locator} is already a booking made here")


def _duplicate(locator: str) -> Exception:
    """When the order INSERT clashes: an import of the same locator that
    committed while this one was being checked (or a new booking that drew it)."""
    channel = Order.objects.filter(record_locator=locator).values_list("channel", flat=True)
    try:
        _refuse_duplicate(locator, channel.first())
    except (AlreadyImported, ImportRefused) as exc:
        return exc
    return ImportRefused(f"{locator} could not be stored; import the line again")


def _write(data: Mapping[str, Any], *, seller: Seller, now: datetime) -> Order:
    journeys = sorted(
        (_resolve_journey(segments, index) for index, segments in enumerate(data["journeys"])),
        key=lambda j: j[0].segment.departs_at,
    )
    first = journeys[0][0]
    first_date = first.segment.departs_at.astimezone(first.origin_zone).date()
    passengers = check_passengers(_passengers_in(data["passengers"]), first_travel_date=first_date)
    lead = lead_of(passengers)
    contact = check_contact(contact_data(data["contact"]), lead=lead)
    seats = sum(1 for p in passengers if p.ptc != "INF")  # a lap infant takes no seat
    price = data["totalPrice"]
    total = price["amount"]
    confirmed = data["status"] == OrderStatus.CONFIRMED
    locator = data["recordLocator"].upper()
    order = Order(
        order_id=ids.new_order_id(),
        record_locator=locator,
        owner_code=settings.AIRLINE_DESIGNATOR,
        seller=seller,
        agency_code=(data.get("agencyCode") or "").upper(),
        channel=Channel.IMPORT,
        status=data["status"],
        created_at=data.get("createdAt") or now,
        updated_at=now,
        currency=price["currency"],
        total=total,
        paid=total if confirmed else ZERO,
        payment_time_limit=None,  # PENDING waits for the other channel, not for a clock
        source_offer_id=None,
        remarks=data.get("remarks", ""),
        lead_given_name=lead.given_name,
        lead_surname=lead.surname,
    )
    with transaction.atomic():
        try:
            with transaction.atomic():  # a savepoint: _duplicate reads after a clash
                order.save(force_insert=True)
        except IntegrityError as exc:
            raise _duplicate(locator) from exc
        _take_seats(journeys, seats)
        passengers_write(order, passengers)
        contact_write(order, contact)
        prices = _split_price(price, len(journeys))
        pax_ids = [p.pax_id for p in passengers]
        for position, (segments, item_price) in enumerate(
            zip(journeys, prices, strict=True), start=1
        ):
            _journey_write(order, position, segments, item_price, pax_ids, seats)
        if confirmed:
            if total > 0:
                _external_payment(order)
            tickets_issue(order, now=now)
        events.order_imported(order, actor=ACTOR, now=now)
    return order


def _passengers_in(passengers: Sequence[Mapping[str, Any]]) -> list[PassengerData]:
    """The file's passengers as create order's input (orders.requests.checks): ids ADT-1, INF-1...
    in order, and each infant on the lap of the adult of the same rank."""
    counts: dict[str, int] = {}
    ids_in_order = []
    for p in passengers:
        counts[p["type"]] = counts.get(p["type"], 0) + 1
        ids_in_order.append(f"{p['type']}-{counts[p['type']]}")
    adults = [
        pax_id for pax_id, p in zip(ids_in_order, passengers, strict=True) if p["type"] == "ADT"
    ]
    infants = [
        pax_id for pax_id, p in zip(ids_in_order, passengers, strict=True) if p["type"] == "INF"
    ]
    # More infants than adults is left for check_passengers to refuse with its message.
    carried = dict(zip(adults, infants, strict=False))
    return [
        PassengerData(
            passenger_id=pax_id,
            ptc=p["type"],
            given_name=p["givenName"],
            surname=p["surname"],
            date_of_birth=p.get("dateOfBirth"),
            infant_passenger_id=carried.get(pax_id, ""),
        )
        for pax_id, p in zip(ids_in_order, passengers, strict=True)
    ]


def _resolve_journey(segments: Sequence[Mapping[str, Any]], index: int) -> list[ResolvedSegment]:
    resolved = [_resolve_segment(s, f"journeys[{index}][{n}]") for n, s in enumerate(segments)]
    for n, (before, after) in enumerate(itertools.pairwise(resolved), start=1):
        if before.segment.destination != after.segment.origin:
            raise ImportRefused(
                f"journeys[{index}][{n}]: departs from {after.segment.origin}, not from "
                f"{before.segment.destination} where the segment before arrives"
            )
        if after.segment.departs_at <= before.segment.arrives_at:
            raise ImportRefused(
                f"journeys[{index}][{n}]: departs before the segment before arrives"
            )
    return resolved


def _resolve_segment(data: Mapping[str, Any], path: str) -> ResolvedSegment:
    """The legs of our schedule the segment flies: the flight's legs on that date from
    the one leaving `origin` to the one reaching `destination`, in leg sequence."""
    flight = data["flightNumber"].upper()
    # As OrderList reads flight numbers: a leading pair of digits is part of the number.
    carrier, number = ("", flight) if flight[:2].isdigit() else (flight[:2], flight[2:])
    carrier = carrier or settings.AIRLINE_DESIGNATOR
    origin, destination = data["origin"].upper(), data["destination"].upper()
    name = f"{carrier}{int(number)} {origin}-{destination} on {data['departureDate']}"
    if carrier != settings.AIRLINE_DESIGNATOR:
        raise ImportRefused(f"{path}: {name} is another airline's flight")
    rbd = data["rbd"].upper()
    try:
        cabin, _rank = booking_class_position(rbd)
    except ValueError:
        raise ImportRefused(f"{path}: {rbd} is not one of our booking classes") from None
    legs = list(
        FlightLeg.objects.filter(
            carrier=carrier, flight_number=int(number), flight_date=data["departureDate"]
        )
        .select_related("origin", "aircraft_type")
        .order_by("leg_sequence")
    )
    board = next((i for i, leg in enumerate(legs) if leg.origin_id == origin), None)
    off = next(
        (i for i in range(board or 0, len(legs)) if legs[i].destination_id == destination),
        None,
    )
    if board is None or off is None:
        raise ImportRefused(f"{path}: {name} is not a flight of our schedule")
    flown = legs[board : off + 1]
    if any(leg.is_cancelled for leg in flown):
        raise ImportRefused(f"{path}: {name} is cancelled")
    segment = NetworkSegment(tuple(_dated(leg) for leg in flown))
    return ResolvedSegment(segment, cabin, rbd, ZoneInfo(flown[0].origin.time_zone))


def _dated(leg: FlightLeg) -> DatedLeg:
    return DatedLeg(
        id=leg.id,
        carrier=leg.carrier,
        flight_number=leg.flight_number,
        flight_date=leg.flight_date,
        leg_sequence=leg.leg_sequence,
        origin=leg.origin_id,
        destination=leg.destination_id,
        departs_at=leg.departs_at,
        arrives_at=leg.arrives_at,
        aircraft_type=leg.aircraft_type.iata_code,
        configuration_id=leg.configuration_id,
        govt_approval_disclosure=leg.govt_approval_disclosure,
    )


def _take_seats(journeys: Sequence[Sequence[ResolvedSegment]], seats: int) -> None:
    try:
        inventory_apply(
            [
                SeatChange(tuple(leg.id for leg in r.segment.legs), r.rbd, seats)
                for segments in journeys
                for r in segments
            ]
        )
    except SoldOut as exc:
        leg = next(
            leg
            for segments in journeys
            for r in segments
            for leg in r.segment.legs
            if leg.id == exc.leg_id
        )
        raise ImportRefused(
            f"{leg.carrier}{leg.flight_number} {leg.origin}-{leg.destination} on "
            f"{leg.flight_date}: class {exc.rbd} has fewer than {seats} seats left"
        ) from None


def _journey_write(
    order: Order,
    position: int,
    segments: Sequence[ResolvedSegment],
    price: Price,
    pax_ids: Sequence[str],
    seats: int,
) -> None:
    network = NetworkJourney(tuple(r.segment for r in segments))
    journey = journey_row(order, ref=journey_id(network), position=position, journey=network)
    journey.save(force_insert=True)
    first = segments[0]
    OrderItem.objects.create(
        order=order,
        journey=journey,
        ref=ids.new_ref("OOI"),
        bundle=IMPORT_BUNDLE,
        total=price.total,
        # Stored as offers store prices (JSON numbers); Price.from_wire reads them exactly.
        price=orjson.loads(dumps(price.to_wire(order.currency))),
        fare={
            "rbd": first.rbd,
            "cabinTypeCode": first.cabin,
            "cabinName": CabinCode(first.cabin).label,
            "paxRefIds": list(pax_ids),
        },
    )
    segments_write(order, [(journey, r.segment, r.cabin, r.rbd, seats) for r in segments])


def _split_price(price: Mapping[str, Any], parts: int) -> list[Price]:
    """The booking's price as `parts` item prices adding up to it exactly: every amount
    shared equally, the first item taking the odd cents."""
    taxes = [(t["code"].upper(), t["amount"]) for t in price.get("taxes", ())]
    base = price["amount"] - sum((amount for _, amount in taxes), ZERO)
    bases = _split(base, parts)
    tax_shares = [(code, _split(amount, parts)) for code, amount in taxes]
    return [
        Price(base=bases[i], taxes=tuple(Tax(code, "", shares[i]) for code, shares in tax_shares))
        for i in range(parts)
    ]


def _split(amount: Decimal, parts: int) -> list[Decimal]:
    share = (amount / parts).quantize(CENT, rounding=ROUND_DOWN)
    return [amount - share * (parts - 1), *([share] * (parts - 1))]


def _external_payment(order: Order) -> Payment:
    """The money the other channel took, as a payment row: paid = the sum of successful
    payments holds for imported orders too, and a later refund has a payment to go
    against. No card details: we never saw the card."""
    return Payment.objects.create(
        order=order,
        ref=ids.new_ref("PAY"),
        created_at=order.created_at,
        amount=order.total,
        currency=order.currency,
        status=Payment.Status.SUCCESSFUL,
        method=EXTERNAL_PAYMENT,
        gateway_reference=f"import:{order.record_locator}",
    )
