"""Bearer tokens and direct keys on /json endpoints, and the permission classes
(SPEC.md §5; DESIGN.md §5, §11)."""

from datetime import timedelta

import pytest

from airline.api import clock as service_clock
from sellers.services import api_key_revoke, token_issue
from tests.conftest import bearer, token_for

pytestmark = [pytest.mark.django_db, pytest.mark.urls("tests.api.urls")]


def assert_enveloped_auth_error(response, status: int, code: str) -> dict:
    """Under /json the auth shape is also an envelope: data is null (DESIGN.md §11)."""
    assert response.status_code == status, response.content
    body = response.json()
    assert set(body) == {"data", "message", "errorKey", "error", "requestId"}
    assert body["data"] is None
    assert body["error"]["code"] == code
    assert body["requestId"] == response["x-request-id"]
    return body


def test_a_token_authenticates_as_its_seller(api, partner_key, default_seller):
    token = token_for(api, partner_key.raw)

    response = api.get("/json/v1/whoami", **bearer(token))

    assert response.status_code == 200
    assert response.json() == {
        "data": {
            "sellerId": str(default_seller.pk),
            "sellerCode": "ACME1",
            "partnerCode": "ACME",
            "apiKeyPrefix": partner_key.key.prefix,
            "accessLevel": "full",
            "agencyCode": "ACMEAGT",
            "requestsPerMinute": 600,
        },
        "error": None,
    }


def test_no_credentials_is_unauthenticated(api, partner_key):
    body = assert_enveloped_auth_error(api.get("/json/v1/whoami"), 401, "ERR-8000")

    assert body["errorKey"] == "Unauthenticated"


@pytest.mark.parametrize(
    "header",
    ["Bearer", "Bearer ", "Basic dXNlcjpwYXNz", "Token abc", "Bearer not.a.jwt", "Bearer abc"],
)
def test_a_malformed_authorization_header_is_unauthenticated(api, partner_key, header):
    response = api.get("/json/v1/whoami", HTTP_AUTHORIZATION=header)

    assert_enveloped_auth_error(response, 401, "ERR-8000")


def test_a_token_signed_with_another_key_is_unauthenticated(api, partner_key, settings):
    token = token_for(api, partner_key.raw)
    header, payload, signature = token.split(".")
    forged = f"{header}.{payload}.{signature[::-1]}"

    assert_enveloped_auth_error(api.get("/json/v1/whoami", **bearer(forged)), 401, "ERR-8000")


def test_an_expired_token_is_unauthenticated(api, partner_key, default_seller):
    issued_two_hours_ago = service_clock.now() - timedelta(hours=2)
    token = token_issue(key=partner_key.key, seller=default_seller, now=issued_two_hours_ago)

    assert_enveloped_auth_error(
        api.get("/json/v1/whoami", **bearer(token.access_token)), 401, "ERR-8000"
    )


def test_a_token_just_before_expiry_still_works(api, partner_key, default_seller):
    almost_an_hour_ago = service_clock.now() - timedelta(seconds=3590)
    token = token_issue(key=partner_key.key, seller=default_seller, now=almost_an_hour_ago)

    assert api.get("/json/v1/whoami", **bearer(token.access_token)).status_code == 200


def test_revoking_a_key_stops_its_tokens_at_once(api, partner_key, clock):
    token = token_for(api, partner_key.raw)
    assert api.get("/json/v1/whoami", **bearer(token)).status_code == 200

    api_key_revoke(key=partner_key.key, at=clock())

    assert_enveloped_auth_error(api.get("/json/v1/whoami", **bearer(token)), 401, "ERR-8000")


def test_a_token_for_a_seller_deactivated_since_is_forbidden(api, partner_key, other_seller):
    token = token_for(api, partner_key.raw, other_seller.pk)
    other_seller.is_active = False
    other_seller.save(update_fields=["is_active"])

    assert_enveloped_auth_error(api.get("/json/v1/whoami", **bearer(token)), 403, "ERR-8001")


def test_a_partner_key_sent_directly_acts_as_its_default_seller(api, partner_key, default_seller):
    response = api.get("/json/v1/whoami", HTTP_X_API_KEY=partner_key.raw)

    assert response.json()["data"]["sellerCode"] == default_seller.code


def test_a_seller_key_sent_directly_acts_as_its_own_seller(api, seller_key, other_seller):
    response = api.get("/json/v1/whoami", HTTP_X_API_KEY=seller_key.raw)

    assert response.json()["data"]["sellerCode"] == other_seller.code


def test_a_bearer_token_wins_over_a_direct_key(
    api, partner_key, seller_key, other_seller, default_seller
):
    token = token_for(api, partner_key.raw)  # acts as the default seller

    response = api.get("/json/v1/whoami", HTTP_X_API_KEY=seller_key.raw, **bearer(token))

    assert response.json()["data"]["sellerCode"] == default_seller.code


def test_a_wrong_direct_key_is_unauthenticated(api, partner_key):
    response = api.get("/json/v1/whoami", HTTP_X_API_KEY=partner_key.key.prefix + ".nope")

    assert_enveloped_auth_error(response, 401, "ERR-8000")


def test_a_revoked_direct_key_is_forbidden(api, partner_key, clock):
    api_key_revoke(key=partner_key.key, at=clock())

    assert_enveloped_auth_error(
        api.get("/json/v1/whoami", HTTP_X_API_KEY=partner_key.raw), 403, "ERR-8001"
    )


class TestFullTransactionPermission:
    def test_a_full_access_key_may_book(self, api, partner_key):
        response = api.post("/json/v1/probe/book", **bearer(token_for(api, partner_key.raw)))

        assert response.status_code == 201

    def test_a_read_only_key_is_refused(self, api, read_only_key):
        response = api.post("/json/v1/probe/book", **bearer(token_for(api, read_only_key.raw)))

        body = assert_enveloped_auth_error(response, 403, "ERR-8001")
        assert body["errorKey"] == "Forbidden"
        assert "read-only" in body["message"]

    def test_access_downgraded_after_the_token_was_issued_applies_at_once(self, api, partner_key):
        token = token_for(api, partner_key.raw)
        partner_key.key.access_level = "read"
        partner_key.key.save(update_fields=["access_level"])

        assert_enveloped_auth_error(
            api.post("/json/v1/probe/book", **bearer(token)), 403, "ERR-8001"
        )


class TestAgencyCodePermission:
    def test_a_key_with_an_agency_code_passes(self, api, read_only_key):
        response = api.get("/json/v1/probe/agency", **bearer(token_for(api, read_only_key.raw)))

        assert response.json()["data"] == {"agencyCode": "ACMEAGT"}

    def test_a_key_without_an_agency_code_is_refused(self, api, seller_key):
        response = api.get("/json/v1/probe/agency", **bearer(token_for(api, seller_key.raw)))

        body = assert_enveloped_auth_error(response, 403, "ERR-8001")
        assert "agency" in body["message"]
