"""Create order (SPEC.md §4.7): the priced offer's journeys checked and booked in one
transaction, with the seats and services of its first sale, then paid (orders.booking.paying).
"""

from collections.abc import Sequence
from datetime import datetime
from decimal import Decimal

from django.conf import settings
from django.db import transaction

from airline.api import clock
from airline.api.errors import ApiError, Err, ErrorCollector
from airline.fares.money import price_sum
from airline.network.inventory import (
    SeatChange,
    SoldOut,
    inventory_apply,
)
from airline.network.itineraries import network_index
from airline.network.services import station_zone
from offers.ancillaries import Traveller, bundle_terms
from offers.store import OfferBatch, OfferOwner, PricedOffer, offer_record
from offers.wire import ref_id
from orders.booking.ancillaries import (
    IN_CREATE,
    HeldService,
    Sale,
    check_sale,
    check_sale_lines,
    inclusion_lines,
)
from orders.booking.paying import (
    Paying,
    card_intent_first,
    check_payment,
    pay_reserved,
    payment_start,
)
from orders.booking.priced import BookedJourney, as_priced, journey_ref
from orders.booking.writes import LocatorTaken, order_insert_ahead, order_rows_write
from orders.core import events, ids
from orders.core.rows import row_new
from orders.models import (
    Channel,
    Order,
    OrderStatus,
)
from orders.reading.selectors import OrderParts
from orders.requests.checks import (
    ContactIn,
    PassengerIn,
    check_amount_stated,
    check_contact,
    check_party_matches,
    check_passengers,
    lead_of,
)
from orders.requests.inputs import (
    AncillaryPick,
    ContactData,
    ItemSelection,
    PassengerData,
    PaymentData,
)
from sellers.authentication import Principal

LOCATOR_ATTEMPTS = 5


def order_create(
    *,
    principal: Principal,
    offer_id: str,
    item_ids: Sequence[str],
    selections: Sequence[ItemSelection] | None,
    passengers: Sequence[PassengerData],
    contact: ContactData,
    payment: PaymentData,
    ancillaries: Sequence[AncillaryPick] = (),
    remarks: str = "",
    channel: str = Channel.JSON,
) -> OrderParts:
    """Book a priced offer (SPEC.md §4.7): ONHOLD with a payment time limit, or CONFIRMED
    with a payment and e-tickets. Returns the new order with every row it wrote, which
    is what a read of it would return: the order view renders from them."""
    now = clock.now()
    batch, offer = offer_record(offer_id=offer_id, owner=OfferOwner.of(principal), now=now)
    if not isinstance(offer, PricedOffer):
        raise ApiError(
            Err.ORDER_NOT_CREATED,
            f"Offer {offer_id} is not a priced offer; price it with POST /offers/price first",
            path="offerId",
        )
    booked, network = _booked_journeys(offer, item_ids, selections, batch)
    first = min(booked, key=lambda b: b.journey.departs_at).journey
    first_date = first.departs_at.astimezone(station_zone(first.origin)).date()
    # Every field error of the passengers, the contact and the payment is reported at
    # once, not one per try.
    errors = ErrorCollector()
    checked: list[PassengerIn] = []
    with errors.check():
        checked = check_passengers(passengers, first_travel_date=first_date)
        check_party_matches(checked, batch.passengers)
    lead = lead_of(checked) if checked else next((p for p in passengers if p.ptc == "ADT"), None)
    if lead is not None:  # none: the party's own error says an adult must travel
        with errors.check():
            contact_in = check_contact(contact, lead=lead)
    with errors.check():
        paying = check_payment(payment, now=now, first_departure=first.departs_at)
    errors.raise_any()
    sale = _first_sale(
        booked,
        checked,
        picks=ancillaries,
        offer_id=offer_id,
        owner=OfferOwner.of(principal),
        now=now,
        network=network,
    )
    total = price_sum(b.price for b in booked).total + sale.amount
    check_amount_stated(payment, due=total, currency="USD")  # USD only (DESIGN.md §4)
    for _ in range(LOCATOR_ATTEMPTS):
        try:
            parts = _write_order(
                principal=principal,
                channel=channel,
                now=now,
                offer_id=offer_id,
                booked=booked,
                passengers=checked,
                contact=contact_in,
                remarks=remarks,
                sale=sale,
                total=total,
                paying=paying,
                network=network,
            )
            break
        except LocatorTaken:
            continue  # the clash rolled the booking back: book it again, a fresh draw
    else:
        raise ApiError(Err.INTERNAL, "No free record locator was found; retry")
    if parts.intent is None or paying.card is None:
        return parts  # on hold, or paid in full by airline credit
    return pay_reserved(parts, card=paying.card, actor=events.actor_of(principal), now=now)


