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
from orders.deliveries import order_deliveries
from orders.models import AirlineChange, Order, OrderEvent, OrderStatus
from orders.presenters import OPERATIONAL_CONFIRMED, operational_statuses
from orders.selectors import ORDER_VIEW_PREFETCH, order_as_it_stands, order_parts, ref_match

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
    """The printout, line by line."""
    journeys = list(order.journeys.all())
    passengers = list(order.passengers.all())
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

    # Each journey's state as the API shows it (operationalStatus): nothing for one that
    # flies as booked, SCHEDULE_CHANGED while an airline change waits for the seller.
    statuses = operational_statuses(order_parts(order))
    lines += ["", "Journeys (local times)"]
    for j in journeys:
        status = statuses.get(j.ref, OPERATIONAL_CONFIRMED)
        state = "" if status == OPERATIONAL_CONFIRMED else f"  {status}"
        lines.append(f"  {j.position}. {j.origin}-{j.destination}  {j.ref}{state}")
        for s in j.segments.all():
            held = "" if s.holds_inventory else "  (seats released)"
            lines.append(
                f"     {s.carrier}{s.flight_number}  {s.origin} "
                f"{_local(s.departs_at, s.origin)} -> {s.destination} "
                f"{_local(s.arrives_at, s.destination)}  cabin {s.cabin} class {s.rbd}"
                f"  {s.seats} seat(s)  {s.ref}{held}"
            )

    pending = [c for c in order.airline_changes.all() if c.status == AirlineChange.Status.PENDING]
    if pending:
        lines += ["", "Airline changes waiting for the seller"]
        for change in pending:
            lines += _change_lines(change)

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

    # Was the seller told: each event to each of its webhook endpoints, newest first.
    lines += ["", "Webhook deliveries (newest first)"]
    deliveries = order_deliveries(order.pk, DELIVERIES_SHOWN + 1)
    for d in deliveries[:DELIVERIES_SHOWN]:
        lines.append(f"  {_utc(d.event_created_at)}  {d.event_type}  to {d.endpoint}  {d.answer}")
    if len(deliveries) > DELIVERIES_SHOWN:
        lines.append("  ... older ones in the back office's webhook deliveries list")
    _none_if_empty(lines, "Webhook deliveries (newest first)")

    lines += ["", "History"]
    for e in order.events.all():
        lines.append(f"  {_utc(e.at)}  {e.kind}  by {e.actor}")
        lines += [f"      {line}" for line in _detail_lines(e.detail)]
    _none_if_empty(lines, "History")
    return lines


def _change_lines(change: AirlineChange) -> list[str]:
    """A pending airline change: why, since when, the journeys as booked and as they fly
    now, and what the seller may answer (docs/network.md "Airline-initiated changes")."""
    lines = [
        f"  {change.ref}  {', '.join(change.reasons)}  detected {_utc(change.detected_at)}",
        f"     journeys   {', '.join(change.journey_refs)}",
    ]
    for label, journeys in (("as booked ", change.removed), ("flies now ", change.added)):
        flights = [_wire_segment(s) for j in journeys for s in j.get("segments", [])]
        lines.append(f"     {label} {'; '.join(flights) or 'nothing: the flight is cancelled'}")
    lines.append(f"     may answer {', '.join(change.actions) or '-'}")
    return lines


def _wire_segment(segment: dict) -> str:
    """A segment of the order view's shape: its times are already station-local."""
    return (
        f"{segment['marketingCarrier']}{segment['marketingFlightNumber']} "
        f"{segment['origin']} {segment['departureDateTime'].replace('T', ' ')[:16]} -> "
        f"{segment['destination']} {segment['arrivalDateTime'].replace('T', ' ')[:16]}"
    )


def _detail_lines(detail: dict, prefix: str = "") -> list[str]:
    """An event's detail as `key: value` lines: lists joined, nested objects indented,
    never the raw JSON."""
    lines = []
    for key, value in detail.items():
        label = f"{prefix}{key.replace('_', ' ')}"
        if isinstance(value, dict):
            lines.append(f"{label}:")
            lines += _detail_lines(value, prefix + "  ")
        elif isinstance(value, list):
            simple = all(not isinstance(v, dict | list) for v in value)
            if simple:
                lines.append(f"{label}: {', '.join(map(str, value)) or '-'}")
            else:
                lines.append(f"{label}:")
                for item in value:
                    nested = item if isinstance(item, dict) else {"-": item}
                    lines += _detail_lines(nested, prefix + "  ")
        else:
            lines.append(f"{label}: {value}")
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
