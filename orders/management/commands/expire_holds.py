"""`manage.py expire_holds`: cancel unpaid holds past their payment time limit and give
their seats back (DESIGN.md §8), and forget idempotency keys past their replay window.
Run it every minute or so from cron; concurrent and repeated runs are safe."""

from django.core.management.base import BaseCommand

from airline.api import clock
from airline.api.idempotency import idempotency_purge
from orders.booking.holds import holds_expire


class Command(BaseCommand):
    help = (
        "Cancel unpaid holds past their payment time limit (their seats return to "
        "inventory) and forget expired Idempotency-Keys."
    )

    def handle(self, *args, **options):
        now = clock.now()
        cancelled = holds_expire(now=now)
        self.stdout.write(f"Cancelled {cancelled} unpaid hold(s) past their payment time limit.")
        forgotten = idempotency_purge(now=now)
        self.stdout.write(f"Forgot {forgotten} idempotency key(s) past their replay window.")
