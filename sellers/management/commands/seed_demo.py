"""`manage.py seed_demo`: the demo airline's data (idempotent; DESIGN.md §6, §10)."""

import hashlib
from datetime import UTC

from django.core.management.base import BaseCommand
from django.db import transaction

from airline.api import clock
from airline.fares.models import Fare
from airline.fares.services import fares_ensure_demo
from airline.network.demo_fleet import DEMO_FLEET
from airline.network.demo_schedule import demo_ssim, distance_km
from airline.network.models import SCHEDULE_LOAD_MODELS
from airline.network.services import fleet_ensure, known_station, schedule_load, segment_markets
from airline.network.ssim import parse_ssim
from airline.sql import analyze
from sellers.services import partner_ensure, seller_ensure

DEMO_SCHEDULE_DAYS = 330


class Command(BaseCommand):
    help = (
        "Load the demo airline: fleet, a schedule from today for 330 days, its fares, "
        "partner DEMO with sellers DEMO1 (default) and DEMO2. Idempotent; run daily to "
        "roll the schedule on."
    )

    def handle(self, *args, **options):
        loaded = self._seed()
        if loaded:
            # After the commit: the first searches would otherwise be planned as if the
            # tables were still empty (airline.sql.analyze).
            analyze(*SCHEDULE_LOAD_MODELS, Fare)

    @transaction.atomic
    def _seed(self) -> bool:
        """Everything in one transaction; whether a schedule was loaded."""
        partner = partner_ensure(code="DEMO", name="Demo Travel Partner")
        seller_ensure(partner=partner, code="DEMO1", name="Demo Travel Online", is_default=True)
        seller_ensure(partner=partner, code="DEMO2", name="Demo Travel Business")
        self.stdout.write("Partner DEMO with sellers DEMO1 (default) and DEMO2.")

        fleet_ensure(DEMO_FLEET)
        today = clock.now().astimezone(UTC).date()
        text = demo_ssim(today, days=DEMO_SCHEDULE_DAYS)
        schedule = parse_ssim(text, known_station=known_station)
        markets = segment_markets(schedule)
        fares = fares_ensure_demo((o, d, distance_km(o, d)) for o, d in sorted(markets))
        self.stdout.write(f"Demo fares: {fares} fares in {len(markets)} markets.")
        result = schedule_load(
            schedule=schedule,
            file_name=f"demo-{today:%Y%m%d}.ssim",
            sha256=hashlib.sha256(text.encode()).hexdigest(),
            now=clock.now(),
        )
        if result.load is None:
            self.stdout.write(f"Demo schedule from {today} already loaded.")
            return False
        self.stdout.write(
            f"Demo schedule from {today} for {DEMO_SCHEDULE_DAYS} days: "
            f"{result.legs_created} flight-date legs created, {result.legs_updated} updated, "
            f"{result.legs_removed} removed."
        )
        return True
