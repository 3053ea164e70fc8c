"""`make run`'s configuration on a bare machine: SQLite under the var dir and the database
cache, no DATABASE_URL or REDIS_URL, served by a real multi-worker gunicorn."""

import pytest
import requests

from tests.e2e.servers import base_env, gunicorn, manage, wait_until_ready

pytestmark = pytest.mark.e2e


def test_the_embedded_default_serves_health_tokens_and_api_calls(tmp_path):
    env = base_env(AIRLINE_ENV="development", AIRLINE_VAR_DIR=str(tmp_path))
    manage(env, "migrate", "--noinput")
    manage(env, "seed_demo")
    manage(env, "seed_demo")  # idempotent
    raw = manage(env, "create_api_key", "--partner", "DEMO", "--agency", "SMOKE").splitlines()[-1]
    assert (tmp_path / "airline.sqlite3").exists()

    with gunicorn(env, tmp_path / "gunicorn.log", workers=2) as server:
        health = wait_until_ready(server)
        token_response = requests.post(
            server.url + "/auth/token", headers={"x-api-key": raw}, timeout=5
        )
        token = token_response.json()["access_token"]
        calls = [
            requests.get(
                server.url + "/json/v1/whoami",
                headers={"Authorization": f"Bearer {token}"},
                timeout=5,
            )
            for _ in range(6)
        ]

    assert health.status_code == 200
    assert health.json()["status"] == "ok"
    assert token_response.status_code == 200
    assert [c.status_code for c in calls] == [200] * 6
    assert calls[0].json()["data"]["sellerCode"] == "DEMO1"
    assert calls[0].json()["data"]["agencyCode"] == "SMOKE"
    # One request counter for both workers, kept in the database (no Redis here).
    assert [int(c.headers["X-RateLimit-Remaining"]) for c in calls] == [
        598,
        597,
        596,
        595,
        594,
        593,
    ]
    assert raw not in server.output()
    assert token not in server.output()
