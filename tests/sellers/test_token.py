"""POST /auth/token and GET /auth/sellers (SPEC.md §4.1, §4.2, §5, §7; DESIGN.md §11)."""

import uuid

import jwt
import pytest
from django.conf import settings

from sellers.services import api_key_revoke
from tests.conftest import token_for
from tests.sellers.factories import ApiKeyFactory, SellerFactory

pytestmark = pytest.mark.django_db


def assert_auth_error(response, status: int, code: str, error_key: str) -> dict:
    """The auth body shape: {message, errorKey, error: {code, title, description}, requestId}."""
    assert response.status_code == status, response.content
    body = response.json()
    assert set(body) == {"message", "errorKey", "error", "requestId"}
    assert body["errorKey"] == error_key
    assert body["error"]["code"] == code
    assert body["error"]["title"]
    assert body["error"]["description"] == body["message"]
    assert body["requestId"] == response["x-request-id"]
    return body


class TestToken:
    def test_it_issues_a_bearer_token_for_the_default_seller(
        self, api, partner_key, default_seller
    ):
        response = api.post("/auth/token", HTTP_X_API_KEY=partner_key.raw)

        assert response.status_code == 200
        body = response.json()
        assert set(body) == {"access_token", "token_type", "expires_in"}  # not enveloped
        assert body["token_type"] == "Bearer"
        assert body["expires_in"] == 3600
        claims = jwt.decode(
            body["access_token"],
            settings.SIMPLE_JWT["SIGNING_KEY"],
            algorithms=["HS256"],
            issuer=settings.SIMPLE_JWT["ISSUER"],
        )
        assert claims["seller"] == str(default_seller.pk)
        assert claims["key"] == partner_key.key.prefix
        assert claims["exp"] - claims["iat"] == 3600

    def test_an_empty_json_object_body_is_the_same_as_none(self, api, partner_key, default_seller):
        response = api.post("/auth/token", {}, format="json", HTTP_X_API_KEY=partner_key.raw)

        assert response.status_code == 200

    def test_a_partner_key_acts_for_any_active_seller_of_its_partner(
        self, api, partner_key, other_seller, clock
    ):
        token = token_for(api, partner_key.raw, other_seller.pk)

        response = api.get("/json/v1/whoami", HTTP_AUTHORIZATION=f"Bearer {token}")
        assert response.json()["data"]["sellerCode"] == other_seller.code

    def test_a_partner_key_cannot_act_for_another_partners_seller(
        self, api, partner_key, stranger_seller
    ):
        response = api.post(
            "/auth/token",
            {"sellerId": str(stranger_seller.pk)},
            format="json",
            HTTP_X_API_KEY=partner_key.raw,
        )
        assert_auth_error(response, 403, "ERR-8001", "Forbidden")

    def test_a_partner_key_cannot_act_for_an_inactive_seller(self, api, partner_key, other_seller):
        other_seller.is_active = False
        other_seller.save(update_fields=["is_active"])

        response = api.post(
            "/auth/token",
            {"sellerId": str(other_seller.pk)},
            format="json",
            HTTP_X_API_KEY=partner_key.raw,
        )
        assert_auth_error(response, 403, "ERR-8001", "Forbidden")

    def test_an_unknown_seller_id_is_forbidden(self, api, partner_key):
        response = api.post(
            "/auth/token",
            {"sellerId": str(uuid.uuid4())},
            format="json",
            HTTP_X_API_KEY=partner_key.raw,
        )
        assert_auth_error(response, 403, "ERR-8001", "Forbidden")

    def test_a_seller_key_acts_for_its_own_seller_by_default(self, api, seller_key, other_seller):
        token = token_for(api, seller_key.raw)

        response = api.get("/json/v1/whoami", HTTP_AUTHORIZATION=f"Bearer {token}")
        assert response.json()["data"]["sellerCode"] == other_seller.code

    def test_a_seller_key_may_name_its_own_seller(self, api, seller_key, other_seller):
        response = api.post(
            "/auth/token",
            {"sellerId": str(other_seller.pk)},
            format="json",
            HTTP_X_API_KEY=seller_key.raw,
        )
        assert response.status_code == 200

    def test_a_seller_key_cannot_act_for_a_sibling_seller(self, api, seller_key, default_seller):
        response = api.post(
            "/auth/token",
            {"sellerId": str(default_seller.pk)},
            format="json",
            HTTP_X_API_KEY=seller_key.raw,
        )
        assert_auth_error(response, 403, "ERR-8001", "Forbidden")

    def test_a_non_uuid_seller_id_is_a_validation_error_in_the_auth_shape(self, api, partner_key):
        response = api.post(
            "/auth/token", {"sellerId": "DEMO1"}, format="json", HTTP_X_API_KEY=partner_key.raw
        )

        body = assert_auth_error(response, 422, "ERR-1005", "ValidationFailed")
        assert body["error"]["fields"] == {"sellerId": "Must be a valid UUID."}

    @pytest.mark.parametrize("payload", ["[]", "null", '"x"', "{bad json"])
    def test_a_body_that_is_not_an_object_is_a_validation_error(self, api, partner_key, payload):
        response = api.generic(
            "POST",
            "/auth/token",
            payload,
            content_type="application/json",
            HTTP_X_API_KEY=partner_key.raw,
        )
        assert_auth_error(response, 422, "ERR-1005", "ValidationFailed")

    def test_a_missing_key_is_unauthenticated(self, api, default_seller):
        response = api.post("/auth/token")

        assert_auth_error(response, 401, "ERR-8000", "Unauthenticated")
        assert response["WWW-Authenticate"]

    @pytest.mark.parametrize(
        "raw",
        ["not-a-key", ".", "abc.", ".secret", "0123456789ab.wrongsecret", "x" * 300],
        ids=["no-dot", "dot", "no-secret", "no-prefix", "unknown-prefix", "long"],
    )
    def test_a_malformed_or_unknown_key_is_unauthenticated(self, api, partner_key, raw):
        response = api.post("/auth/token", HTTP_X_API_KEY=raw)

        assert_auth_error(response, 401, "ERR-8000", "Unauthenticated")

    def test_a_known_prefix_with_a_wrong_secret_is_unauthenticated(self, api, partner_key):
        wrong = partner_key.key.prefix + ".AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"

        response = api.post("/auth/token", HTTP_X_API_KEY=wrong)

        assert_auth_error(response, 401, "ERR-8000", "Unauthenticated")

    def test_a_revoked_key_is_forbidden(self, api, partner_key, clock):
        api_key_revoke(key=partner_key.key, at=clock())

        response = api.post("/auth/token", HTTP_X_API_KEY=partner_key.raw)

        assert_auth_error(response, 403, "ERR-8001", "Forbidden")

    def test_a_key_of_a_deactivated_partner_is_forbidden(self, api, partner_key, partner):
        partner.is_active = False
        partner.save(update_fields=["is_active"])

        response = api.post("/auth/token", HTTP_X_API_KEY=partner_key.raw)

        assert_auth_error(response, 403, "ERR-8001", "Forbidden")

    def test_it_allows_only_post(self, api, partner_key):
        response = api.get("/auth/token", HTTP_X_API_KEY=partner_key.raw)

        assert_auth_error(response, 405, "ERR-1001", "MethodNotAllowed")


