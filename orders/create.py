"""Create order (SPEC.md §3, §4.7; DESIGN.md §8): a priced offer booked on hold or paid
by card.

Every write is one transaction: the order and its seats are written together or not at
all. A card booking reserves first (the order PENDING with its seats and its payment
intent, committed), then charges the card under the intent (no row is locked while a
gateway thinks), then confirms the order and attaches the charge in a second
transaction; a refused card gives the reservation back, a failed confirmation refunds
(orders/intents.py), and whatever a dead worker leaves the reconciler settles
(orders/reconcile.py).
"""

from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from decimal import Decimal
from functools import cache, cached_property
from typing import Any

from django.conf import settings
from django.db import IntegrityError, connection, transaction
from django.db.models import F

from airline.api import clock
from airline.api.errors import ApiError, Err, ErrorCollector
from airline.fares.money import Price, price_sum
from airline.network.inventory import (
    LegCheck,
    LockedLeg,
    SeatChange,
    SoldOut,
    inventory_apply,
    legs_as_shown,
)
from airline.network.itineraries import DatedLeg, network_index
from airline.network.itineraries import Journey as NetworkJourney
from airline.network.services import station_zone
from airline.sql import commit_without_flush
from offers.ancillaries import Traveller, bundle_terms
from offers.store import OfferBatch, OfferOwner, PricedItem, PricedOffer, offer_record
from offers.wire import journey_id, local_time, ref_id
from orders import events, ids
from orders.ancillaries import (
    IN_CREATE,
    HeldService,
    Sale,
    SaleLine,
    check_sale,
    check_sale_lines,
    check_seats_still_sellable,
    emds_number,
    inclusion_lines,
    services_write,
)
from orders.checks import (
    ContactIn,
    PassengerIn,
    check_amount_stated,
    check_contact,
    check_party_matches,
    check_passengers,
    lead_of,
)
from orders.credits import credit_payment, credit_redeem
from orders.holds import hold_time_limit, seats_release
from orders.inputs import (
    AncillaryPick,
    CardPayment,
    ContactData,
    CreditPayment,
    Hold,
    ItemSelection,
    OtherPayment,
    PassengerData,
    PaymentData,
)
from orders.intents import card_charged, intent_attach, intent_open
from orders.models import (
    AirlineCredit,
    Channel,
    Contact,
    Journey,
    Leg,
    Order,
    OrderItem,
    OrderStatus,
    Passenger,
    Payment,
    PaymentIntent,
    Segment,
)
from orders.payments import Card, Charge, card_check, credit_card_check
from orders.rows import rows_insert
from orders.selectors import LegPart, OrderParts, OrderScope
from orders.tickets import payment_record, tickets_issue
from sellers.authentication import Principal

LOCATOR_ATTEMPTS = 5


@dataclass(frozen=True)
class BookedJourney:
    """A priced offer item with the journey it flies."""

    item: PricedItem
    journey: NetworkJourney

    @cached_property
    def price(self) -> Price:
        """The item's total price, read once from its wire."""
        return Price.from_wire(self.item.total_price)


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
    booked = _booked_journeys(offer, item_ids, selections, batch)
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
        paying = _check_payment(payment, now=now, first_departure=first.departs_at)
    errors.raise_any()
    sale = _first_sale(
        booked,
        checked,
        picks=ancillaries,
        offer_id=offer_id,
        owner=OfferOwner.of(principal),
        now=now,
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
            )
            break
        except LocatorTaken:
            continue  # the clash rolled the booking back: book it again, a fresh draw
    else:
        raise ApiError(Err.INTERNAL, "No free record locator was found; retry")
    if parts.intent is None or paying.card is None:
        return parts  # on hold, or paid in full by airline credit
    return _pay_reserved(parts, card=paying.card, actor=events.actor_of(principal), now=now)


@dataclass(frozen=True)
class Paying:
    """How a booking is paid, checked: on hold until `time_limit`, by `card`, by the
    airline credit `credit_code` (and `card` for what it does not cover)."""

    time_limit: datetime | None = None
    card: Card | None = None
    credit_code: str = ""


