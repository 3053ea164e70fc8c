"""Response headers of a production service (issue 14 item 9): API answers are never
stored by a cache, and production turns on HSTS and the usual security headers."""

import subprocess
import sys

import pytest

from tests.conftest import bearer, token_for
from tests.e2e.servers import REPO, base_env

pytestmark = pytest.mark.django_db


def test_every_api_answer_says_no_store(api, partner_key, default_seller, clock):
    token = api.post("/auth/token", HTTP_X_API_KEY=partner_key.raw)
    auth = bearer(token_for(api, partner_key.raw))
    answers = {
        "token": token,
        "sellers": api.get("/auth/sellers", HTTP_X_API_KEY=partner_key.raw),
        "whoami": api.get("/json/v1/whoami", **auth),
        "list": api.get("/json/v1/orders", **auth),
        "retrieve (not found)": api.get("/json/v1/orders/ABCDEF", **auth),
        "unauthenticated": api.get("/json/v1/orders"),
        "no route": api.post("/json/v1/nothing-here", {}, format="json"),
    }

    assert {name: r.headers.get("Cache-Control") for name, r in answers.items()} == {
        name: "no-store" for name in answers
    }


def test_the_landing_page_may_be_cached(api, db):
    assert api.get("/").headers.get("Cache-Control") != "no-store"


def test_production_settings_pass_djangos_deployment_checks():
    env = base_env(
        AIRLINE_ENV="production",
        SECRET_KEY="x" * 64 + "production-like-secret-for-the-check",
        ALLOWED_HOSTS="api.example.com",
        DATABASE_URL="postgres://postgres@127.0.0.1:5432/airline",
    )
    result = subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )

    assert result.returncode == 0, result.stdout + result.stderr
