"""Protocol answers of issue 13 points 1 and 2: unrouted and wrong-method requests answer
JSON whatever the method and credentials, the admin keeps its CSRF protection, and a
sellerId that is not a UUID string is ERR-1005 in the auth shape."""

import pytest
from django.contrib.auth import get_user_model
from lxml import etree
from rest_framework.test import APIClient

from tests.conftest import bearer, token_for

pytestmark = pytest.mark.django_db


@pytest.fixture
def api():
    return APIClient(enforce_csrf_checks=True)  # as real clients: no CSRF token


@pytest.mark.parametrize(
    ("method", "path", "status", "code"),
    [
        ("post", "/json/v1/orders/ABC/nothing", 404, "ERR-1000"),
        ("post", "/json/v9/offers", 404, "ERR-1002"),
        ("delete", "/json/v1/orders/ABCDEF/nothing", 404, "ERR-1000"),
        ("put", "/json/v1/orders", 405, "ERR-1001"),
        ("delete", "/json/v1/offers", 405, "ERR-1001"),
        ("options", "/json/v1/orders", 405, "ERR-1001"),
        ("post", "/health", 405, "ERR-1001"),
    ],
)
@pytest.mark.parametrize("credentials", ["none", "bad", "good"])
def test_no_route_or_a_wrong_method_is_json_for_everyone(
    api, partner_key, default_seller, clock, method, path, status, code, credentials
):
    headers = {
        "none": {},
        "bad": bearer("not-a-token"),
        "good": bearer(token_for(api, partner_key.raw)),
    }[credentials]

    response = getattr(api, method)(path, {"x": 1}, format="json", **headers)

    assert response.status_code == status, response.content
    assert response["Content-Type"] == "application/json"
    assert response.json()["error"]["code"] == code
    if status == 405:
        assert "GET" in response["Allow"] or "POST" in response["Allow"]


@pytest.mark.parametrize(
    ("method", "path", "status", "code"),
    [
        ("post", "/ndc/v1/NoSuchMessage", 404, "ERR-1000"),
        ("post", "/ndc/v9/AirShopping", 404, "ERR-1002"),
        ("get", "/ndc/v1/AirShopping", 405, "ERR-1001"),
        ("options", "/ndc/v1/OfferPrice", 405, "ERR-1001"),
        ("delete", "/ndc/v1/NoSuchMessage", 405, "ERR-1001"),
    ],
)
@pytest.mark.parametrize("credentials", ["none", "bad", "good"])
def test_no_route_or_a_wrong_method_under_ndc_is_an_xml_error_for_everyone(
    api, partner_key, default_seller, clock, method, path, status, code, credentials
):
    headers = {
        "none": {},
        "bad": bearer("not-a-token"),
        "good": bearer(token_for(api, partner_key.raw)),
    }[credentials]

    response = api.generic(method.upper(), path, b"<x/>", "application/xml", **headers)

    assert response.status_code == status, response.content
    assert response["Content-Type"].startswith("application/xml")
    assert etree.fromstring(response.content).findtext("{*}Error/{*}Code") == code
    if status == 405:
        assert response["Allow"] == "POST"


def test_a_wrong_method_on_an_auth_path_uses_the_auth_shape(api):
    response = api.delete("/auth/token")

    assert response.status_code == 405
    body = response.json()
    assert (body["errorKey"], body["error"]["code"]) == ("MethodNotAllowed", "ERR-1001")
    assert response["Allow"] == "POST"


def test_the_admin_still_refuses_a_post_without_its_csrf_token(api):
    get_user_model().objects.create_superuser("ops", password="right-horse-battery")

    response = api.post("/admin/login/", {"username": "ops", "password": "right-horse-battery"})

    assert response.status_code == 403
    assert response["Content-Type"].startswith("text/html")  # Django's own page, for people


@pytest.mark.parametrize(
    "seller_id", [42, 0, 1.5, True, [], {}, ["00000000-0000-0000-0000-000000000001"], "abc", ""]
)
def test_a_seller_id_that_is_not_a_uuid_string_is_err_1005_in_the_auth_shape(
    api, partner_key, default_seller, seller_id
):
    response = api.post(
        "/auth/token", {"sellerId": seller_id}, format="json", HTTP_X_API_KEY=partner_key.raw
    )

    assert response.status_code == 422, response.content
    body = response.json()
    assert body["errorKey"] == "ValidationFailed"
    assert body["error"]["code"] == "ERR-1005"
    assert "sellerId" in body["error"]["fields"]


def test_a_host_we_do_not_serve_is_json_on_api_paths(api, settings):
    settings.ALLOWED_HOSTS = ["api.example.com"]

    response = api.get("/json/v1/orders", HTTP_HOST="evil.example.net")

    assert response.status_code == 400
    assert response.json()["error"]["code"] == "ERR-1004"
