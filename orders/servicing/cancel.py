"""Cancelling journeys and whole orders (SPEC.md §4.10 CancelJourney, §4.12 CancelOrder and
DeleteOrderItems; DESIGN.md §7 bundle rules and the 24-hour rule, §11 "Cancelling a paid
order" and "Reshop CancelOrder cancellation").

One function, `cancellation_terms`, says what cancelling some of an order's journeys gives
back; reshop quotes it and change order's CancelJourney commits it, so what the agent was
shown is what happens. Per journey (its flight item and the seats and bags on it):

- an unpaid hold: nothing is owed either way; the journey's value is voided;
- a paid order within 24 hours of booking and at least 7 days before its first departure:
  everything back to the original payment, whatever the bundle;
- otherwise the bundle's cancellation terms: Nicest refunds to the card; Nice and Nicer
  give the flight's full value as airline credit; No Flex gives credit on its lead-time
  scale (`BundleTerms.cancellation_percent`) and only for the whole reservation
  (`fullReservationOnly`). Seats and bags come back with the flight only where the
  bundle's penalty says `creditIncludesAddOns`; otherwise they are kept.

A refund larger than the order's cards can take (value paid with airline credit) comes
back as credit (changes.give_back_split). When no journey is left the order is CANCELLED.
"""

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from decimal import Decimal
from typing import Any

from django.db.models import F, Q

from airline.api.errors import ApiError, Err, Reason
from airline.fares.money import ZERO, money, money_wire
from airline.fares.terms import BundleTerms
from airline.network.inventory import SeatChange, inventory_apply
from offers.ancillaries import bundle_terms
from orders.core import events
from orders.models import Coupon, Journey, Order, OrderItem, OrderStatus, Segment, Service
from orders.money.fees import CANCELLATION, fee_charge
from orders.money.refunds import refundable
from orders.requests.inputs import CancelJourney
from orders.servicing.plan import GiveBack, Plan, give_back_split
from orders.servicing.reshop_request import ReshopRequest

LIVE = "CONFIRMED"  # an order item's status while it flies
FULL_REFUND_WITHIN = timedelta(hours=24)  # of booking (DESIGN.md §7)
FULL_REFUND_LEAD = timedelta(days=7)  # ... and at least this long before departure


@dataclass(frozen=True)
class JourneyCancellation:
    """What cancelling one journey of an order gives back, and how."""

    item: OrderItem
    journey: Journey
    services: tuple[Service, ...]  # the live seats and bags on it
    value: Decimal  # the flight item and its services, as sold
    penalty: Decimal  # kept by the airline
    refund: Decimal  # owed back to the original payment
    credit: Decimal  # given as airline credit

    @property
    def coupon_status(self) -> str:
        """What the journey's open coupons become: refunded, exchanged for a credit, or
        void when nothing came back for them."""
        if self.refund:
            return Coupon.Status.REFUNDED
        if self.credit:
            return Coupon.Status.EXCHANGED
        return Coupon.Status.VOID


@dataclass(frozen=True)
class Cancellation:
    """What cancelling some journeys of an order gives back, all told."""

    journeys: tuple[JourneyCancellation, ...]
    whole_order: bool  # no journey would be left
    paid: bool  # money moves (a confirmed order); an unpaid hold's lines are voided

    @property
    def value(self) -> Decimal:
        return sum((j.value for j in self.journeys), ZERO)

    @property
    def penalty(self) -> Decimal:
        return sum((j.penalty for j in self.journeys), ZERO)

    def split(self, order: Order):
        """Refund and credit as change order will give them: a refund only as far as the
        order's cards can take it (changes.give_back_split)."""
        # What the provider already gave back outside this service is not given again
        # (changes._settle_back).
        back = max(self.value - self.penalty - order.refunded_outside, ZERO)
        return give_back_split(
            back if self.paid else ZERO,
            refund=sum((j.refund for j in self.journeys), ZERO),
            credit=sum((j.credit for j in self.journeys), ZERO),
            rest_to=GiveBack.RETAIN,
            cards=refundable(order) if self.paid else ZERO,
        )


