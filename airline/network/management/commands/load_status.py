"""`manage.py load_status [LOAD]`: how a schedule load's bookings are being told."""

from django.core.management.base import BaseCommand, CommandError

from airline.network.follow_up import follow_up_progress
from airline.network.models import ScheduleFollowUp, ScheduleLoad


class Command(BaseCommand):
    help = (
        "Show a schedule load (the newest without LOAD, else the version load_schedule "
        "printed) and how far the telling of the bookings on its changed flights has got."
    )

    def add_arguments(self, parser):
        parser.add_argument("load", nargs="?", type=int, help="the load's version")

    def handle(self, *args, load: int | None, **options):
        loads = ScheduleLoad.objects.all()
        found = loads.filter(pk=load).first() if load is not None else loads.first()
        if found is None:
            raise CommandError(f"No schedule load {load}" if load is not None else "No load yet")
        self.stdout.write(
            f"Load {found.pk}: {found.file_name} ({found.carrier}), committed "
            f"{found.loaded_at:%Y-%m-%d %H:%M:%S %Z}"
        )
        self.stdout.write(
            f"Flight-date legs: {found.legs_created} created, {found.legs_updated} updated, "
            f"{found.legs_removed} removed, {found.legs_kept_with_sales} kept as cancelled"
        )
        follow_up = ScheduleFollowUp.objects.filter(load=found).first()
        if follow_up is None:
            self.stdout.write("Bookings to tell: none (no flight with bookings changed)")
            return
        self.stdout.write(follow_up_progress(follow_up))
