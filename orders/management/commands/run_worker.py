"""`manage.py run_worker`: the background worker (airline/worker.py). Runs until SIGTERM
or SIGINT; `--once` runs every job once and exits (for cron, and tests)."""

import signal

from django.core.management.base import BaseCommand

from airline.telemetry import error_reports_start, tracing_instrument, tracing_start, tracing_stop
from airline.worker import StopSignal, jobs, run_forever, run_once


class Command(BaseCommand):
    help = (
        "Run the background jobs (hold expiry, payment reconciliation, webhook delivery...) "
        "until stopped."
    )

    def add_arguments(self, parser):
        parser.add_argument("--once", action="store_true", help="Run every job once, then exit")

    def handle(self, *args, once=False, **options):
        # Error reports and traces, each when configured (docs/operators/monitoring.md).
        error_reports_start()
        if tracing_instrument():
            tracing_start(role="worker")
        try:
            self._run(once)
        finally:
            tracing_stop()

    def _run(self, once: bool) -> None:
        table = jobs()
        if once:
            run_once(table)
            return
        stop = StopSignal()
        for sig in (signal.SIGTERM, signal.SIGINT):
            signal.signal(sig, stop.set)
        self.stdout.write(
            "Worker running: " + ", ".join(f"{j.name} every {j.interval:g} s" for j in table)
        )
        self.stdout.flush()
        run_forever(table, stop=stop)
