"""Idempotency-Key on POST /json/{v}/webhooks (DESIGN.md §11 "Idempotent changes"): a
client that lost the answer retries and gets the same endpoint and secret, not a second
endpoint signing with a secret it never saw."""

import pytest

from airline.api.models import IdempotencyRecord
from tests.conftest import bearer, error_of, token_for
from webhooks.models import WebhookEndpoint

pytestmark = pytest.mark.django_db

URL = "http://127.0.0.1:8123/hooks"


def register(api, auth, url, **headers):
    return api.post("/json/v1/webhooks", {"url": url}, format="json", **auth, **headers)


@pytest.fixture
def auth(api, partner_key, loopback_allowed):
    return bearer(token_for(api, partner_key.raw))


def test_a_repeated_registration_answers_the_first_and_registers_once(api, auth):
    first = register(api, auth, URL, HTTP_IDEMPOTENCY_KEY="hook-1")
    again = register(api, auth, URL, HTTP_IDEMPOTENCY_KEY="hook-1")

    assert first.status_code == again.status_code == 201, first.content
    assert again.json() == first.json()
    assert again["Idempotent-Replayed"] == "true"
    [endpoint] = WebhookEndpoint.objects.all()
    assert endpoint.webhook_id == again.json()["data"]["webhookId"]
    assert endpoint.secret == again.json()["data"]["secret"]


def test_without_a_key_each_registration_is_new(api, auth):
    assert register(api, auth, URL).status_code == 201
    assert register(api, auth, URL).status_code == 201
    assert WebhookEndpoint.objects.count() == 2


def test_the_key_with_another_registration_is_err_1011(api, auth):
    assert register(api, auth, URL, HTTP_IDEMPOTENCY_KEY="hook-1").status_code == 201

    response = register(api, auth, URL + "/other", HTTP_IDEMPOTENCY_KEY="hook-1")

    error_of(response, 422, "ERR-1011", "Idempotency-Key")
    assert WebhookEndpoint.objects.count() == 1


def test_a_registration_still_running_is_err_1012(api, auth, partner_key, default_seller, clock):
    IdempotencyRecord.objects.create(
        scope=f"{partner_key.key.prefix}:{default_seller.pk.hex}",
        key="hook-1",
        fingerprint="x" * 64,
        state=IdempotencyRecord.State.RUNNING,
        created_at=clock.at,
        updated_at=clock.at,
    )

    error_of(register(api, auth, URL, HTTP_IDEMPOTENCY_KEY="hook-1"), 409, "ERR-1012")
    assert not WebhookEndpoint.objects.exists()


def test_a_refused_registration_keeps_nothing(api, auth, settings):
    settings.WEBHOOK_ALLOW_LOOPBACK = False
    error_of(register(api, auth, URL, HTTP_IDEMPOTENCY_KEY="hook-1"), 422, "ERR-1005", "url")
    assert not IdempotencyRecord.objects.exists()

    settings.WEBHOOK_ALLOW_LOOPBACK = True
    assert register(api, auth, URL, HTTP_IDEMPOTENCY_KEY="hook-1").status_code == 201
