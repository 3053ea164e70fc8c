"""`manage.py load_schedule FILE.ssim`: load or replace a schedule from an SSIM file."""

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from airline.api import clock
from airline.network.services import ScheduleError, load_summary, schedule_load_file
from airline.network.ssim import SsimFileError


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
        self.stdout.write(load_summary(file.name, result))
