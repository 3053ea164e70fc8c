"""Seats and services of a booking (SPEC.md §3, §4.7, §4.10 AcceptOffer, §4.11;
DESIGN.md §7, §11): selling the items of an ancillary offer (its seat maps and service
lists are built for a Trip: orders.reading.trips) — with the first booking (create
order's `ancillaries`) or later (AcceptOffer) — as services of the order.

A sale is worked out before any write (`check_sale_lines`, then `check_sale` against
what the passengers already hold, bundle inclusions included) and written inside the
booking's or the change's one transaction (`services_write`).
"""

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal

from django.db import IntegrityError

from airline.api.errors import ApiError, Err, ErrorSpec, Reason
from airline.fares import ancillaries
from airline.fares.ancillaries import Product
from airline.fares.money import ZERO
from airline.fares.terms import BundleTerms
from airline.network import fleet
from airline.network.configurations import configuration_seats, seat_refusal
from airline.network.inventory import LockedLeg
from airline.network.itineraries import network_index
from airline.network.models import FlightLeg
from offers.ancillaries import Traveller
from offers.seating import seats_of_configuration
from offers.store import AncillaryOffer, OfferOwner, offer_record
from orders.core import ids
from orders.core.rows import rows_insert
from orders.models import (
    Journey,
    Order,
    Passenger,
    Segment,
    Service,
    TicketSerial,
)
from orders.requests.inputs import AncillaryPick


@dataclass(frozen=True)
class SaleLine:
    """One service to be written: a product for one passenger, on a journey, a segment
    or (a seat) a leg. Refs are those of the Trip it was offered for: the priced offer's
    (ADT-1, JOU-, SEG-) before booking, the order's (PAX-, JOU-, SEG-) after."""

    product: Product
    pax_ref: str
    journey_ref: str | None
    segment_ref: str | None
    leg_id: int | None = None
    seat: tuple[int, str] | None = None
    amount: Decimal = ZERO
    tax: Decimal = ZERO
    included: bool = False  # part of the bundle (DESIGN.md §11 "Bundle inclusions")
    # A seat item's zone and cabin as offered: the seat named must be one of them.
    zone: str = ""
    cabin: str = ""

    @property
    def total(self) -> Decimal:
        return self.amount + self.tax

    @property
    def place(self) -> tuple:
        """Product, passenger and where: one passenger holds a product once per place."""
        return (self.product.code, self.pax_ref, self.journey_ref, self.segment_ref)


@dataclass(frozen=True)
class HeldService:
    """A service a passenger already has: an order's active service row, or a bundle
    inclusion about to be written with a new order (no row yet)."""

    code: str
    pax_ref: str
    journey_ref: str | None
    segment_ref: str | None
    leg_id: int | None = None
    seat: tuple[int, str] | None = None
    included: bool = False
    row: Service | None = None

    @property
    def place(self) -> tuple:
        return (self.code, self.pax_ref, self.journey_ref, self.segment_ref)

    @classmethod
    def of_line(cls, line: SaleLine) -> "HeldService":
        return cls(
            line.product.code,
            line.pax_ref,
            line.journey_ref,
            line.segment_ref,
            line.leg_id,
            line.seat,
            line.included,
        )


@dataclass(frozen=True)
class Sale:
    """What one request sells: new lines, and the seats they replace (DESIGN.md §11
    "Seat change": the old seat is given up in the same transaction)."""

    lines: tuple[SaleLine, ...] = ()
    replaced: tuple[Service, ...] = ()

    @property
    def amount(self) -> Decimal:
        """What the sale adds to the order's value: new lines less the seats given up.
        Negative when a cheaper seat replaces a dearer one; the charge for a change is
        the balance due, which never goes below zero (orders/servicing/changes.py)."""
        return sum((line.total for line in self.lines), ZERO) - sum(
            (row.total for row in self.replaced), ZERO
        )


