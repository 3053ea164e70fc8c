"""`manage.py booking LOCATOR`: one order, printed for support staff (DESIGN.md §10).

Any seller's order, by record locator or order id. Flight times are shown local to
their stations, as tickets and airports show them; timestamps of the booking in UTC.
"""

from datetime import UTC, datetime

from django.core.management.base import BaseCommand, CommandError
from django.db.models import Prefetch

from airline.api import clock
from airline.fares.money import ZERO, Price
from airline.network.services import station_zone
from orders.models import AirlineChange, Order, OrderEvent, OrderStatus
from orders.reading.deliveries import order_deliveries
from orders.reading.presenters import OPERATIONAL_CONFIRMED, operational_statuses
from orders.reading.selectors import ORDER_VIEW_PREFETCH, order_as_it_stands, order_parts, ref_match
from orders.reading.support_text import detail_lines, journey_place, wire_segment

UTC_FORMAT = "%Y-%m-%d %H:%M UTC"
DELIVERIES_SHOWN = 50  # the newest; the back office's deliveries list has them all
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
        # As every API read shows it, and like them writing nothing: a lapsed hold shows
        # cancelled; the worker (or `expire_holds`) gives its seats back (DESIGN.md §8).
        order_as_it_stands(order, now=clock.now())
        for line in booking_lines(order):
            self.stdout.write(line)


def booking_lines(order: Order) -> list[str]:
    """The printout, line by line: a section per part of the booking."""
    passengers = list(order.passengers.all())
    sections = [
        ("", _header_lines(order)),
        ("Passengers", _passenger_lines(passengers)),
        ("Contact", _contact_lines(order)),
        ("Journeys (local times)", _journey_lines(order)),
        (PENDING_CHANGES, _pending_change_lines(order)),
        ("Items", _item_lines(order)),
        ("Payments", _payment_lines(order)),
        ("Refunds and credit", _refund_and_credit_lines(order)),
        ("Tickets", _ticket_lines(order, passengers)),
        ("Webhook deliveries (newest first)", _delivery_lines(order)),
        ("History", _history_lines(order)),
    ]
    lines: list[str] = []
    for heading, body in sections:
        if not heading:
            lines += body
        elif body or heading not in SHOWN_ONLY_WITH_ROWS:
            lines += ["", heading, *(body or SAID_WHEN_EMPTY.get(heading, []))]
    return lines


PENDING_CHANGES = "Airline changes waiting for the seller"
SHOWN_ONLY_WITH_ROWS = {PENDING_CHANGES}
# What a section with nothing in it says; the others stand as a bare heading.
SAID_WHEN_EMPTY = {
    heading: ["  none"]
    for heading in (
        "Payments",
        "Refunds and credit",
        "Tickets",
        "Webhook deliveries (newest first)",
        "History",
    )
}