def _check_payment(payment: PaymentData, *, now: datetime, first_departure: datetime) -> Paying:
    """The request's payment as a Paying, or ERR-4001 (a hold too close to departure),
    ERR-6000 (a type we do not take), ERR-6001/1005 (a bad card)."""
    match payment:
        case Hold():
            return Paying(time_limit=hold_time_limit(now=now, first_departure=first_departure))
        case CardPayment():
            return Paying(card=card_check(payment, now=now))
        case CreditPayment(credit_code=code, card=card):
            return Paying(
                credit_code=code,
                card=None if card is None else credit_card_check(card, now=now),
            )
        case OtherPayment(type=kind):
            raise ApiError(
                Err.PAYMENT_METHOD,
                f"Payment type {kind} is not supported; use Hold, CreditCard or AirlineCredit",
                path="payment.type",
            )
    raise TypeError(f"not a payment: {payment!r}")


def _pay_reserved(parts: OrderParts, *, card: Card, actor: str, now: datetime) -> OrderParts:
    """Charge the card for an order reserved PENDING with its intent, then confirm it.
    A card refused gives the seats (and any airline credit spent) back and leaves no
    order; a confirmation that fails refunds the charge first. Whatever a dying worker
    leaves, the reconciler settles."""
    try:
        with card_charged(parts.intent, card, why="the booking could not be confirmed") as charge:
            return order_confirm_paid(
                parts, intent=parts.intent, charge=charge, actor=actor, now=now
            )
    except BaseException:
        order_abandon(parts.order)
        raise


@transaction.atomic
def order_confirm_paid(
    parts: OrderParts, *, intent: PaymentIntent, charge: Charge, actor: str, now: datetime
) -> OrderParts:
    """The reserved order, charged: CONFIRMED and paid, its payment row (the intent
    attached to it), e-tickets, EMDs for its paid services, and the event. Called by
    create order right after the charge, and by the reconciler for an order whose worker
    died after charging. `parts` are the order's, as written or as read back."""
    # Only with DB_COMMIT_WITHOUT_FLUSH=1 (off by default): this commit may then return
    # before it is on disk. A crash can lose it, never the money: the intent (committed
    # and flushed with the reservation) is still PENDING and the gateway still holds the
    # charge, so the reconciler confirms the order again (docs/production.md "Commits
    # without a flush").
    commit_without_flush()
    order = parts.order
    # `paid` may already hold the airline credit the reservation spent: the card pays
    # the rest (DESIGN.md §11 "Airline credit").
    confirmed = Order.objects.filter(pk=order.pk, status=OrderStatus.PENDING).update(
        status=OrderStatus.CONFIRMED,
        paid=F("paid") + charge.amount,
        updated_at=now,
        version=F("version") + 1,
    )
    if not confirmed:
        raise ApiError(Err.INTERNAL, "The booking was settled meanwhile; retrieve it")
    order.status, order.paid, order.updated_at = (
        OrderStatus.CONFIRMED,
        order.paid + charge.amount,
        now,
    )
    order.version += 1
    payment = payment_record(order, charge=charge, intent=intent, now=now)
    intent_attach(intent, charge=charge, payment=payment)
    parts = replace(parts, payments=[*parts.payments, payment])
    return _ticketed(parts, paid=charge.amount, actor=actor, now=now)


def _ticketed(parts: OrderParts, *, paid: Decimal, actor: str, now: datetime) -> OrderParts:
    """Inside the transaction that confirms a paid order: its e-tickets issued, its paid
    services' EMDs numbered, and the event of the payment (`paid`) recorded."""
    tickets, coupons = tickets_issue(
        parts.order,
        now=now,
        passengers=parts.passengers,
        segments=[s for j in parts.journeys for s in parts.segments[j.pk]],
    )
    emds_number(parts.services)
    events.order_paid(parts.order, actor=actor, now=now, amount=paid)
    return replace(
        parts,
        tickets=tickets,
        coupons={t.pk: [c for c in coupons if c.ticket_id == t.pk] for t in tickets},
    )


