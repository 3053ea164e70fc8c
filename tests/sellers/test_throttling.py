"""Request volume per API key (SPEC.md §5 item 5; DESIGN.md §4, §5): ERR-8003 with
Retry-After, shared by every seller the key acts for. Across worker processes:
tests/e2e/test_throttle_across_processes.py."""

import pytest
from django.db import connection
from django.test import override_settings
from prometheus_client import REGISTRY

from sellers import authcache, throttling
from sellers.models import RateWindow
from tests.conftest import bearer, token_for
from tests.sellers.factories import ApiKeyFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def limited_key(partner, default_seller, other_seller):
    return ApiKeyFactory(partner=partner, requests_per_minute=3)


def whoami(api, token):
    return api.get("/json/v1/whoami", **bearer(token))


def test_it_refuses_requests_over_the_limit_until_the_minute_ends(api, limited_key, clock):
    token = token_for(api, limited_key.raw)  # the token request counts: 1 of 3
    clock.advance(seconds=15)

    assert [whoami(api, token).status_code for _ in range(3)] == [200, 200, 429]

    refused = whoami(api, token)
    assert refused.status_code == 429
    assert refused["Retry-After"] == "45"
    body = refused.json()
    assert body["data"] is None
    assert body["error"]["code"] == "ERR-8003"
    assert body["error"]["requestId"] == refused["x-request-id"]

    clock.advance(seconds=45)  # the next minute
    assert whoami(api, token).status_code == 200


def test_the_limit_is_shared_by_every_seller_the_key_acts_for(
    api, limited_key, other_seller, clock
):
    first = token_for(api, limited_key.raw)
    second = token_for(api, limited_key.raw, other_seller.pk)

    assert whoami(api, first).status_code == 200
    assert whoami(api, second).status_code == 429


def test_keys_have_separate_limits(api, limited_key, partner_key, clock):
    for _ in range(3):
        api.post("/auth/token", HTTP_X_API_KEY=limited_key.raw)

    assert api.post("/auth/token", HTTP_X_API_KEY=limited_key.raw).status_code == 429
    assert api.post("/auth/token", HTTP_X_API_KEY=partner_key.raw).status_code == 200


def test_the_auth_endpoints_answer_429_in_the_auth_shape(api, limited_key, clock):
    for _ in range(3):
        api.post("/auth/token", HTTP_X_API_KEY=limited_key.raw)

    response = api.post("/auth/token", HTTP_X_API_KEY=limited_key.raw)

    assert response.status_code == 429
    assert response.json()["errorKey"] == "TooManyRequests"
    assert response.json()["error"]["code"] == "ERR-8003"
    assert response["Retry-After"] == "60"


def test_responses_carry_the_remaining_volume(api, limited_key, clock):
    response = api.post("/auth/token", HTTP_X_API_KEY=limited_key.raw)

    assert response["X-RateLimit-Limit"] == "3"
    assert response["X-RateLimit-Remaining"] == "2"
    assert response["X-RateLimit-Reset"] == str(int(clock.at.timestamp()) + 60)


def test_a_changed_rate_applies_at_once(api, limited_key, clock):
    token = token_for(api, limited_key.raw)
    limited_key.key.requests_per_minute = 100
    limited_key.key.save(update_fields=["requests_per_minute"])

    assert all(whoami(api, token).status_code == 200 for _ in range(10))


@override_settings(REDIS_ENABLED=False)
def test_without_redis_the_database_counts_atomically(api, limited_key, clock):
    """The embedded default's counter is an SQL upsert; here it runs on PostgreSQL."""
    statuses = [
        api.post("/auth/token", HTTP_X_API_KEY=limited_key.raw).status_code for _ in range(4)
    ]

    assert statuses == [200, 200, 200, 429]
    window = RateWindow.objects.get(key=limited_key.key)
    assert window.count == 4
    assert window.minute == int(clock.at.timestamp()) // 60


