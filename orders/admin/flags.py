"""What flags a booking in the list and on its page: statuses whose passengers expect
to fly, a flight the schedule cancelled, a disputed payment, money given back outside
this service. Each is a subquery the list annotates or filters by."""

from django.db.models import (
    Case,
    DecimalField,
    Exists,
    F,
    OuterRef,
    Q,
    QuerySet,
    Subquery,
    Sum,
    When,
)

from orders.models import (
    Leg,
    OrderStatus,
    Payment,
    Refund,
)

# Statuses whose passengers expect to fly: only these are disrupted by a cancelled flight.
LIVE = (OrderStatus.CONFIRMED, OrderStatus.ONHOLD, OrderStatus.PENDING)
WARNING_HTML = '<strong style="color: var(--error-fg)">&#9888; {}</strong>'


def on_cancelled_flight() -> Exists:
    """The order still holds seats on a flight-date leg the schedule cancelled."""
    return Exists(
        Leg.objects.filter(
            segment__order=OuterRef("pk"),
            segment__holds_inventory=True,
            flight_leg__is_cancelled=True,
        )
    )


def disputes() -> QuerySet[Payment]:
    """The order's card payments the cardholder disputed with their bank (Payment.dispute,
    written from the provider's webhook)."""
    return Payment.objects.filter(order=OuterRef("pk")).exclude(dispute="")


def refunds_outside() -> QuerySet[Refund]:
    """The order's refunds the payment provider gave outside this service: one made in
    its dashboard (a Refund with the provider's id), or the part of one of ours that
    such a refund covered (Refund.covered)."""
    return Refund.objects.filter(payment__order=OuterRef("pk")).filter(
        ~Q(gateway_reference="") | Q(covered__gt=0)
    )


def refunded_outside_total() -> Subquery:
    """What the provider gave back of the order outside this service, in all (None when
    nothing): the amount of a dashboard refund, the covered part of one of ours."""
    given = Case(
        When(~Q(gateway_reference=""), then=F("amount")),
        default=F("covered"),
        output_field=DecimalField(max_digits=12, decimal_places=2),
    )
    return Subquery(
        refunds_outside()
        .order_by()
        .values("payment__order")
        .annotate(total=Sum(given))
        .values("total")[:1],
        output_field=DecimalField(max_digits=12, decimal_places=2),
    )