@dataclass(frozen=True)
class RefuseAs:
    """How the calling flow refuses an entry: create order ERR-4001 on `ancillaries`,
    change order ERR-4002 on `changes` (SPEC.md §4.7, §4.10)."""

    spec: ErrorSpec
    path: str
    # The flow's `error.reason` for a refused sale; None where the flow gives none.
    reason: Reason | None = None

    def __call__(self, description: str, *, reason: Reason | None = None) -> ApiError:
        """The error; `reason` names a finer cause than the flow's own, if it has one."""
        given = (reason or self.reason) if self.reason else None
        return ApiError(self.spec, description, path=self.path, reason=given)


IN_CHANGE = RefuseAs(Err.CHANGE_NOT_APPLIED, "changes", Reason.ANCILLARY_REFUSED)
IN_CREATE = RefuseAs(Err.ORDER_NOT_CREATED, "ancillaries")


def check_sale_lines(
    *,
    picks: Sequence[AncillaryPick],
    context: Mapping[str, str],
    owner: OfferOwner,
    now: datetime,
    refuse: RefuseAs,
) -> list[SaleLine]:
    """AcceptOffer entries (and create order's `ancillaries`, the same entries without
    `type`: DESIGN.md §11) as the lines they buy. The offer must be a seats or services
    offer made for `context` (the order, or the priced offer being booked), the item on
    it, the passengers priced by it, a seat named for a seat item and only then.
    ERR-3000/3001 for a missing or expired offer, ERR-3002 for an item it lacks,
    `refuse` for anything else."""
    lines = []
    for pick in picks:
        _, offer = offer_record(offer_id=pick.offer_id, owner=owner, now=now)
        if not isinstance(offer, AncillaryOffer) or offer.context != dict(context):
            bound_to = " ".join(f"{k} {v}" for k, v in context.items())
            raise refuse(
                f"Offer {pick.offer_id} is not a seat or service offer of {bound_to}",
                reason=Reason.OFFER_UNKNOWN,
            )
        item = offer.items.get(pick.offer_item_id)
        if item is None:
            raise ApiError(
                Err.OFFER_ITEMS_NOT_FOUND,
                f"Offer {pick.offer_id} has no item {pick.offer_item_id}",
                path=f"{refuse.path}.offerItemId",
            )
        product = ancillaries.product(item.code)
        if product is None:
            raise refuse(f"{item.code} is no longer sold")
        refs = tuple(dict.fromkeys(pick.passenger_ids or item.prices))
        for ref in refs:
            if ref not in item.prices:
                raise refuse(f"Item {pick.offer_item_id} is not offered to {ref}")
        seat = pick.seat
        if item.kind == "seat":
            if seat is None or len(refs) != 1:
                raise refuse("A seat item needs `seat` and exactly one passenger")
            seat = (seat[0], seat[1].upper())
        elif seat is not None:
            raise refuse("Only a seat item takes `seat`")
        for ref in refs:
            amount, tax = item.prices[ref]
            lines.append(
                SaleLine(
                    product=product,
                    pax_ref=ref,
                    journey_ref=item.journey_ref,
                    segment_ref=item.segment_ref,
                    leg_id=item.leg_id,
                    seat=seat,
                    amount=amount,
                    tax=tax,
                    zone=item.zone,
                    cabin=item.cabin,
                )
            )
    return lines


def inclusion_lines(
    *, bundle: BundleTerms, journey_ref: str, travellers: Sequence[Traveller]
) -> list[SaleLine]:
    """What the bundle includes, as services of each passenger who takes a seat, at
    price 0 (DESIGN.md §11 "Bundle inclusions": Nicer CB1 and COB; Nicest CB1, CB2 and
    COB). A bag bought later continues the CB ladder from them."""
    products = [
        p
        for p in ancillaries.products()
        if not p.is_seat and bundle.includes_service(p.code) and p.scope == "journey"
    ]
    return [
        SaleLine(product=p, pax_ref=t.ref, journey_ref=journey_ref, segment_ref=None, included=True)
        for t in travellers
        if t.ptc != "INF"
        for p in products
    ]


