"""The NDC guide (docs/partners/ndc.md) against what the service serves: a message served without a
section of the guide, a section for a message not served, a JSON twin that is no route,
or a marker of the generated tables gone, each fails here."""

import re
from pathlib import Path

import pytest
from django.conf import settings
from django.urls import Resolver404, resolve
from rest_framework.test import APIClient

from ndc.endpoints import ENDPOINTS
from ndc.reference import ENDPOINTS_MARKER, FIELDS_MARKER, render

GUIDE = Path(settings.BASE_DIR) / "docs" / "partners" / "ndc.md"
# A message name as the guide's section headings spell it: IATA's CamelCase.
MESSAGE = re.compile(r"\b[A-Z][a-z]+(?:[A-Z][a-z]+)+\b")


def _sections() -> set[str]:
    """Message names in the guide's `##` headings."""
    headings = re.findall(r"^## (.+)$", GUIDE.read_text(), re.MULTILINE)
    return {name for heading in headings for name in MESSAGE.findall(heading)}


def test_every_served_message_has_a_section_of_the_guide_and_no_other():
    assert _sections() == set(ENDPOINTS)


def test_the_guide_shows_the_generated_tables_of_every_message():
    text = GUIDE.read_text()
    assert ENDPOINTS_MARKER in text
    assert FIELDS_MARKER in text
    built = render(text)
    for name, endpoint in ENDPOINTS.items():
        row = f"| `{name}` | {endpoint.request_root} → {endpoint.response_root} |"
        assert row in built
        assert f"\n#### {name}\n" in built
        for xpath in endpoint.paths.values():
            assert f"`{xpath}`" in built


@pytest.mark.parametrize("name", list(ENDPOINTS))
def test_each_json_twin_the_guide_names_is_a_json_route(name):
    twins = ENDPOINTS[name].json_twin
    assert twins, f"{name} names no JSON endpoint of the same service"
    for twin in twins:
        method, template = twin.split(" ", 1)
        path = template.replace("{v}", "v1").replace("{offerId}", "X1").replace("{orderId}", "X1")
        try:
            view = resolve(path).func
        except Resolver404:
            pytest.fail(f"{name}: {twin} is no route")
        assert hasattr(view.cls, method.lower()), f"{name}: {twin} does not take {method}"


def test_the_messages_of_the_guide_are_the_ones_served():
    """Over HTTP, without credentials: a served message is refused for the credentials
    (401), a name not served as not found (ERR-1000) — checked before credentials."""
    client = APIClient()
    for name in ENDPOINTS:
        response = client.post(f"/ndc/v1/{name}", b"<x/>", content_type="application/xml")
        assert response.status_code == 401, (name, response.content[:200])
    response = client.post("/ndc/v1/OrderSplit", b"<x/>", content_type="application/xml")
    assert response.status_code == 404
    assert b"ERR-1000" in response.content
