"""`manage.py deliver_webhooks [--once]`: send the webhook outbox (webhooks.delivery).
`--once` sends what is due now and exits (cron); without it, it runs until SIGTERM, as
the worker's deliver_webhooks job does."""

import signal

from django.conf import settings
from django.core.management.base import BaseCommand

from airline.worker import Job, StopSignal, run_forever
from webhooks.delivery import webhooks_deliver, webhooks_deliver_due


class Command(BaseCommand):
    help = "Deliver due webhook events (--once: what is due now, then exit)."

    def add_arguments(self, parser):
        parser.add_argument("--once", action="store_true", help="One pass, then exit")

    def handle(self, *args, once=False, **options):
        if once:
            total: dict[str, int] = {}
            # Rounds until nothing is claimed: a backlog larger than one batch goes out too;
            # a delivery that failed is not due again within the pass (its backoff).
            while done := webhooks_deliver():
                for key, count in done.items():
                    total[key] = total.get(key, 0) + count
            self.stdout.write(" ".join(f"{k}={v}" for k, v in total.items()) or "nothing due")
            return
        stop = StopSignal()
        for sig in (signal.SIGTERM, signal.SIGINT):
            signal.signal(sig, stop.set)
        job = Job(
            "deliver_webhooks",
            settings.WORKER_WEBHOOK_SECONDS,
            webhooks_deliver_due,
            again_while_busy=True,
        )
        run_forever([job], stop=stop)