def check_sale(
    *,
    lines: Sequence[SaleLine],
    held: Sequence[HeldService],
    travellers: Mapping[str, Traveller],
    refuse: RefuseAs,
    network: int | None = None,
) -> Sale:
    """The lines as one sale, checked against what the passengers already hold: a seat
    must be free, sellable and of its item's zone and cabin, and one a passenger already
    has on that leg is replaced; a bag needs the one before it (held or bought with it);
    nothing is held twice. Reads the seats' configurations and the seats taken; the
    unique constraints on services decide any race after this (DESIGN.md §7). `network`:
    the network version the request has read already, if it has."""
    seats = [line for line in lines if line.seat is not None]
    layouts = _seat_layouts({line.leg_id for line in seats}, network)
    replaced: list[Service] = []
    seated: set[tuple[str, int]] = set()
    for line in seats:
        designator = f"{line.seat[0]}{line.seat[1]}"
        seat = layouts[line.leg_id].get(designator)
        refusal = seat_refusal(seat, zone=line.zone, cabin=line.cabin)
        if refusal is not None:
            raise refuse(f"Seat {designator} {refusal}")
        traveller = travellers[line.pax_ref]
        if "EXIT" in seat.characteristics and (traveller.ptc != "ADT" or traveller.carries_infant):
            raise refuse(f"Seat {designator} is in an exit row, not for this passenger")
        if (line.pax_ref, line.leg_id) in seated:
            raise refuse(f"{line.pax_ref} is given two seats on one flight")
        seated.add((line.pax_ref, line.leg_id))
        current = next(
            (
                h.row
                for h in held
                if h.row is not None
                and h.seat is not None
                and (h.pax_ref, h.leg_id) == (line.pax_ref, line.leg_id)
            ),
            None,
        )
        if current is not None and (current.seat_row, current.seat_column) == line.seat:
            raise refuse(f"{line.pax_ref} already has seat {designator}")
        # Whether another booking holds the seat is left to the unique constraint when
        # the sale is written (services_write): a look now would be a query that decides
        # nothing, since the seat can go between the look and the write.
        if current is not None:
            replaced.append(current)
    others = [line for line in lines if line.seat is None]
    have = {h.place for h in held}
    # CB1 before CB2 before CB3, so a request may add a bag and the one it needs together.
    for line in sorted(others, key=lambda line: line.product.code):
        if line.place in have:
            included = any(h.included and h.place == line.place for h in held)
            raise refuse(
                f"{line.pax_ref} already has {line.product.code} there"
                + (" (included in the bundle)" if included else "")
            )
        requires = line.product.requires
        if requires and (requires, *line.place[1:]) not in have:
            raise refuse(f"{line.product.code} can only be added with {requires}")
        have.add(line.place)
    return Sale(lines=tuple(lines), replaced=tuple(replaced))


def check_seats_still_sellable(
    *, lines: Sequence[SaleLine], locked: Mapping[int, LockedLeg], refuse: RefuseAs
) -> None:
    """Under the legs' locks (an inventory LegCheck): every seat of the sale is still on
    the aircraft each leg flies now, not blocked, and of its item's zone and cabin, read
    from the configurations under their share locks (airline.network.configurations).
    `check_sale` looked at the worker's cached layouts, which may be a minute old; a
    block saved before this lock is seen here, and a block saved after it waits for the
    sale to commit and then finds its seat (docs/operators/back-office.md). A leg missing from
    `locked` is refused by the flow's own check (no longer operates)."""
    seats = [line for line in lines if line.seat is not None and line.leg_id in locked]
    if not seats:
        return
    layouts = configuration_seats(
        {locked[line.leg_id].configuration_id for line in seats}, lock="FOR SHARE"
    )
    for line in seats:
        designator = f"{line.seat[0]}{line.seat[1]}"
        layout = layouts.get(locked[line.leg_id].configuration_id, {})
        refusal = seat_refusal(layout.get(designator), zone=line.zone, cabin=line.cabin)
        if refusal is not None:
            raise refuse(f"Seat {designator} {refusal}")