def cancellation_terms(order: Order, journeys: Sequence[Journey], *, now: datetime) -> Cancellation:
    """What cancelling `journeys` (live journeys of `order`, read with SLIM_PARTS)
    gives back now; ERR-4002 for one that has departed, or a partial cancellation of a
    bundle sold for the whole reservation only."""
    items = {i.journey_id: i for i in order.items.all() if i.status == LIVE}
    live = [j for j in order.journeys.all() if j.pk in items]
    whole = {j.pk for j in journeys} == {j.pk for j in live}
    # Once a journey has flown, what is left of the reservation is the journeys still to
    # fly: cancelling all of them is the whole reservation to a bundle's terms, and the
    # order, still holding the flown journey, stays.
    rest = {j.pk for j in journeys} == {j.pk for j in live if j.departs_at > now}
    if not journeys or not live:
        raise ApiError(
            Err.CHANGE_NOT_APPLIED,
            "The order has no journey left to cancel",
            reason=Reason.NOTHING_TO_CANCEL,
            path="changes",
        )
    paid = order.status == OrderStatus.CONFIRMED
    first_departure = min(j.departs_at for j in live)
    full_refund = (
        paid
        and now - order.created_at <= FULL_REFUND_WITHIN
        and first_departure - now >= FULL_REFUND_LEAD
    )
    services = live_services(order, journeys)
    found = []
    for journey in journeys:
        if journey.departs_at <= now:
            raise ApiError(
                Err.CHANGE_NOT_APPLIED,
                f"Journey {journey.ref} has departed; it cannot be cancelled",
                reason=Reason.JOURNEY_DEPARTED,
                path="changes.journeyRef",
            )
        item = items[journey.pk]
        bundle = bundle_terms(item.bundle)
        if not rest and not full_refund and _whole_reservation_only(bundle):
            raise ApiError(
                Err.CHANGE_NOT_APPLIED,
                f"The {bundle.name} bundle is cancelled for the whole reservation only; "
                "cancel every journey in one request",
                reason=Reason.FARE_RULES,
                path="changes.journeyRef",
            )
        on_it = tuple(services.get(journey.pk, ()))
        addons = sum((s.total for s in on_it), ZERO)
        found.append(
            _journey_terms(
                item, journey, on_it, addons, bundle, paid=paid, full_refund=full_refund, now=now
            )
        )
    return Cancellation(journeys=tuple(found), whole_order=whole, paid=paid)


def _journey_terms(
    item: OrderItem,
    journey: Journey,
    services: tuple[Service, ...],
    addons: Decimal,
    bundle: BundleTerms,
    *,
    paid: bool,
    full_refund: bool,
    now: datetime,
) -> JourneyCancellation:
    value = item.total + addons
    if not paid:
        return JourneyCancellation(item, journey, services, value, ZERO, ZERO, ZERO)
    if full_refund:
        return JourneyCancellation(item, journey, services, value, ZERO, value, ZERO)
    back_addons = addons if _credit_includes_addons(bundle) else ZERO
    if bundle.refund_method == "refund":
        back = item.total + back_addons
        return JourneyCancellation(item, journey, services, value, value - back, back, ZERO)
    percent = 100
    if bundle.refund_method == "credit_scale":
        percent = bundle.cancellation_percent((journey.departs_at - now).days)
    back = money(item.total * percent / 100) + back_addons
    return JourneyCancellation(item, journey, services, value, value - back, ZERO, back)


def _cancellation_penalty(bundle: BundleTerms) -> Mapping[str, Any]:
    return next((p for p in bundle.penalties if p.get("typeCode") == "Cancellation"), {})


def _credit_includes_addons(bundle: BundleTerms) -> bool:
    return bool(_cancellation_penalty(bundle).get("creditIncludesAddOns"))


def _whole_reservation_only(bundle: BundleTerms) -> bool:
    return bool(_cancellation_penalty(bundle).get("fullReservationOnly"))


def live_services(order: Order, journeys: Iterable[Journey]) -> dict[int, list[Service]]:
    """The live seats and bags on each journey: a bag names its journey, a seat its
    segment."""
    ids = [j.pk for j in journeys]
    by_journey: dict[int, list[Service]] = {}
    rows = Service.objects.filter(
        Q(journey_id__in=ids) | Q(segment__journey_id__in=ids),
        order=order,
        status=Service.Status.ACTIVE,
    ).select_related("segment")
    for service in rows.order_by("id"):
        journey_id = service.journey_id or service.segment.journey_id
        by_journey.setdefault(journey_id, []).append(service)
    return by_journey


def cancellation_wire(order: Order, cancellation: Cancellation) -> dict[str, Any]:
    """SPEC.md §2.7 `cancellation`, with DESIGN.md §11's `creditAmount` beside it."""
    split = cancellation.split(order)
    return {
        "penaltyAmount": money_wire(cancellation.penalty if cancellation.paid else ZERO),
        "refundAmount": money_wire(split.refund),
        "creditAmount": money_wire(split.credit),
        "isRefundable": split.refund > 0,
    }


# --- change order: CancelJourney -------------------------------------------------------


def check_cancel_journey(plan: Plan, entries: Sequence[CancelJourney]) -> Any:
    """The journeys named, each once and live on the order (ERR-4006 for a journeyRef
    the order does not have): what cancelling them gives back goes into the plan."""
    order = plan.order
    journeys = {j.ref: j for j in order.journeys.all()}
    live_items = {i.journey_id for i in order.items.all() if i.status == LIVE}
    chosen: list[Journey] = []
    for entry in entries:
        ref = entry.journey_ref
        journey = journeys.get(ref)
        if journey is None:
            raise ApiError(
                Err.JOURNEY_NOT_ON_ORDER,
                f"Journey {ref} is not on this order",
                path="changes.journeyRef",
            )
        if journey.pk not in live_items or journey in chosen:
            raise ApiError(
                Err.CHANGE_NOT_APPLIED,
                f"Journey {ref} is already cancelled or named twice",
                reason=Reason.NOT_ON_ORDER,
                path="changes.journeyRef",
            )
        chosen.append(journey)
    cancellation = cancellation_terms(order, chosen, now=plan.now)
    plan.added -= cancellation.value
    if cancellation.paid:
        plan.retained += cancellation.penalty
        plan.refund_owed += sum((j.refund for j in cancellation.journeys), ZERO)
        plan.credit_owed += sum((j.credit for j in cancellation.journeys), ZERO)
    else:
        plan.voided += cancellation.value
    plan.cancelled = plan.cancelled or cancellation.whole_order

    def do_cancel_journey(plan: Plan, locked: Order) -> None:
        journeys_cancel(plan, locked, cancellation)
        if cancellation.paid:
            fee_charge(locked, CANCELLATION, cancellation.penalty, now=plan.now)

    return do_cancel_journey


