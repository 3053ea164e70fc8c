"""`manage.py seed_demo`: the demo airline's data (idempotent; DESIGN.md §10)."""

from django.core.management.base import BaseCommand
from django.db import transaction

from sellers.services import partner_ensure, seller_ensure


class Command(BaseCommand):
    help = "Load the demo data: partner DEMO with sellers DEMO1 (default) and DEMO2. Idempotent."

    @transaction.atomic
    def handle(self, *args, **options):
        partner = partner_ensure(code="DEMO", name="Demo Travel Partner")
        seller_ensure(partner=partner, code="DEMO1", name="Demo Travel Online", is_default=True)
        seller_ensure(partner=partner, code="DEMO2", name="Demo Travel Business")
        self.stdout.write("Demo data ready: partner DEMO, sellers DEMO1 (default), DEMO2.")
