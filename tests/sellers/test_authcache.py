"""Resolved tokens are remembered per process while no key, seller or partner changes
(sellers/authcache.py). Across processes: tests/e2e/test_revocation_across_processes.py."""

import pytest
from django.test import override_settings

from sellers.services import api_key_update
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
