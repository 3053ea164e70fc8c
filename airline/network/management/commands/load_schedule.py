"""`manage.py load_schedule FILE.ssim`: load or replace a schedule from an SSIM file."""

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from airline.api import clock
from airline.network.models import SCHEDULE_LOAD_MODELS
from airline.network.services import ScheduleError, schedule_load_file
from airline.network.ssim import SsimFileError
from airline.sql import analyze


class Command(BaseCommand):
    help = "Load or replace the schedule of the file's carrier from an IATA SSIM Chapter 7 file."

    def add_arguments(self, parser):
        parser.add_argument("file", type=Path)

    def handle(self, *args, file: Path, **options):
        if not file.is_file():
            raise CommandError(f"No such file: {file}")
        try:
            result = schedule_load_file(path=file, now=clock.now())
        except (SsimFileError, ScheduleError) as exc:
            raise CommandError(f"{file.name} not loaded, nothing changed:\n{exc}") from None
        if result.load is None:
            self.stdout.write(f"{file.name} is the schedule loaded last; nothing changed.")
            return
        # The load has committed; its legs and inventory are planned on statistics of the
        # schedule before it until analysed (issue 24 item 8; airline.sql.analyze).
        analyze(*SCHEDULE_LOAD_MODELS)
        self.stdout.write(
            f"Loaded {file.name} (version {result.load.pk}): "
            f"{result.legs_created} flight-date legs created, "
            f"{result.legs_updated} updated, {result.legs_removed} removed, "
            f"{result.legs_kept_with_sales} kept as cancelled because they have sales."
        )
