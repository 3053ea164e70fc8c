"""`manage.py bookings`: find bookings of any seller for support staff (DESIGN.md §10)."""

from datetime import date

from django.core.management.base import BaseCommand, CommandError

from airline.network.services import station_zone
from orders.models import Order
from orders.reading.selectors import orders_find


class Command(BaseCommand):
    help = (
        "Find bookings by passenger surname and/or the UTC date a journey departs; newest "
        "first, one line each. Print one in full with `booking LOCATOR`."
    )

    def add_arguments(self, parser):
        parser.add_argument("--last-name", default="", help="A passenger's surname (any case)")
        parser.add_argument(
            "--date",
            type=date.fromisoformat,
            help="YYYY-MM-DD: a journey departs that day (UTC)",
        )
        parser.add_argument("--limit", type=int, default=50, help="At most this many (default 50)")

    def handle(self, *args, **options):
        last_name = options["last_name"].strip()
        if not last_name and options["date"] is None:
            raise CommandError("Give --last-name or --date (or both)")
        if options["limit"] < 1:
            raise CommandError("--limit must be at least 1")
        orders = orders_find(
            last_name=last_name, departure_date=options["date"], limit=options["limit"]
        )
        if not orders:
            self.stdout.write("No bookings found.")
            return
        for order in orders:
            self.stdout.write(summary_line(order))
        self.stdout.write(f"{len(orders)} booking(s).")


def summary_line(order: Order) -> str:
    """Locator, status, lead passenger, first journey, seller and agency."""
    passengers = list(order.passengers.all())
    lead = next((p for p in passengers if p.ptc == "ADT"), passengers[0] if passengers else None)
    lead_name = f"{lead.surname.upper()}/{lead.given_name}" if lead else "-"
    journeys = list(order.journeys.all())
    trip = "-"
    if journeys:
        first = journeys[0]
        departs = first.departs_at.astimezone(station_zone(first.origin))
        more = f" +{len(journeys) - 1}" if len(journeys) > 1 else ""
        trip = f"{first.origin}-{first.destination} {departs:%Y-%m-%d %H:%M}{more}"
    return (
        f"{order.record_locator}  {order.status:<9}  {lead_name:<28}  {trip:<26}  "
        f"seller {order.seller.code}  agency {order.agency_code or '-'}"
    )
