"""Documents of a paid order (DESIGN.md §8, §11): its payment rows and its e-tickets, one
per passenger with one coupon per segment.
"""

from collections.abc import Sequence
from datetime import datetime

from orders.core import ids
from orders.models import (
    Coupon,
    Order,
    Passenger,
    Payment,
    PaymentIntent,
    Segment,
    Ticket,
    TicketSerial,
)
from orders.money.payments import Charge


def payment_record(
    order: Order, *, charge: Charge, intent: PaymentIntent, now: datetime
) -> Payment:
    """A successful card payment row, from the intent it was charged under: brand, last
    four and expiry, never the number."""
    return Payment.objects.create(
        order=order,
        ref=ids.new_ref("PAY"),
        created_at=now,
        amount=charge.amount,
        currency=charge.currency,
        status=Payment.Status.SUCCESSFUL,
        method="CreditCard",
        card_brand=intent.card_brand,
        card_last4=intent.card_last4,
        card_expiry=intent.card_expiry,
        gateway_reference=charge.reference,
    )


def tickets_reissue(
    order: Order, *, now: datetime, passengers: Sequence[Passenger] | None = None
) -> None:
    """A paid order's tickets (those of `passengers`, or all) reissued after a change of
    its flights or names: the open coupons of segments that have departed become USED
    (flown: a coupon is never reissued open for a flight that has left), every other
    open coupon EXCHANGED for a new ticket per passenger over the live segments still
    to fly (none when nothing is left to fly)."""
    open_coupons = Coupon.objects.filter(ticket__order=order, status=Coupon.Status.OPEN)
    if passengers is not None:
        open_coupons = open_coupons.filter(ticket__passenger__in=passengers)
    open_coupons.filter(segment__departs_at__lte=now).update(status=Coupon.Status.USED)
    open_coupons.update(status=Coupon.Status.EXCHANGED)
    segments = list(
        Segment.objects.filter(order=order, departs_at__gt=now)
        .exclude(journey__item__status="CANCELLED")
        .order_by("journey__position", "position")
    )
    if segments:
        tickets_issue(order, now=now, passengers=passengers, segments=segments)


def tickets_issue(
    order: Order,
    *,
    now: datetime,
    passengers: Sequence[Passenger] | None = None,
    segments: Sequence[Segment] | None = None,
) -> tuple[list[Ticket], list[Coupon]]:
    """One e-ticket per passenger with one coupon per segment (DESIGN.md §8, §11);
    `passengers` and `segments` in travel order when the caller has them at hand."""
    if passengers is None:
        passengers = list(order.passengers.order_by("position"))
    if segments is None:
        # The segments still flown: not those of an item cancelled or exchanged.
        segments = list(
            Segment.objects.filter(order=order)
            .exclude(journey__item__status="CANCELLED")
            .order_by("journey__position", "position")
        )
    serials = TicketSerial.objects.bulk_create([TicketSerial() for _ in passengers])
    tickets = Ticket.objects.bulk_create(
        Ticket(order=order, passenger=p, number=ids.ticket_number(s.pk), issued_at=now)
        for p, s in zip(passengers, serials, strict=True)
    )
    coupons = Coupon.objects.bulk_create(
        Coupon(ticket=t, segment=s, number=n)
        for t in tickets
        for n, s in enumerate(segments, start=1)
    )
    return tickets, coupons