def order_abandon(order: Order) -> bool:
    """Undo a reservation that was never paid: its seats back, the order gone (its
    client was told nothing was booked; the intent keeps the record of the attempt).
    False when it is no longer PENDING: it was paid, or abandoned already."""
    with transaction.atomic():
        # The row lock picks one winner between a failing request and the reconciler.
        pending = Order.objects.select_for_update().filter(pk=order.pk, status=OrderStatus.PENDING)
        if not pending.exists():
            return False
        seats_release(order)
        credits_restore(order)
        # An adult's link to the infant on its lap protects the infant's row: let go of
        # it first, or the order could not be deleted with its passengers.
        Passenger.objects.filter(order=order, infant__isnull=False).update(infant=None)
        pending.delete()
    return True


def credits_restore(order: Order) -> None:
    """Inside the abandoning transaction: give back to their credits what the reserved
    order spent of them, before its payment rows go with it. Each credit gets exactly
    what it gave, so `remaining` never passes `amount`."""
    spent = Payment.objects.filter(order=order, method=Payment.Method.CREDIT).values_list(
        "credit_id", "amount"
    )
    for credit_id, amount in spent:
        AirlineCredit.objects.filter(pk=credit_id).update(remaining=F("remaining") + amount)


def _booked_journeys(
    offer: PricedOffer,
    item_ids: Sequence[str],
    selections: Sequence[ItemSelection] | None,
    batch: OfferBatch,
) -> list[BookedJourney]:
    """The chosen items of the priced offer with their journeys, still operating."""
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
    return sorted(booked, key=lambda b: b.journey.departs_at)


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
    # The unique source_offer_id makes a racing second booking of the same offer wait
    # here for the first to commit, then fail, before it takes any seat.
    order_insert(order, duplicate=lambda: _already_booked(offer_id))
    seats = sum(1 for p in passengers if p.ptc != "INF")  # a lap infant takes no seat
    _seats_take(booked, seats=seats, sale=sale)
    parts = _order_rows_write(
        order,
        booked=booked,
        passengers=passengers,
        contact=contact,
        sale=sale,
        seats=seats,
        now=now,
    )
    actor = events.actor_of(principal)
    events.order_created(order, actor=actor, now=now)
    if paying.time_limit:
        return parts
    return _payment_start(
        parts, principal=principal, paying=paying, offer_id=offer_id, actor=actor, now=now
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
    return Order(
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


def _order_rows_write(
    order: Order,
    *,
    booked: Sequence[BookedJourney],
    passengers: Sequence[PassengerIn],
    contact: ContactIn,
    sale: Sale,
    seats: int,
    now: datetime,
) -> OrderParts:
    """The new order's passengers, contact, journeys, items, segments, legs and services,
    returned as the parts a read of the order would give (no payment yet)."""
    passenger_rows = passengers_write(order, passengers)
    contact_row = contact_write(order, contact)
    journeys = rows_insert(
        [
            journey_row(order, ref=_journey_ref(b), position=position, journey=b.journey)
            for position, b in enumerate(booked, start=1)
        ]
    )
    items = rows_insert(
        [
            OrderItem(
                order=order,
                journey=journey,
                ref=ids.new_ref("OOI"),
                bundle=b.item.bundle,
                total=b.price.total,
                price=b.item.total_price,
                fare=b.item.fare,
                passenger_prices=b.item.passenger_prices,
            )
            for journey, b in zip(journeys, booked, strict=True)
        ]
    )
    segment_rows, legs = segments_write(
        order,
        [
            (journey, s, b.item.cabin, rbd, seats)
            for journey, b in zip(journeys, booked, strict=True)
            for s, rbd in zip(b.journey.segments, b.item.rbds, strict=True)
        ],
    )
    services = (
        services_write(
            sale,
            order=order,
            passengers={p.offer_pax_id: p for p in passenger_rows},
            journeys={j.ref: j for j in journeys},
            segments={s.ref: s for s in segment_rows},
            now=now,
            refuse=IN_CREATE,
        )
        if sale.lines
        else []
    )
    # What the order view shows of a leg is the scheduled flight leg, which the network
    # index the journeys came from holds: no need to read it back.
    flown = {leg.id: leg for b in booked for s in b.journey.segments for leg in s.legs}
    return OrderParts(
        order=order,
        passengers=passenger_rows,
        contacts=[contact_row],
        journeys=journeys,
        items=items,
        segments={j.pk: [s for s in segment_rows if s.journey_id == j.pk] for j in journeys},
        legs={
            s.pk: [_leg_part(leg, flown) for leg in legs if leg.segment_id == s.pk]
            for s in segment_rows
        },
        services=services,
        payments=[],
        tickets=[],
        coupons={},
    )


def _payment_start(
    parts: OrderParts,
    *,
    principal: Principal,
    paying: Paying,
    offer_id: str,
    actor: str,
    now: datetime,
) -> OrderParts:
    """Inside the booking's transaction, an order not on hold: what its airline credit
    covers spent (CONFIRMED and ticketed when that is all of it); the rest, by card,
    left PENDING with the payment intent the card will be charged under."""
    order = parts.order
    due = order.total
    if paying.credit_code:
        parts = _pay_by_credit(
            parts, code=paying.credit_code, scope=OrderScope.of(principal), actor=actor, now=now
        )
        due = order.total - order.paid
        if due > 0 and paying.card is None:
            # Rolls back the whole booking, the credit's UPDATE with it.
            raise ApiError(
                Err.PAYMENT_REJECTED,
                f"The airline credit covers {order.paid} of the {order.total} USD due; send "
                "`card` with it to pay the rest",
                path="payment.card",
            )
        if due <= 0:
            return _confirm_by_credit(parts, actor=actor, now=now)
    assert paying.card is not None
    return replace(
        parts,
        intent=intent_open(
            seller=principal.seller,
            purpose=PaymentIntent.Purpose.CREATE,
            amount=due,
            card=paying.card,
            now=now,
            order=order,
            offer_id=offer_id,
        ),
    )


def _pay_by_credit(
    parts: OrderParts, *, code: str, scope: OrderScope, actor: str, now: datetime
) -> OrderParts:
    """Inside the booking's transaction: spend what the airline credit `code` in `scope`
    holds, up to the order's total, as the order's first payment (ERR-6002 for a code
    that cannot be used). Its conditional UPDATE (orders/credits.py) is what stops two
    bookings racing for one credit from spending more than it holds."""
    order = parts.order
    credit = credit_redeem(code=code, scope=scope, amount=order.total, now=now)
    Order.objects.filter(pk=order.pk).update(paid=credit.spent)
    order.paid = credit.spent
    return replace(parts, payments=[credit_payment(order, credit, actor=actor, now=now)])


def _confirm_by_credit(parts: OrderParts, *, actor: str, now: datetime) -> OrderParts:
    """Inside the booking's transaction, an order its airline credit paid in full:
    CONFIRMED, e-tickets and EMDs issued, as a card payment would have left it."""
    order = parts.order
    Order.objects.filter(pk=order.pk).update(status=OrderStatus.CONFIRMED)
    order.status = OrderStatus.CONFIRMED
    return _ticketed(parts, paid=order.paid, actor=actor, now=now)


def _first_sale(
    booked: Sequence[BookedJourney],
    passengers: Sequence[PassengerIn],
    *,
    picks: Sequence[AncillaryPick],
    offer_id: str,
    owner: OfferOwner,
    now: datetime,
) -> Sale:
    """What a new order sells besides its flights: each journey's bundle inclusions for
    every seated passenger (DESIGN.md §11), then the seats and services of the priced
    offer's seat maps and service lists named in `ancillaries` (SPEC.md §3: a hold may
    include them), checked against the inclusions and the booked journeys."""
    travellers = {p.pax_id: Traveller(p.pax_id, p.ptc, bool(p.infant_pax_id)) for p in passengers}
    journey_refs = {_journey_ref(b): b for b in booked}
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
    )
    return Sale(lines=(*inclusions, *sale.lines))


def _journey_ref(booked: BookedJourney) -> str:
    """The JOU- id of a booked journey: the priced offer's, so that seat and service
    items offered for it name the order's journey."""
    return booked.item.journey_id or journey_id(booked.journey)


def as_priced(booked: Sequence[BookedJourney], *, seats: Sequence[SaleLine] = ()) -> LegCheck:
    """What a booking's legs must still be under their locks: operating, at the times and
    on the aircraft its priced offer showed (the flight wire priced items keep) and that
    the journeys it writes carry (taken from this worker's schedule index, which may be
    older than the offer: legs_as_shown), and the seats it buys (`seats`: the sale's
    lines) still sellable on them (check_seats_still_sellable). The worker's schedule
    and seat layouts may be a second old; the locked rows are not."""
    written = legs_as_shown(
        (leg for b in booked for s in b.journey.segments for leg in s.legs),
        refuse=_not_as_written,
    )
    priced: dict[int, Mapping[str, Any]] = {
        leg_id: leg
        for b in booked
        for leg_ids, segment in zip(b.item.segments, b.item.flight["segments"], strict=True)
        for leg_id, leg in zip(leg_ids, segment["legs"], strict=True)
    }

    def check(locked: Mapping[int, LockedLeg]) -> None:
        for leg_id, shown in priced.items():
            leg = locked.get(leg_id)
            if leg is None or leg.is_cancelled:
                raise _not_as_priced(shown, "no longer operates")
            if (
                local_time(leg.departs_at, station_zone(shown["origin"])),
                local_time(leg.arrives_at, station_zone(shown["destination"])),
                leg.aircraft_type,
            ) != (shown["departureDateTime"], shown["arrivalDateTime"], shown["aircraftTypeCode"]):
                raise _not_as_priced(shown, "has changed since it was priced")
        written(locked)
        check_seats_still_sellable(lines=seats, locked=locked, refuse=IN_CREATE)

    return check


def _not_as_priced(leg: Mapping[str, Any], what: str) -> ApiError:
    return ApiError(
        Err.ORDER_NOT_CREATED,
        f"The flight leg {leg['origin']}-{leg['destination']} departing "
        f"{leg['departureDateTime']} {what}; search again",
        path="offerId",
    )


def _not_as_written(leg: DatedLeg, what: str) -> ApiError:
    return ApiError(
        Err.ORDER_NOT_CREATED,
        f"The flight leg {leg.origin}-{leg.destination} departing "
        f"{local_time(leg.departs_at, station_zone(leg.origin))} {what}; search again",
        path="offerId",
    )


def _leg_part(row: Leg, flown: Mapping[int, DatedLeg]) -> LegPart:
    leg = flown[row.flight_leg_id]
    return LegPart(
        ref=row.ref,
        origin=leg.origin,
        destination=leg.destination,
        departs_at=leg.departs_at,
        arrives_at=leg.arrives_at,
        aircraft_type=leg.aircraft_type,
    )


class LocatorTaken(Exception):
    """The record locator drawn for a new order is another order's."""


def order_insert(order: Order, *, duplicate: Callable[[], Exception]) -> None:
    """Insert a new order with the record locator drawn for it: LocatorTaken when another
    order has that locator, `duplicate()` when the order itself exists (its offer is
    booked). No savepoint: a clash ends the caller's transaction, which order_create runs
    again with a fresh draw. That clash is rare (there are 32^6, about 10^9, locators),
    and a savepoint around every insert cost every booking two round trips."""
    # Looked up before the INSERT (once per process): after a failed statement,
    # PostgreSQL's transaction takes no other.
    locator_unique = _unique_constraints(Order._meta.db_table, "record_locator")
    try:
        rows_insert([order])
    except IntegrityError as exc:
        if _locator_taken(exc, order, locator_unique):
            raise LocatorTaken from exc
        raise duplicate() from exc


def _locator_taken(exc: IntegrityError, order: Order, locator_unique: frozenset[str]) -> bool:
    """Whether the INSERT of `order` broke the uniqueness of its record locator (not of
    its order id or source offer), by the name of the constraint: PostgreSQL's error
    carries it (psycopg's `diag.constraint_name`). SQLite's names none, but its
    transaction goes on after a failed statement, so it is asked."""
    diag = getattr(exc.__cause__, "diag", None)
    if diag is not None:
        return diag.constraint_name in locator_unique
    return Order.objects.filter(record_locator=order.record_locator).exists()


@cache
def _unique_constraints(table: str, column: str) -> frozenset[str]:
    """The names of the database's unique constraints on `table`'s `column` alone, as it
    reports them (the name is the database's own choice for a field's unique=True)."""
    with connection.cursor() as cursor:
        constraints = connection.introspection.get_constraints(cursor, table)
    return frozenset(
        name for name, c in constraints.items() if c["unique"] and c["columns"] == [column]
    )


def journey_row(order: Order, *, ref: str, position: int, journey: NetworkJourney) -> Journey:
    """The order's journey as booked, with what OrderList summaries show of it: the
    departure date at the origin and the first segment's flight number."""
    return Journey(
        order=order,
        ref=ref,
        position=position,
        origin=journey.origin,
        destination=journey.destination,
        departs_at=journey.departs_at,
        arrives_at=journey.arrives_at,
        departure_date=journey.departs_at.astimezone(station_zone(journey.origin)).date(),
        flight_number=journey.segments[0].flight_number,
    )


def passengers_write(order: Order, passengers: Iterable[PassengerIn]) -> list[Passenger]:
    """The passengers, infants first so that their carriers can point at them."""
    rows = {
        p.pax_id: Passenger(
            order=order,
            ref=ids.new_ref("PAX"),
            offer_pax_id=p.pax_id,
            position=position,
            ptc=p.ptc,
            given_name=p.given_name,
            surname=p.surname,
            date_of_birth=p.date_of_birth,
            gender=p.gender,
            nationality=p.nationality,
            residence_country=p.residence_country,
            loyalty_program=p.loyalty_program,
            travel_documents=p.travel_documents,
            contacts=p.contacts,
        )
        for position, p in enumerate(passengers, start=1)
    }
    infants = [row for row in rows.values() if row.ptc == "INF"]
    rows_insert(infants)
    for p in passengers:
        if p.infant_pax_id:
            rows[p.pax_id].infant = rows[p.infant_pax_id]
    rows_insert([row for row in rows.values() if row.ptc != "INF"])
    return sorted(rows.values(), key=lambda row: row.position)


def contact_write(order: Order, contact: ContactIn) -> Contact:
    """The order's contact."""
    row = Contact(
        order=order,
        ref=ids.new_ref("CTC"),
        email=contact.email,
        phone=contact.phone,
        given_name=contact.given_name,
        surname=contact.surname,
        postal_address=contact.postal_address,
    )
    rows_insert([row])
    return row


def segments_write(
    order: Order, segments: Sequence[tuple], *, taken: Collection[str] = ()
) -> tuple[list[Segment], list[Leg]]:
    """Segments and their legs, in travel order: (order journey, network segment, cabin,
    rbd, seats) each. A segment's id is the offer's for its legs (what seat maps and
    service lists of the priced offer name) unless the order already has that id among
    `taken` (SEG- and LEG- ids it holds: a flight exchanged and exchanged back): then a
    fresh one, so that ids stay unique within the order (SPEC.md §1)."""
    positions: dict[int, int] = {}
    rows = []
    for journey, s, cabin, rbd, seats in segments:
        positions[journey.pk] = positions.get(journey.pk, 0) + 1
        ref = ref_id("SEG", *(leg.id for leg in s.legs))
        rows.append(
            Segment(
                order=order,
                journey=journey,
                ref=ref if ref not in taken else ids.new_ref("SEG"),
                position=positions[journey.pk],
                carrier=s.carrier,
                flight_number=s.flight_number,
                origin=s.origin,
                destination=s.destination,
                departs_at=s.departs_at,
                arrives_at=s.arrives_at,
                cabin=cabin,
                rbd=rbd,
                seats=seats,
            )
        )
    rows_insert(rows)
    legs = rows_insert(
        [
            Leg(segment=row, flight_leg_id=leg.id, ref=_leg_ref(leg.id, taken), position=n)
            for row, (_, s, *_rest) in zip(rows, segments, strict=True)
            for n, leg in enumerate(s.legs, start=1)
        ]
    )
    return rows, legs


def _leg_ref(leg_id: int, taken: Collection[str]) -> str:
    ref = ref_id("LEG", leg_id)
    return ref if ref not in taken else ids.new_ref("LEG")