def _header_lines(order: Order) -> list[str]:
    """Who booked it, its status and its money."""
    lines = [
        f"Booking {order.record_locator}  (order {order.order_id}, owner {order.owner_code})",
        f"Status     {order.status}"
        + ("  (hold lapsed; its seats go back when the worker expires it)" if order.lapsed else ""),
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
    return lines


def _passenger_lines(passengers: list) -> list[str]:
    carried = {p.infant_id: p for p in passengers if p.infant_id}
    lines = []
    for p in passengers:
        details = [f"born {p.date_of_birth}"] if p.date_of_birth else []
        if p.pk in carried:
            details.append(f"on the lap of {_name(carried[p.pk])}")
        details += [f"{k} {v}" for k, v in (p.contacts or {}).items()]
        lines.append(f"  {p.position}. {p.ptc}  {_name(p)}  {p.ref}  {'  '.join(details)}".rstrip())
    return lines


def _contact_lines(order: Order) -> list[str]:
    return [
        f"  {c.given_name} {c.surname}  {c.email}  {c.phone or '-'}" for c in order.contacts.all()
    ]


def _journey_lines(order: Order) -> list[str]:
    """Each journey with its flights, and its state as the API shows it
    (operationalStatus): nothing for one that flies as booked, SCHEDULE_CHANGED while an
    airline change waits for the seller."""
    statuses = operational_statuses(order_parts(order))
    lines = []
    for j in order.journeys.all():
        status = statuses.get(j.ref, OPERATIONAL_CONFIRMED)
        state = "" if status == OPERATIONAL_CONFIRMED else f"  {status}"
        lines.append(f"  {journey_place(j)}. {j.origin}-{j.destination}  {j.ref}{state}")
        for s in j.segments.all():
            held = "" if s.holds_inventory else "  (seats released)"
            lines.append(
                f"     {s.carrier}{s.flight_number}  {s.origin} "
                f"{_local(s.departs_at, s.origin)} -> {s.destination} "
                f"{_local(s.arrives_at, s.destination)}  cabin {s.cabin} class {s.rbd}"
                f"  {s.seats} seat(s)  {s.ref}{held}"
            )
    return lines


def _pending_change_lines(order: Order) -> list[str]:
    pending = [c for c in order.airline_changes.all() if c.status == AirlineChange.Status.PENDING]
    return [line for change in pending for line in _change_lines(change)]


def _item_lines(order: Order) -> list[str]:
    lines = []
    for item in sorted(order.items.all(), key=lambda i: i.journey.position):
        price = Price.from_wire(item.price)
        taxes = sum((t.amount for t in price.taxes), ZERO)
        lines.append(
            f"  {item.ref}  {item.status}  {item.journey.origin}-{item.journey.destination}  "
            f"bundle {item.bundle}  {price.total} {order.currency} (base {price.base}, "
            f"taxes {taxes})"
        )
    return lines


def _payment_lines(order: Order) -> list[str]:
    lines = []
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
    return lines


def _refund_and_credit_lines(order: Order) -> list[str]:
    lines = [
        f"  refund {refund.ref}  {_utc(refund.created_at)}  {refund.state}  "
        f"{refund.amount} {pay.currency} to {pay.ref}"
        for pay in order.payments.all()
        for refund in pay.refunds.all()
    ]
    lines += [
        f"  credit {credit.code}  {credit.amount} {credit.currency} issued "
        f"{_utc(credit.created_at)}, {credit.remaining} left, expires {_utc(credit.expires_at)}"
        for credit in order.credits.all()
    ]
    return lines


def _ticket_lines(order: Order, passengers: list) -> list[str]:
    pax_by_pk = {p.pk: p for p in passengers}
    lines = []
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
    return lines


def _delivery_lines(order: Order) -> list[str]:
    """Was the seller told: each event to each of its webhook endpoints, newest first."""
    deliveries = order_deliveries(order.pk, DELIVERIES_SHOWN + 1)
    lines = [
        f"  {_utc(d.event_created_at)}  {d.event_type}  to {d.endpoint}  {d.answer}"
        for d in deliveries[:DELIVERIES_SHOWN]
    ]
    if len(deliveries) > DELIVERIES_SHOWN:
        lines.append("  ... older ones in the back office's webhook deliveries list")
    return lines


def _history_lines(order: Order) -> list[str]:
    lines = []
    for e in order.events.all():
        lines.append(f"  {_utc(e.at)}  {e.kind}  by {e.actor}")
        lines += [f"      {line}" for line in detail_lines(e.detail)]
    return lines


def _change_lines(change: AirlineChange) -> list[str]:
    """A pending airline change: why, since when, the journeys as booked and as they fly
    now, and what the seller may answer (docs/partners/airline-changes.md)."""
    lines = [
        f"  {change.ref}  {', '.join(change.reasons)}  detected {_utc(change.detected_at)}",
        f"     journeys   {', '.join(change.journey_refs)}",
    ]
    for label, journeys in (("as booked ", change.removed), ("flies now ", change.added)):
        flights = [wire_segment(s) for j in journeys for s in j.get("segments", [])]
        lines.append(f"     {label} {'; '.join(flights) or 'nothing: the flight is cancelled'}")
    lines.append(f"     may answer {', '.join(change.actions) or '-'}")
    return lines


def _name(p) -> str:
    return f"{p.surname.upper()}/{p.given_name}"


def _utc(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime(UTC_FORMAT)


def _local(moment: datetime, station: str) -> str:
    return moment.astimezone(station_zone(station)).strftime(LOCAL_FORMAT)
