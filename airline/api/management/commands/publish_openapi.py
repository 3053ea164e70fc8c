"""Write the served /json/v1 OpenAPI document to docs/api/openapi-v1.json, the published
document partners generate their clients from (docs/changelog.md "Regenerating the
published document"). The test suite checks that the served document has no breaking
change against the published one (tests/api/test_openapi_compat.py): after an additive
change, run this and commit the file with the change."""

import json
from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError
from django.test import Client

PUBLISHED = Path(settings.BASE_DIR) / "docs" / "api" / "openapi-v1.json"


def served_document(version: str = "v1") -> dict:
    """The OpenAPI document this service serves under /json/<version>/schema, with the
    `servers` entry of a document written offline (`/`: wherever it is served from)."""
    response = Client().get(
        f"/json/{version}/schema", HTTP_ACCEPT="application/vnd.oai.openapi+json"
    )
    if response.status_code != 200:
        raise CommandError(f"/json/{version}/schema answered {response.status_code}")
    document = json.loads(response.content)
    document["servers"] = [{"url": "/", "description": "This service"}]
    return document


class Command(BaseCommand):
    help = "Write the served /json/v1 OpenAPI document to docs/api/openapi-v1.json."

    def add_arguments(self, parser):
        parser.add_argument("--output", default=str(PUBLISHED), help="Where to write it")

    def handle(self, *args, output: str, **options):
        path = Path(output)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(served_document(), indent=2, ensure_ascii=False) + "\n")
        self.stdout.write(f"wrote {path}")
