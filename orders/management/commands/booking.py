"""`manage.py booking LOCATOR`: one order, printed for support staff (DESIGN.md §10).

Any seller's order, by record locator or order id. Flight times are shown local to
their stations, as tickets and airports show them; timestamps of the booking in UTC.
"""

from datetime import UTC, datetime

from django.core.management.base import BaseCommand, CommandError
from django.db.models import Prefetch

from airline.fares.money import ZERO, Price
from airline.network.services import station_zone
from orders.holds import order_expire_if_due
from orders.models import Order, OrderEvent, OrderStatus
from orders.selectors import ORDER_VIEW_PREFETCH, ref_match

UTC_FORMAT = "%Y-%m-%d %H:%M UTC"
LOCAL_FORMAT = "%a %Y-%m-%d %H:%M"


def order_for_support(ref: str) -> Order | None:
    """Any seller's order by record locator or order id, with everything it prints."""
    return (
        Order.objects.filter(ref_match(ref))
        .select_related("seller__partner")
        .prefetch_related(
            *ORDER_VIEW_PREFETCH,
            "tickets__coupons__segment",
            "payments__refunds",
            Prefetch("events", queryset=OrderEvent.objects.order_by("id")),
        )
        .first()
    )


class Command(BaseCommand):
    help = "Print one booking (any seller's) by record locator or order id."

    def add_arguments(self, parser):
        parser.add_argument("ref", metavar="LOCATOR", help="Record locator or order id")

    def handle(self, *args, **options):
        order = order_for_support(options["ref"])
        if order is None:
            raise CommandError(f"No booking {options['ref']!r}")
        # The same lazy expiry as every API read: a lapsed hold is shown cancelled, its
        # seats already back in inventory (DESIGN.md §8).
        if (
            order.status == OrderStatus.ONHOLD
            and order_expire_if_due(order).status != OrderStatus.ONHOLD
        ):
            order = order_for_support(order.order_id)
        for line in booking_lines(order):
            self.stdout.write(line)


def booking_lines(order: Order) -> list[str]:
    """The printout, line by line."""
    journeys = list(order.journeys.all())
    passengers = list(order.passengers.all())
    lines = [
        f"Booking {order.record_locator}  (order {order.order_id}, owner {order.owner_code})",
        f"Status     {order.status}",
        f"Seller     {order.seller.code} {order.seller.name} (partner {order.seller.partner.code})",
        f"Agency     {order.agency_code or '-'}",
        f"Channel    {order.get_channel_display()}",
        f"Created    {_utc(order.created_at)}   updated {_utc(order.updated_at)}",
        f"Total      {order.total} {order.currency}   paid {order.paid}   "
        f"balance due {order.balance_due}",
        f"Kept       {order.retained} (fees, penalties)   credited {order.credited}   "
        f"voided {order.voided}",
    ]
    if order.status == OrderStatus.ONHOLD and order.payment_time_limit:
        lines.append(f"Hold until {_utc(order.payment_time_limit)} (unpaid holds are cancelled)")
    if order.remarks:
        lines.append(f"Remarks    {order.remarks}")

    lines += ["", "Passengers"]
    carried = {p.infant_id: p for p in passengers if p.infant_id}
    for p in passengers:
        details = [f"born {p.date_of_birth}"] if p.date_of_birth else []
        if p.pk in carried:
            details.append(f"on the lap of {_name(carried[p.pk])}")
        details += [f"{k} {v}" for k, v in (p.contacts or {}).items()]
        lines.append(f"  {p.position}. {p.ptc}  {_name(p)}  {p.ref}  {'  '.join(details)}".rstrip())

    lines += ["", "Contact"]
    for c in order.contacts.all():
        lines.append(f"  {c.given_name} {c.surname}  {c.email}  {c.phone or '-'}")

    lines += ["", "Journeys (local times)"]
    for j in journeys:
        cancelled = "  CANCELLED" if j.is_cancelled else ""
        lines.append(f"  {j.position}. {j.origin}-{j.destination}  {j.ref}{cancelled}")
        for s in j.segments.all():
            held = "" if s.holds_inventory else "  (seats released)"
            lines.append(
                f"     {s.carrier}{s.flight_number}  {s.origin} "
                f"{_local(s.departs_at, s.origin)} -> {s.destination} "
                f"{_local(s.arrives_at, s.destination)}  cabin {s.cabin} class {s.rbd}"
                f"  {s.seats} seat(s)  {s.ref}{held}"
            )

    lines += ["", "Items"]
    for item in sorted(order.items.all(), key=lambda i: i.journey.position):
        price = Price.from_wire(item.price)
        taxes = sum((t.amount for t in price.taxes), ZERO)
        lines.append(
            f"  {item.ref}  {item.status}  {item.journey.origin}-{item.journey.destination}  "
            f"bundle {item.bundle}  {price.total} {order.currency} (base {price.base}, "
            f"taxes {taxes})"
        )

    lines += ["", "Payments"]
    for pay in order.payments.all():
        # Only the last four digits are ever stored (DESIGN.md §8); shown masked.
        card = (
            f"  {pay.card_brand} ************{pay.card_last4} exp {pay.card_expiry}"
            if pay.card_last4
            else ""
        )
        lines.append(
            f"  {pay.ref}  {_utc(pay.created_at)}  {pay.status}  {pay.amount} {pay.currency}  "
            f"{pay.method}{card}"
        )
    _none_if_empty(lines, "Payments")

    lines += ["", "Refunds and credit"]
    for pay in order.payments.all():
        for refund in pay.refunds.all():
            lines.append(
                f"  refund {refund.ref}  {_utc(refund.created_at)}  {refund.state}  "
                f"{refund.amount} {pay.currency} to {pay.ref}"
            )
    for credit in order.credits.all():
        lines.append(
            f"  credit {credit.code}  {credit.amount} {credit.currency} issued "
            f"{_utc(credit.created_at)}, {credit.remaining} left, expires {_utc(credit.expires_at)}"
        )
    _none_if_empty(lines, "Refunds and credit")

    lines += ["", "Tickets"]
    pax_by_pk = {p.pk: p for p in passengers}
    for t in order.tickets.all():
        lines.append(
            f"  {t.number}  {_name(pax_by_pk[t.passenger_id])}  issued {_utc(t.issued_at)}"
        )
        for c in t.coupons.all():
            s = c.segment
            lines.append(
                f"     coupon {c.number}  {s.carrier}{s.flight_number} {s.origin}-{s.destination}"
                f"  {c.status}"
            )
    _none_if_empty(lines, "Tickets")

    lines += ["", "History"]
    for e in order.events.all():
        detail = ", ".join(f"{k}={v}" for k, v in e.detail.items())
        lines.append(
            f"  {_utc(e.at)}  {e.kind}  by {e.actor}" + (f"  ({detail})" if detail else "")
        )
    _none_if_empty(lines, "History")
    return lines


def _none_if_empty(lines: list[str], heading: str) -> None:
    if lines[-1] == heading:
        lines.append("  none")


def _name(p) -> str:
    return f"{p.surname.upper()}/{p.given_name}"


def _utc(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime(UTC_FORMAT)


def _local(moment: datetime, station: str) -> str:
    return moment.astimezone(station_zone(station)).strftime(LOCAL_FORMAT)