def journeys_cancel(plan: Plan, order: Order, cancellation: Cancellation) -> None:
    """Under the order's lock: the journeys' seats back to inventory (legs locked in id
    order, as every sale), their items, seats and bags CANCELLED, their open coupons
    refunded, exchanged for the credit or void, and the events written."""
    journey_ids = [j.journey.pk for j in cancellation.journeys]
    segments = list(
        Segment.objects.filter(journey_id__in=journey_ids, holds_inventory=True).prefetch_related(
            "legs"
        )
    )
    inventory_apply(
        [
            SeatChange(tuple(leg.flight_leg_id for leg in s.legs.all()), s.rbd, -s.seats)
            for s in segments
        ]
    )
    Segment.objects.filter(pk__in=[s.pk for s in segments]).update(holds_inventory=False)
    # Cancelled journeys keep their rows and move behind the live ones (the view lists
    # journeys in travel order, live first), as an exchanged journey does.
    Journey.objects.filter(pk__in=journey_ids).update(
        is_cancelled=True, position=F("position") + 100
    )
    OrderItem.objects.filter(journey_id__in=journey_ids).update(status="CANCELLED")
    Service.objects.filter(pk__in=[s.pk for j in cancellation.journeys for s in j.services]).update(
        status=Service.Status.CANCELLED
    )
    for journey in cancellation.journeys:
        Coupon.objects.filter(segment__journey=journey.journey, status=Coupon.Status.OPEN).update(
            status=journey.coupon_status
        )
        events.journey_cancelled(
            order,
            actor=plan.actor,
            now=plan.now,
            journey=journey.journey.ref,
            value=journey.value,
            penalty=journey.penalty,
            refund=journey.refund,
            credit=journey.credit,
        )
    if plan.cancelled:
        events.order_cancelled(order, actor=plan.actor, now=plan.now)


# --- reshop: CancelOrder, DeleteOrderItems ---------------------------------------------


def reshop_cancel_order(request: ReshopRequest) -> dict[str, Any]:
    """`cancellation` of cancelling the whole order (SPEC.md §2.7, §4.12): every live
    journey still to fly, committed by a CancelJourney of each. Once a journey has
    departed, that is the unflown rest (a flown journey is not cancelled, and the order
    keeps it); ERR-4002 when every live journey has departed."""
    order = request.order
    items = {i.journey_id for i in order.items.all() if i.status == LIVE}
    live = [j for j in order.journeys.all() if j.pk in items]
    journeys = [j for j in live if j.departs_at > request.now]
    if live and not journeys:
        raise ApiError(
            Err.CHANGE_NOT_APPLIED,
            "Every journey of the order has departed; nothing is left to cancel",
            reason=Reason.JOURNEY_DEPARTED,
            path="instruction",
        )
    return _quoted(order, journeys, request.now)


def reshop_delete_items(request: ReshopRequest) -> dict[str, Any]:
    """`cancellation` of cancelling the journeys of the order items named in
    `orderItemRefIds`; commit with one CancelJourney per journey."""
    order = request.order
    refs = request.instruction.get("orderItemRefIds")
    if not refs:
        raise ApiError(
            Err.VALIDATION,
            "DeleteOrderItems needs orderItemRefIds",
            path="instruction.orderItemRefIds",
        )
    if len(set(refs)) != len(refs):
        raise ApiError(
            Err.VALIDATION,
            "An order item is listed twice",
            path="instruction.orderItemRefIds",
        )
    live = {i.ref: i for i in order.items.all() if i.status == LIVE}
    journeys = {j.pk: j for j in order.journeys.all()}
    for ref in refs:
        if ref not in live:
            raise ApiError(
                Err.CHANGE_NOT_APPLIED,
                f"{ref} is not a live item of this order",
                reason=Reason.NOT_ON_ORDER,
                path="instruction.orderItemRefIds",
            )
    return _quoted(order, [journeys[live[ref].journey_id] for ref in refs], request.now)


def _quoted(order: Order, journeys: Sequence[Journey], now: datetime) -> dict[str, Any]:
    try:
        cancellation = cancellation_terms(order, journeys, now=now)
    except ApiError as error:  # the same refusal, pointing at the reshop instruction
        raise ApiError(error.spec, error.description, path="instruction") from None
    return {"cancellation": cancellation_wire(order, cancellation)}


# Registered when the app is ready (orders.apps): change order and reshop look them up.
