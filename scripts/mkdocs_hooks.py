"""MkDocs hooks (mkdocs.yml `hooks:`): the NDC guide's reference tables are made from
ndc/endpoints.py at build time (ndc/reference.py), so `make docs` shows what the service
serves. Django is set up with the test settings to import them (no database is opened)."""

import os
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def on_config(config):
    sys.path.insert(0, str(REPO))
    os.environ.setdefault("AIRLINE_ENV", "test")
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "airline.settings")
    import django

    django.setup()
    return config


def on_page_markdown(markdown, page, config, files):
    if page.file.src_uri != "partners/ndc.md":
        return markdown
    from ndc.reference import render

    return render(markdown)
