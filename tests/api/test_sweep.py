"""The HTTP sweep (issue 13): every route of the URL conf, plus unrouted API paths, by every
HTTP method, by (no credentials, a bad token, a good token) answers in its own format —
JSON with an ERR code on every JSON and auth path, an NDC RS document with an Error
whose Code is the ERR code on every /ndc/ path, never HTML, never a 5xx. Routes are read from
the URL conf, so a route added later is swept without touching this file."""

import re
from collections.abc import Iterator

import pytest
from django.urls import URLPattern, URLResolver, get_resolver
from lxml import etree
from rest_framework.test import APIClient

from tests.conftest import bearer, token_for

pytestmark = pytest.mark.django_db

METHODS = ("get", "head", "post", "put", "patch", "delete", "options")
API_PREFIXES = ("/json/", "/auth/", "/ndc/", "/health")
# Pages for people, HTML by design; they still must not fail.
HTML_PAGES = re.compile(r"^/(admin/|$|json/v\d/schema/(swagger-ui|redoc)$)")
EXAMPLES = {
    "version": "v1",
    "orderId": "ABCDEF",
    "offerId": "nope.1",
    "rest": "nothing/here",
    "endpoint": "AirShopping",
}
UNROUTED = [
    "/json/v1/orders/ABC/nothing",
    "/json/v9/offers",
    "/json/v0/orders",
    "/json/",
    "/json/v1/",
    "/ndc/v1/AirShopping",
    "/ndc/v1/OfferPrice",
    "/ndc/v1/NoSuchMessage",
    "/ndc/v9/AirShopping",
    "/ndc/v1/AirShopping/extra",
    "/ndc/",
    "/auth/nothing",
    "/auth/token/extra",
]
ERROR_CODE = re.compile(r"^ERR-\d+$")
# The OpenAPI description is a document: YAML unless asked for JSON (?format=json).
DOCUMENT_TYPES = ("application/json", "application/vnd.oai.openapi")
NDC_ERROR_CODE = "{*}Error/{*}Code"


def routes(resolver: URLResolver | None = None, prefix: str = "") -> Iterator[str]:
    """One concrete path per route, path parameters filled with plausible values."""
    resolver = resolver or get_resolver()
    for pattern in resolver.url_patterns:
        route = prefix + _route_of(pattern)
        if isinstance(pattern, URLResolver):
            if route.startswith("admin/"):
                yield "/admin/"  # Django's own site: its pages are swept once
                continue
            yield from routes(pattern, route)
        elif isinstance(pattern, URLPattern):
            yield "/" + route


def _route_of(pattern) -> str:
    text = str(pattern.pattern)
    text = re.sub(r"<(?:\w+:)?(\w+)>", lambda m: EXAMPLES.get(m.group(1), "x"), text)
    text = re.sub(r"\(\?P<(\w+)>[^)]*\)", lambda m: EXAMPLES.get(m.group(1), "x"), text)
    return text.replace("^", "").replace("$", "").replace("(?:json|auth|ndc)", "json")


PATHS = sorted({*routes(), *UNROUTED})


@pytest.fixture
def api():
    """A client as real ones are: no CSRF token (the test client skips the check)."""
    return APIClient(enforce_csrf_checks=True)


@pytest.fixture
def good_token(api, partner_key, default_seller, clock):
    return bearer(token_for(api, partner_key.raw))


@pytest.mark.parametrize("path", PATHS)
def test_every_path_answers_every_method_in_its_own_format(api, good_token, path):
    answers = []
    for credentials in ({}, bearer("not-a-token"), good_token):
        for method in METHODS:
            bodies = (
                [None, "{}", '{"x": [1, {"y": null}]}']
                if method in ("post", "put", "patch")
                else [None]
            )
            for body in bodies:
                kwargs = {"data": body, "content_type": "application/json"} if body else {}
                response = getattr(api, method)(path, **kwargs, **credentials)
                answers.append((method, bool(credentials), body, response))

    for method, authed, body, response in answers:
        where = f"{method.upper()} {path} (credentials: {authed}, body: {body!r})"
        loading = path == "/health" and response.status_code == 503  # SPEC.md §4.3
        assert response.status_code < 500 or loading, (where, response.content[:300])
        if HTML_PAGES.match(path):
            continue
        if path.startswith("/ndc/"):
            assert response["Content-Type"].startswith("application/xml"), where
            if method == "head":
                continue
            assert response.status_code >= 400, where  # no body of the sweep is a message
            root = etree.fromstring(response.content)
            assert etree.QName(root).localname.endswith("RS"), (where, response.content)
            assert ERROR_CODE.match(root.findtext(NDC_ERROR_CODE) or ""), where
            continue
        assert response["Content-Type"].startswith(DOCUMENT_TYPES), where
        if method == "head" or response.status_code < 400 or loading:
            continue
        body_json = response.json()
        error = body_json["error"]
        assert ERROR_CODE.match(error["code"]), (where, body_json)


def test_the_sweep_covers_every_api_route():
    """A guard against the walk above silently finding nothing."""
    assert {"/json/v1/orders", "/json/v1/orders/ABCDEF", "/auth/token", "/health"} <= set(PATHS)
    assert len([p for p in PATHS if p.startswith("/json/v1/")]) >= 12
    assert "/ndc/v1/AirShopping" in PATHS
