"""Send refunds left PENDING by a worker that died (orders.money.refunds.refunds_retry), by
hand; the background worker runs the same every minute. Safe to run concurrently and
repeatedly: a refund is given back at most once under its reference."""

from collections import Counter
from datetime import timedelta

from django.core.management.base import BaseCommand

from airline.api import clock
from orders.models import Refund
from orders.money.refunds import refunds_due, refunds_retry


class Command(BaseCommand):
    help = "Send refunds left pending past the grace period, after asking the provider."

    def add_arguments(self, parser):
        parser.add_argument(
            "--grace",
            type=int,
            default=None,
            help=(
                "Seconds a refund must have been pending (default "
                "PAYMENT_INTENT_GRACE_SECONDS; 0 sends every pending refund now)"
            ),
        )

    def handle(self, *args, grace=None, **options):
        now = clock.now()
        grace_period = timedelta(seconds=grace) if grace is not None else None
        # The refunds this run looks at, to say afterwards where each one stands.
        due = list(refunds_due(now=now, grace=grace_period).values_list("pk", flat=True))
        pending = refunds_retry(now=now, grace=grace_period)
        refunds = Refund.objects.filter(pk__in=due).select_related("payment__order").order_by("pk")
        for refund in refunds:
            covered = f", {refund.covered} covered outside" if refund.covered else ""
            note = f"  {refund.note}" if refund.note else ""
            self.stdout.write(
                f"{refund.ref}  {refund.payment.order.record_locator}  {refund.amount} "
                f"{refund.payment.currency}  {refund.state}{covered}{note}"
            )
        states = Counter(refund.state for refund in refunds)
        summary = ", ".join(f"{n} {state.lower()}" for state, n in sorted(states.items()))
        self.stdout.write(f"refunds pending past the grace: {pending}; now {summary or 'none'}")