@override_settings(REDIS_ENABLED=False)
def test_without_redis_finished_windows_are_pruned(api, limited_key, clock):
    api.post("/auth/token", HTTP_X_API_KEY=limited_key.raw)
    clock.advance(minutes=5)
    api.post("/auth/token", HTTP_X_API_KEY=limited_key.raw)

    assert list(
        RateWindow.objects.filter(key=limited_key.key).values_list("minute", flat=True)
    ) == [int(clock.at.timestamp()) // 60]


def test_unauthenticated_requests_are_not_counted(api, limited_key, clock):
    for _ in range(5):
        api.get("/json/v1/whoami")

    assert api.post("/auth/token", HTTP_X_API_KEY=limited_key.raw)["X-RateLimit-Remaining"] == "2"


class TestKeyStoreUnavailable:
    """ERR-8002 (503) when the database or Redis behind keys and limits cannot be reached."""

    @staticmethod
    def failing_on(table: str):
        from django.db import OperationalError

        def wrapper(execute, sql, params, many, context):
            if table in sql:
                raise OperationalError("could not connect to server")
            return execute(sql, params, many, context)

        return wrapper

    def test_token_requests_answer_8002_when_the_database_is_down(self, api, partner_key):
        with connection.execute_wrapper(self.failing_on("sellers_apikey")):
            response = api.post("/auth/token", HTTP_X_API_KEY=partner_key.raw)

        assert response.status_code == 503
        assert response.json()["errorKey"] == "AuthUnavailable"
        assert response.json()["error"]["code"] == "ERR-8002"

    def test_bearer_requests_answer_8002_when_the_database_is_down(self, api, partner_key):
        token = token_for(api, partner_key.raw)

        with connection.execute_wrapper(self.failing_on("sellers_apikey")):
            response = whoami(api, token)

        assert response.status_code == 503
        assert response.json()["data"] is None
        assert response.json()["error"]["code"] == "ERR-8002"

    def test_seller_listing_answers_8002_when_the_seller_table_is_down(self, api, partner_key):
        with connection.execute_wrapper(self.failing_on("sellers_seller")):
            response = api.get("/auth/sellers", HTTP_X_API_KEY=partner_key.raw)

        assert response.json()["error"]["code"] == "ERR-8002"


class TestRedisDown:
    """Redis holds the counters, not the keys: while it is down the limits open for
    RATE_LIMIT_OPEN_SECONDS, counted in a metric and logged, then the database counts."""

    @staticmethod
    def unreachable(settings) -> override_settings:
        return override_settings(
            CACHES={
                "default": {
                    **settings.CACHES["default"],
                    "LOCATION": "redis://127.0.0.1:1/0",  # nothing listens on port 1
                }
            }
        )

    @pytest.fixture
    def redis_down(self, settings):
        with self.unreachable(settings):
            yield

    @staticmethod
    def opened() -> float:
        return (
            REGISTRY.get_sample_value("airline_rate_limit_redis_down_total", {"fallback": "open"})
            or 0.0
        )

    def test_requests_are_admitted_uncounted_and_counted_in_the_metric(
        self, api, limited_key, clock, redis_down, caplog
    ):
        token = token_for(api, limited_key.raw)  # a token from the database, not Redis
        before = self.opened()

        statuses = [whoami(api, token).status_code for _ in range(5)]

        assert statuses == [200] * 5  # over the limit of 3: the limit is open
        assert self.opened() - before == 5
        assert "rate limits open: Redis unreachable" in caplog.text
        assert not RateWindow.objects.exists()

    @override_settings(RATE_LIMIT_OPEN_SECONDS=30)
    def test_after_the_bound_the_database_counts(self, api, limited_key, clock, redis_down, caplog):
        token = token_for(api, limited_key.raw)
        clock.advance(seconds=30)

        statuses = [whoami(api, token).status_code for _ in range(4)]

        assert statuses == [200, 200, 200, 429]
        assert RateWindow.objects.get(key=limited_key.key).count == 4
        assert "counting requests in the database" in caplog.text

    def test_redis_back_counts_there_again(self, api, limited_key, clock, settings, caplog):
        token = token_for(api, limited_key.raw)  # 1 of 3, in Redis
        with self.unreachable(settings):
            assert whoami(api, token)["X-RateLimit-Remaining"] == "3"  # uncounted
        clock.advance(seconds=throttling.REDIS_RETRY_SECONDS)

        assert whoami(api, token)["X-RateLimit-Remaining"] == "1"
        assert "rate limits counted in Redis again" in caplog.text

    def test_with_the_database_down_too_it_is_8002(self, api, partner_key, clock, redis_down):
        token = token_for(api, partner_key.raw)
        authcache.forget()

        with connection.execute_wrapper(TestKeyStoreUnavailable.failing_on("sellers_apikey")):
            response = whoami(api, token)

        assert response.status_code == 503
        assert response.json()["error"]["code"] == "ERR-8002"
        assert response["Retry-After"] == "5"