class TestSellers:
    def test_a_partner_key_lists_its_active_sellers_with_exactly_one_default(
        self, api, partner_key, default_seller, other_seller, stranger_seller
    ):
        SellerFactory(partner=partner_key.key.partner, code="ACME9", is_active=False)

        response = api.get("/auth/sellers", HTTP_X_API_KEY=partner_key.raw)

        assert response.status_code == 200
        sellers = response.json()  # a bare array, not enveloped
        assert sellers == [
            {
                "sellerId": str(default_seller.pk),
                "sellerCode": "ACME1",
                "name": default_seller.name,
                "isDefault": True,
            },
            {
                "sellerId": str(other_seller.pk),
                "sellerCode": "ACME2",
                "name": other_seller.name,
                "isDefault": False,
            },
        ]
        assert sum(s["isDefault"] for s in sellers) == 1

    def test_a_seller_key_lists_just_its_own_seller_as_the_default(
        self, api, seller_key, other_seller
    ):
        response = api.get("/auth/sellers", HTTP_X_API_KEY=seller_key.raw)

        assert response.json() == [
            {
                "sellerId": str(other_seller.pk),
                "sellerCode": "ACME2",
                "name": other_seller.name,
                "isDefault": True,
            }
        ]

    def test_every_seller_listed_can_get_a_token(self, api, partner_key):
        for seller in api.get("/auth/sellers", HTTP_X_API_KEY=partner_key.raw).json():
            token_for(api, partner_key.raw, seller["sellerId"])

    def test_it_needs_a_key(self, api, partner_key):
        assert_auth_error(api.get("/auth/sellers"), 401, "ERR-8000", "Unauthenticated")

    def test_a_revoked_key_is_forbidden(self, api, partner_key, clock):
        api_key_revoke(key=partner_key.key, at=clock())

        assert_auth_error(
            api.get("/auth/sellers", HTTP_X_API_KEY=partner_key.raw), 403, "ERR-8001", "Forbidden"
        )

    def test_partner_keys_of_two_partners_see_only_their_own_sellers(
        self, api, partner_key, stranger_seller
    ):
        stranger_key = ApiKeyFactory(partner=stranger_seller.partner)

        codes = [
            s["sellerCode"]
            for s in api.get("/auth/sellers", HTTP_X_API_KEY=stranger_key.raw).json()
        ]

        assert codes == ["OTHER1"]
