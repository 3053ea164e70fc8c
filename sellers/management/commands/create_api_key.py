"""`manage.py create_api_key`: issue a partner or seller key (contract: DESIGN.md §10).

The key alone is the last line of stdout, so scripts can take it with `tail -n 1`.
"""

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError

from sellers.models import ApiKey, Partner, Seller
from sellers.services import api_key_create


class Command(BaseCommand):
    help = "Create an API key: a partner key, or with --seller a seller key. Prints the key last."

    def add_arguments(self, parser):
        parser.add_argument("--partner", required=True, help="Partner code, e.g. DEMO")
        parser.add_argument("--seller", help="Seller code: makes a seller key for that seller")
        parser.add_argument("--access", choices=ApiKey.Access.values, default=ApiKey.Access.FULL)
        parser.add_argument("--agency", default="", help="Organization (agency) code, max 10 chars")
        parser.add_argument(
            "--rate", type=int, default=None, help="Requests per minute (default 600)"
        )
        parser.add_argument("--name", default="", help="A label for the key")

    def handle(self, *args, **options):
        partner = Partner.objects.filter(code=options["partner"].upper()).first()
        if partner is None:
            raise CommandError(
                f"No partner {options['partner']!r}; run seed_demo or add it in the admin"
            )
        seller = None
        if options["seller"]:
            seller = Seller.objects.filter(code=options["seller"].upper(), partner=partner).first()
            if seller is None:
                raise CommandError(f"Partner {partner.code} has no seller {options['seller']!r}")
        try:
            issued = api_key_create(
                partner=partner,
                seller=seller,
                name=options["name"],
                access_level=options["access"],
                agency_code=options["agency"],
                requests_per_minute=options["rate"],
            )
        except ValidationError as exc:
            raise CommandError("; ".join(exc.messages)) from None
        key = issued.key
        self.stdout.write(
            f"Created {key.kind} key {key.prefix} for {partner.code}"
            + (f"/{seller.code}" if seller else "")
            + f" (access {key.access_level}, {key.requests_per_minute}/min"
            + (f", agency {key.agency_code}" if key.agency_code else "")
            + "). It is shown only now:"
        )
        self.stdout.write(issued.raw)
