"""Resolved tokens are remembered per process while no key, seller or partner changes
(sellers/authcache.py). Across processes: tests/e2e/test_revocation_across_processes.py."""

import pytest
from django.test import override_settings
from django.utils import timezone

from sellers.services import api_key_revoke, api_key_update
from tests.conftest import bearer, token_for

pytestmark = pytest.mark.django_db


def test_a_second_request_resolves_its_token_without_a_query(
    api, partner_key, django_assert_num_queries
):
    headers = bearer(token_for(api, partner_key.raw))
    api.get("/json/v1/whoami", **headers)

    with django_assert_num_queries(0):
        assert api.get("/json/v1/whoami", **headers).status_code == 200


def test_a_change_to_the_key_is_seen_by_the_next_request(api, partner_key):
    headers = bearer(token_for(api, partner_key.raw))
    assert api.get("/json/v1/whoami", **headers).json()["data"]["requestsPerMinute"] == 600

    partner_key.key.requests_per_minute = 42
    api_key_update(key=partner_key.key, fields=["requests_per_minute"])

    assert api.get("/json/v1/whoami", **headers).json()["data"]["requestsPerMinute"] == 42


def test_a_deactivated_partner_is_seen_by_the_next_request(api, partner_key, partner):
    headers = bearer(token_for(api, partner_key.raw))
    api.get("/json/v1/whoami", **headers)

    partner.is_active = False
    partner.save(update_fields=["is_active"])

    assert api.get("/json/v1/whoami", **headers).status_code == 401


@override_settings(REDIS_ENABLED=False)  # request volume counted in the database
def test_with_the_cache_down_tokens_are_resolved_from_the_database(api, partner_key, settings):
    headers = bearer(token_for(api, partner_key.raw))
    broken = {"default": {**settings.CACHES["default"], "LOCATION": "redis://127.0.0.1:1/0"}}

    with override_settings(CACHES=broken):
        first = api.get("/json/v1/whoami", **headers)
        second = api.get("/json/v1/whoami", **headers)

    assert (first.status_code, second.status_code) == (200, 200)


def test_a_key_given_an_agency_code_lists_orders_on_its_next_request(api, partner_key):
    # The token resolved and remembered while the key had no agency code: OrderList's
    # refusal is made only after the stamp says the key has not changed since.
    partner_key.key.agency_code = ""
    api_key_update(key=partner_key.key, fields=["agency_code"])
    headers = bearer(token_for(api, partner_key.raw))
    assert api.get("/json/v1/orders", **headers).status_code == 403

    partner_key.key.agency_code = "ACMEAGT"
    api_key_update(key=partner_key.key, fields=["agency_code"])

    assert api.get("/json/v1/orders", **headers).status_code == 200


def test_a_lowered_limit_applies_to_the_next_request(api, partner_key):
    headers = bearer(token_for(api, partner_key.raw))  # 1 request this minute
    assert api.get("/json/v1/whoami", **headers).status_code == 200  # 2

    partner_key.key.requests_per_minute = 2
    api_key_update(key=partner_key.key, fields=["requests_per_minute"])
    response = api.get("/json/v1/whoami", **headers)  # 3, over the new limit

    assert (response.status_code, response["X-RateLimit-Limit"]) == (429, "2")


def test_a_revoked_key_is_refused_on_its_next_request(api, partner_key):
    headers = bearer(token_for(api, partner_key.raw))
    assert api.get("/json/v1/whoami", **headers).status_code == 200

    api_key_revoke(key=partner_key.key, at=timezone.now())

    assert api.get("/json/v1/whoami", **headers).status_code == 401
