"""What a probe gets for free, taken away (issue 28 item 7): a foreign Host header is a
400 in the API's shape and one WARNING line; the back office and the API docs carry a
Content-Security-Policy that runs no inline script."""

import logging

import pytest
from lxml import etree

from airline.api.middleware import CONTENT_SECURITY_POLICY

pytestmark = pytest.mark.django_db

FOREIGN = "evil.example.com"


@pytest.fixture
def records(caplog):
    caplog.set_level(logging.INFO)
    return caplog


@pytest.mark.parametrize("path", ["/json/v1/orders", "/json/v1/nothing", "/auth/token", "/health"])
def test_a_foreign_host_is_a_400_envelope_and_one_warning(api, records, path):
    response = api.get(path, HTTP_HOST=FOREIGN)

    assert response.status_code == 400
    assert response["Content-Type"] == "application/json"
    body = response.json()
    error = body["error"]
    assert error["code"] == "ERR-1004"
    # The envelope, or on /auth/ the auth shape (DESIGN.md §11), with the request id.
    assert error.get("requestId", body.get("requestId")) == response["x-request-id"]
    warnings = [r for r in records.records if r.name == "airline.security"]
    assert len(warnings) == 1
    assert warnings[0].levelno == logging.WARNING
    assert warnings[0].exc_info is None
    assert warnings[0].fields["host"] == FOREIGN
    assert not [r for r in records.records if r.levelno >= logging.ERROR or r.exc_info]


def test_a_foreign_host_on_ndc_is_the_error_document(api, records):
    response = api.post(
        "/ndc/v1/AirShopping", b"<x/>", content_type="application/xml", HTTP_HOST=FOREIGN
    )

    assert response.status_code == 400
    assert response["Content-Type"].startswith("application/xml")
    document = etree.fromstring(response.content)
    assert [e.text for e in document.iter() if etree.QName(e).localname == "Code"] == ["ERR-1004"]
    assert not [r for r in records.records if r.levelno >= logging.ERROR or r.exc_info]


def test_a_foreign_host_on_the_back_office_is_a_plain_400(api, records):
    response = api.get("/admin/login/", HTTP_HOST=FOREIGN)

    assert response.status_code == 400
    assert b"<" not in response.content  # no page echoing the client's host
    assert [r.levelname for r in records.records if r.name == "airline.security"] == ["WARNING"]


def test_a_control_character_in_the_host_is_logged_escaped(api, records):
    api.get("/health", HTTP_HOST="a\nb.example")

    [warning] = [r for r in records.records if r.name == "airline.security"]
    assert "\n" not in warning.fields["host"]


def test_an_allowed_host_passes(api):
    assert api.get("/health", HTTP_HOST="localhost").status_code in (200, 503)


@pytest.mark.parametrize(
    "path", ["/admin/login/", "/json/v1/schema/swagger-ui", "/json/v1/schema/redoc", "/"]
)
def test_html_pages_carry_a_content_security_policy(api, path):
    response = api.get(path)

    assert response.status_code == 200
    assert response["Content-Security-Policy"] == CONTENT_SECURITY_POLICY
    assert "script-src 'self';" in CONTENT_SECURITY_POLICY
    # No inline script the policy would block: every <script> names its source.
    page = response.content.decode()
    assert page.count("<script") == page.count("<script src=")


def test_swagger_uis_set_up_script_is_served_from_its_own_url(api):
    page = api.get("/json/v1/schema/swagger-ui").content.decode()
    assert "?script" in page

    script = api.get("/json/v1/schema/swagger-ui?script")

    assert script.status_code == 200
    assert script["Content-Type"].startswith("application/javascript")
    assert b"SwaggerUIBundle" in script.content


def test_api_answers_carry_no_page_policy(api):
    assert "Content-Security-Policy" not in api.get("/json/v1/orders").headers
