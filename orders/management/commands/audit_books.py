"""The books audit (orders.money.audit, docs/operators/support.md "Books audit"): every
order's money against its own rows and the payment provider's books; each disagreement
printed, and a non-zero exit when there is any. Read only; safe to run at any time,
beside the service."""

from datetime import UTC, datetime, time

from django.core.management.base import BaseCommand, CommandError
from django.utils import timezone
from django.utils.dateparse import parse_date, parse_datetime

from orders.money.audit import AuditCounts, books_audit


def _moment(value: str) -> datetime:
    """A date (its midnight, UTC) or an ISO 8601 date and time (UTC when it names no offset)."""
    moment = parse_datetime(value)
    if moment is None:
        day = parse_date(value)
        if day is None:
            raise ValueError(value)
        moment = datetime.combine(day, time.min)
    return moment if timezone.is_aware(moment) else moment.replace(tzinfo=UTC)


class Command(BaseCommand):
    help = (
        "Check every order's books (and, unless --no-provider, the payment provider's); "
        "print each disagreement and exit 1 when there is any."
    )

    def add_arguments(self, parser):
        parser.add_argument(
            "--since",
            help="Only orders changed at or after this date (YYYY-MM-DD, UTC) or ISO date-time",
        )
        parser.add_argument(
            "--no-provider",
            action="store_true",
            help="Leave out the payment provider (no call to it)",
        )

    def handle(self, *args, since=None, no_provider=False, **options):
        try:
            start = _moment(since) if since else None
        except ValueError:
            raise CommandError(f"--since {since!r}: give YYYY-MM-DD or an ISO date-time") from None
        counts = AuditCounts()
        for found in books_audit(since=start, provider=not no_provider, counts=counts):
            self.stdout.write(str(found))
        self.stdout.write(
            f"{counts.orders} orders, {counts.charges} provider charges audited:"
            f" {counts.disagreements} disagreements"
        )
        if counts.disagreements:
            raise CommandError(f"{counts.disagreements} disagreements in the books", returncode=1)
