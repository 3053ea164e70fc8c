"""Request-body bytes per API key per minute (API_KEY_BODY_BYTES_PER_MINUTE), and per
client address for the keyless Stripe webhook: a key at its request allowance of 1 MiB
bodies cannot take the parsing time other sellers need. 429 ERR-8003 with Retry-After,
the body never parsed."""

import pytest
from django.test import override_settings

from sellers.models import RateWindow
from tests.conftest import bearer, token_for
from tests.sellers.factories import ApiKeyFactory

pytestmark = [
    pytest.mark.django_db,
    pytest.mark.usefixtures("clock"),
]

MIB = 1024 * 1024
# Not JSON at all: were it parsed it would be 422 ERR-1005, so a 429 shows it was not.
HOSTILE = b"[" * (MIB // 2 - 1024)  # two, and a token request, within 1 MiB


@pytest.fixture
def key(partner, default_seller):
    return ApiKeyFactory(partner=partner, requests_per_minute=1000)


@pytest.fixture
def token(api, key):
    return token_for(api, key.raw)


def search(api, token, body=HOSTILE):
    return api.generic(
        "POST", "/json/v1/offers", body, content_type="application/json", **bearer(token)
    )


@override_settings(API_KEY_BODY_BYTES_PER_MINUTE=MIB)
def test_a_key_past_its_byte_budget_gets_429_until_the_minute_ends(api, token, clock):
    clock.advance(seconds=20)

    first, second = search(api, token), search(api, token)  # 0.5 MiB each: 1 MiB in all
    refused = search(api, token)

    assert (first.status_code, second.status_code) == (422, 422)
    assert refused.status_code == 429
    assert refused.json()["error"]["code"] == "ERR-8003"
    assert "Request body volume of this API key exceeded" in refused.json()["error"]["description"]
    assert refused["Retry-After"] == "40"

    clock.advance(seconds=40)  # the next minute
    assert search(api, token).status_code == 422


@override_settings(API_KEY_BODY_BYTES_PER_MINUTE=MIB)
def test_requests_without_a_body_still_pass(api, token):
    for _ in range(3):
        search(api, token)

    assert api.get("/json/v1/whoami", **bearer(token)).status_code == 200


@override_settings(API_KEY_BODY_BYTES_PER_MINUTE=MIB)
def test_another_keys_budget_is_its_own(api, token, partner_key):
    for _ in range(3):
        search(api, token)

    assert search(api, token_for(api, partner_key.raw)).status_code == 422


@override_settings(API_KEY_BODY_BYTES_PER_MINUTE=MIB, REDIS_ENABLED=False)
def test_without_redis_the_database_counts_the_bytes(api, token, key, clock):
    statuses = [search(api, token).status_code for _ in range(3)]

    assert statuses == [422, 422, 429]
    window = RateWindow.objects.get(key=key.key, minute=int(clock.at.timestamp()) // 60)
    assert window.bytes == 3 * len(HOSTILE)


@override_settings(API_ADDRESS_BODY_BYTES_PER_MINUTE=MIB)
def test_the_keyless_stripe_webhook_is_counted_per_address(api):
    def post(address: str):
        return api.generic(
            "POST",
            "/payments/stripe/webhook",
            HOSTILE,
            content_type="application/json",
            REMOTE_ADDR=address,
        )

    assert all(post("198.51.100.7").status_code != 429 for _ in range(2))
    refused = post("198.51.100.7")

    assert refused.status_code == 429
    assert refused.json()["error"]["code"] == "ERR-8003"
    assert int(refused["Retry-After"]) >= 1
    assert post("198.51.100.8").status_code != 429
