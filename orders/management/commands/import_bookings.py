"""`manage.py import_bookings FILE [--seller CODE]`: bookings made in another channel as
orders (DESIGN.md §8, §10). The file format is in orders/booking/imports.py."""

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TextIO

from django.core.management.base import BaseCommand, CommandError

from airline.sql import analyze
from orders.booking.imports import LineResult, orders_import
from orders.models import (
    Contact,
    Coupon,
    Journey,
    Leg,
    Order,
    OrderEvent,
    OrderItem,
    Passenger,
    Payment,
    Segment,
    Ticket,
)
from sellers.models import Seller

# What an imported booking writes: a migration's worth of orders is planned on statistics
# of the tables before it until analysed (airline.sql.analyze).
IMPORTED_MODELS = (
    Order,
    Journey,
    Segment,
    Leg,
    Passenger,
    Contact,
    OrderItem,
    Payment,
    Ticket,
    Coupon,
    OrderEvent,
)


class Command(BaseCommand):
    help = (
        "Import bookings from a JSON-lines file ('-' for stdin), one booking per line, each "
        "in its own transaction. Prints one line per booking and a summary; fails if any "
        "line failed (the others are imported; importing the file again skips them)."
    )

    def add_arguments(self, parser):
        parser.add_argument("file", help="JSON-lines file, or - for stdin")
        parser.add_argument("--seller", help="Seller code for the bookings that name no sellerCode")

    def handle(self, *args, **options):
        default_seller = None
        if options["seller"]:
            default_seller = Seller.objects.filter(
                code=options["seller"].upper(), is_active=True
            ).first()
            if default_seller is None:
                raise CommandError(f"No active seller {options['seller']!r}")
        with _opened(options["file"]) as lines:
            report = orders_import(lines, default_seller=default_seller, on_result=self._print)
        if report.created:
            analyze(*IMPORTED_MODELS)  # each line committed on its own
        summary = (
            f"{len(report.results)} booking(s): {report.created} created, "
            f"{report.skipped} skipped (imported before), {report.errors} failed."
        )
        if report.errors:
            raise CommandError(summary)
        self.stdout.write(summary)

    def _print(self, result: LineResult) -> None:
        locator = result.record_locator or "-"
        if result.outcome == "created":
            self.stdout.write(f"line {result.line}: created {locator}")
        elif result.outcome == "skipped":
            self.stdout.write(f"line {result.line}: skipped {locator}: {result.message}")
        else:
            self.stdout.write(f"line {result.line}: FAILED {locator}: {result.message}")


@contextmanager
def _opened(path: str) -> Iterator[TextIO]:
    if path == "-":
        yield sys.stdin
        return
    try:
        file = open(path, encoding="utf-8")  # noqa: SIM115 (closed below)
    except OSError as exc:
        raise CommandError(f"Cannot read {path}: {exc.strerror}") from None
    with file:
        yield file