def _booked_journeys(
    offer: PricedOffer,
    item_ids: Sequence[str],
    selections: Sequence[ItemSelection] | None,
    batch: OfferBatch,
) -> tuple[list[BookedJourney], int]:
    """The chosen items of the priced offer with their journeys, still operating, and the
    network version of the schedule they were found in."""
    items = {item.offer_item_id: item for item in offer.items}
    if len(set(item_ids)) != len(item_ids):
        raise ApiError(Err.VALIDATION, "An offerItemId is listed twice", path="offerItemIds")
    for item_id in item_ids:
        if item_id not in items:
            raise ApiError(
                Err.ORDER_NOT_CREATED,
                f"The priced offer has no item {item_id}",
                path="offerItemIds",
            )
    party = {p["paxId"] for p in batch.passengers}
    for selection in selections or ():
        if selection.offer_item_id not in item_ids:
            raise ApiError(
                Err.ORDER_NOT_CREATED,
                f"offerItemSelections names {selection.offer_item_id}, "
                "which is not in offerItemIds",
                path="offerItemSelections.offerItemId",
            )
        chosen = set(selection.passenger_ids or party)
        if chosen != party:
            # The priced offer was priced for the whole party; a part of it is another
            # price, which only a new price offer can quote.
            raise ApiError(
                Err.ORDER_NOT_CREATED,
                "An item can only be booked for every passenger it was priced for; price "
                "the offer again for fewer passengers",
                path="offerItemSelections.passengerIds",
            )
    index = network_index(current=True)
    booked = []
    for item_id in item_ids:
        item = items[item_id]
        journey = index.journey_of(item.segments)
        if journey is None:
            raise ApiError(
                Err.ORDER_NOT_CREATED,
                f"A flight of item {item_id} no longer operates; search again",
                path="offerItemIds",
            )
        booked.append(BookedJourney(item, journey))
    return sorted(booked, key=lambda b: b.journey.departs_at), index.version


def _already_booked(offer_id: str) -> ApiError:
    return ApiError(
        Err.ORDER_NOT_CREATED,
        f"Offer {offer_id} has already been booked; an offer becomes one order",
        path="offerId",
    )


@transaction.atomic
def _write_order(
    *,
    principal: Principal,
    channel: str,
    now: datetime,
    offer_id: str,
    booked: Sequence[BookedJourney],
    passengers: Sequence[PassengerIn],
    contact: ContactIn,
    remarks: str,
    sale: Sale,
    total: Decimal,
    paying: Paying,
    network: int,
) -> OrderParts:
    """The booking's one transaction: the order with a freshly drawn record locator, its
    seats, passengers, contact, journeys, items, segments and legs, its services (bundle
    inclusions, seats and bags bought with it) and its event, then its payment: ONHOLD
    with a time limit; or what an airline credit covers spent from it; CONFIRMED and
    ticketed when nothing is left to pay; else, to be paid by card, PENDING with the
    payment intent the charge will be made under (reserve first: seats and credit are
    taken before any card is charged). Returns what it wrote; LocatorTaken when the
    record locator drawn is another order's (the transaction is then rolled back)."""
    order = _new_order(
        principal=principal,
        channel=channel,
        now=now,
        offer_id=offer_id,
        lead=lead_of(passengers),
        remarks=remarks,
        total=total,
        time_limit=paying.time_limit,
    )
    seats = sum(1 for p in passengers if p.ptc != "INF")  # a lap infant takes no seat
    # The unique source_offer_id makes a racing second booking of the same offer wait
    # on the order's INSERT for the first to commit, then fail, before it takes any
    # seat. The INSERT goes with the legs' lock, in its round trip.
    with order_insert_ahead(order, duplicate=lambda: _already_booked(offer_id)):
        _seats_take(booked, seats=seats, sale=sale)
    actor = events.actor_of(principal)
    created = events.created_event(order, actor=actor, now=now)
    intent = card_intent_first(
        order, principal=principal, paying=paying, offer_id=offer_id, now=now
    )
    parts = order_rows_write(
        order,
        booked=booked,
        passengers=passengers,
        contact=contact,
        sale=sale,
        seats=seats,
        now=now,
        network=network,
        event=created,
        intent=intent,
    )
    events.event_announced(created)
    if paying.time_limit:
        return parts
    return payment_start(
        parts,
        principal=principal,
        paying=paying,
        offer_id=offer_id,
        actor=actor,
        now=now,
        intent=intent,
    )