def services_write(
    sale: Sale,
    *,
    order: Order,
    passengers: Mapping[str, Passenger],
    journeys: Mapping[str, Journey],
    segments: Mapping[str, Segment],
    now: datetime,
    refuse: RefuseAs,
) -> list[Service]:
    """Write the sale inside the caller's transaction: the seats it replaces CANCELLED
    first (the one-seat-per-passenger-per-leg constraint), then its lines as services of
    `order`, refs mapped to the rows by the caller. A seat taken meanwhile by another
    booking fails the unique constraint: the caller's transaction then rolls back whole."""
    if sale.replaced:
        given_up = Service.objects.filter(
            pk__in=[row.pk for row in sale.replaced], status=Service.Status.ACTIVE
        ).update(status=Service.Status.CANCELLED)
        if given_up != len(sale.replaced):
            raise refuse(
                "A seat being replaced has changed meanwhile; retrieve the order",
                reason=Reason.ORDER_BUSY,
            )
    rows = [
        Service(
            order=order,
            ref=ids.new_ref("SVR"),
            item_ref=ids.new_ref("OOI"),
            passenger=passengers[line.pax_ref],
            journey=journeys.get(line.journey_ref) if line.journey_ref else None,
            segment=segments.get(line.segment_ref) if line.segment_ref else None,
            flight_leg_id=line.leg_id if line.seat else None,
            seat_row=line.seat[0] if line.seat else None,
            seat_column=line.seat[1] if line.seat else "",
            code=line.product.code,
            name=line.product.name,
            category=line.product.category,
            ssr_code=line.product.ssr_code,
            fee_code=line.product.fee_code,
            amount=line.amount,
            tax=line.tax,
            included=line.included,
            created_at=now,
        )
        for line in sale.lines
    ]
    try:
        rows_insert(rows)
    except IntegrityError as exc:
        # The partial unique indexes decide every race for a seat (DESIGN.md §7).
        raise refuse(
            "A chosen seat has just been taken, or the passenger already has a seat on that flight"
        ) from exc
    return rows


def held_services(
    rows: Iterable[Service],
    *,
    pax_refs: Mapping[int, str],
    journey_refs: Mapping[int, str],
    segment_refs: Mapping[int, str],
) -> list[HeldService]:
    """An order's active service rows as what its passengers hold, in the order's refs."""
    return [
        HeldService(
            code=row.code,
            pax_ref=pax_refs[row.passenger_id],
            journey_ref=journey_refs.get(row.journey_id),
            segment_ref=segment_refs.get(row.segment_id),
            leg_id=row.flight_leg_id,
            seat=(row.seat_row, row.seat_column) if row.seat_row else None,
            included=row.included,
            row=row,
        )
        for row in rows
        if row.status == Service.Status.ACTIVE
    ]


def emds_number(services: Sequence[Service]) -> None:
    """EMD numbers for the paid services that have none yet (DESIGN.md §8): a service
    included in the bundle, or free, has no document."""
    unnumbered = [s for s in services if s.emd_number is None and s.total > 0]
    if not unnumbered:
        return
    serials = TicketSerial.objects.bulk_create([TicketSerial() for _ in unnumbered])
    for service, serial in zip(unnumbered, serials, strict=True):
        service.emd_number = ids.ticket_number(serial.pk)
    Service.objects.bulk_update(unnumbered, ["emd_number"])


def _seat_layouts(leg_ids: set[int], network: int | None) -> dict[int, dict[str, fleet.SeatSpec]]:
    """Each leg's seats by designator, from the configuration the schedule gives it, as
    of the database's network version (`network` when the request has read it; read
    from the database for a leg the schedule no longer has)."""
    if not leg_ids:
        return {}
    index = network_index(current=True, seen=network)
    configurations = {
        leg_id: leg.configuration_id for leg_id in leg_ids if (leg := index.leg(leg_id)) is not None
    }
    missing = leg_ids - configurations.keys()
    if missing:
        configurations.update(
            FlightLeg.objects.filter(pk__in=missing).values_list("pk", "configuration_id")
        )
    return {
        leg_id: {s.designator: s for s in seats_of_configuration(configuration_id)}
        for leg_id, configuration_id in configurations.items()
    }
