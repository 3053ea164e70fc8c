"""`manage.py load_schedule FILE.ssim [--wait]`: load or replace a schedule from an SSIM file."""

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from airline.api import clock
from airline.network.follow_up import follow_up_finish
from airline.network.services import (
    ScheduleError,
    follow_up_summary,
    load_summary,
    schedule_load_file,
)
from airline.network.ssim import SsimFileError


class Command(BaseCommand):
    help = (
        "Load or replace the schedule of the file's carrier from an IATA SSIM Chapter 7 file. "
        "Returns once the schedule has committed; the bookings on changed flights are then "
        "told by the worker (manage.py load_status), or by this command with --wait."
    )

    def add_arguments(self, parser):
        parser.add_argument("file", type=Path)
        parser.add_argument(
            "--wait",
            action="store_true",
            help="Tell the bookings on the changed flights before returning (beside the worker)",
        )

    def handle(self, *args, file: Path, wait: bool, **options):
        if not file.is_file():
            raise CommandError(f"No such file: {file}")
        try:
            result = schedule_load_file(path=file, now=clock.now())
        except (SsimFileError, ScheduleError) as exc:
            raise CommandError(f"{file.name} not loaded, nothing changed:\n{exc}") from None
        self.stdout.write(load_summary(file.name, result))
        if wait and result.follow_up is not None and result.follow_up.finished_at is None:
            follow_up = follow_up_finish(result.follow_up.pk)
            self.stdout.write(follow_up_summary(follow_up).strip())