def _new_order(
    *,
    principal: Principal,
    channel: str,
    now: datetime,
    offer_id: str,
    lead: PassengerIn,
    remarks: str,
    total: Decimal,
    time_limit: datetime | None,
) -> Order:
    """The order row, not yet written: ONHOLD until `time_limit`, else PENDING payment."""
    return row_new(
        Order,
        order_id=ids.new_order_id(),
        record_locator=ids.new_record_locator(),
        owner_code=settings.AIRLINE_DESIGNATOR,
        seller=principal.seller,
        agency_code=principal.key.agency_code or "",
        channel=channel,
        status=OrderStatus.ONHOLD if time_limit else OrderStatus.PENDING,
        created_at=now,
        updated_at=now,
        total=total,
        paid=Decimal(0),
        payment_time_limit=time_limit,
        source_offer_id=offer_id,
        remarks=remarks,
        lead_given_name=lead.given_name,
        lead_surname=lead.surname,
    )


def _seats_take(booked: Sequence[BookedJourney], *, seats: int, sale: Sale) -> None:
    """`seats` seats in each booked segment's class, the legs still as priced
    (as_priced), or ERR-3002 when a class has too few left."""
    try:
        inventory_apply(
            [
                SeatChange(tuple(leg.id for leg in s.legs), rbd, seats)
                for b in booked
                for s, rbd in zip(b.journey.segments, b.item.rbds, strict=True)
            ],
            check=as_priced(booked, seats=sale.lines),
        )
    except SoldOut:
        raise ApiError(
            Err.ORDER_NOT_CREATED,
            "A flight of the offer no longer has seats in its booking class; search again",
            path="offerId",
        ) from None


def _first_sale(
    booked: Sequence[BookedJourney],
    passengers: Sequence[PassengerIn],
    *,
    picks: Sequence[AncillaryPick],
    offer_id: str,
    owner: OfferOwner,
    now: datetime,
    network: int,
) -> Sale:
    """What a new order sells besides its flights: each journey's bundle inclusions for
    every seated passenger (DESIGN.md §11), then the seats and services of the priced
    offer's seat maps and service lists named in `ancillaries` (SPEC.md §3: a hold may
    include them), checked against the inclusions and the booked journeys."""
    travellers = {p.pax_id: Traveller(p.pax_id, p.ptc, bool(p.infant_pax_id)) for p in passengers}
    journey_refs = {journey_ref(b): b for b in booked}
    inclusions = [
        line
        for ref, b in journey_refs.items()
        for line in inclusion_lines(
            bundle=bundle_terms(b.item.bundle), journey_ref=ref, travellers=travellers.values()
        )
    ]
    bought = check_sale_lines(
        picks=picks,
        context={"offerId": offer_id},
        owner=owner,
        now=now,
        refuse=IN_CREATE,
    )
    segment_refs = {
        ref_id("SEG", *(leg.id for leg in s.legs)) for b in booked for s in b.journey.segments
    }
    for line in bought:
        if (line.journey_ref and line.journey_ref not in journey_refs) or (
            line.segment_ref and line.segment_ref not in segment_refs
        ):
            raise IN_CREATE(
                f"{line.product.code} is for a flight not booked here; book its offer item"
            )
    sale = check_sale(
        lines=bought,
        held=[HeldService.of_line(line) for line in inclusions],
        travellers=travellers,
        refuse=IN_CREATE,
        network=network,
    )
    return Sale(lines=(*inclusions, *sale.lines))
