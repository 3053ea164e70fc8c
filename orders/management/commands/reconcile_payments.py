"""Settle payment intents left PENDING by a worker that died (orders.booking.reconcile); the
background worker runs the same every minute. Safe to run concurrently and repeatedly."""

from datetime import timedelta

from django.core.management.base import BaseCommand

from orders.booking.reconcile import payments_reconcile


class Command(BaseCommand):
    help = "Attach, refund or void payment intents left pending past the grace period."

    def add_arguments(self, parser):
        parser.add_argument(
            "--grace",
            type=int,
            default=None,
            help="Seconds an intent must have been pending (default PAYMENT_INTENT_GRACE_SECONDS)",
        )

    def handle(self, *args, grace=None, **options):
        outcomes = payments_reconcile(grace=timedelta(seconds=grace) if grace is not None else None)
        settled = ", ".join(f"{n} {outcome}" for outcome, n in sorted(outcomes.items()))
        self.stdout.write(f"payment intents settled: {settled or 'none'}")
