"""Partner management issues an API key in Chromium: its secret is on the page the create
redirects to and nowhere after, a reload of that page included; revoked, its key is
refused over HTTP at once (SPEC.md: ERR-8001)."""

import re

import pytest
import requests

from sellers.models import ApiKey
from tests.browser.conftest import staff_member

pytestmark = pytest.mark.django_db(transaction=True, serialized_rollback=True)


def token_status(live_server, raw: str) -> tuple[int, str | None]:
    answer = requests.post(f"{live_server.url}/auth/token", headers={"x-api-key": raw}, timeout=10)
    code = answer.json().get("error", {}).get("code") if answer.status_code != 200 else None
    return answer.status_code, code


def test_a_key_shows_its_secret_once_and_revoked_is_refused(
    browser, live_server, partner, default_seller
):
    staff_member("Partner management", "keys")
    browser.sign_in("keys")

    browser.open("/admin/sellers/apikey/add/", "add-key")
    browser.fill(
        {
            "partner": str(partner),
            "name": "Browser agency",
            "access_level": "Full transaction (book)",
            "agency_code": "BRWS01",
        }
    )
    browser.submit('input[name="_save"]', "key-issued")

    raw = browser.text("#issued-api-key")
    assert re.fullmatch(r"[0-9a-f]{12}\.[A-Za-z0-9_-]+", raw)
    key = ApiKey.objects.get(name="Browser agency")
    assert raw.startswith(key.prefix)
    assert token_status(live_server, raw) == (200, None)
    # A reload reads the page again (post/redirect/get): no secret, no second key.
    issued_path = browser.path
    browser.driver.refresh()
    browser.shot("key-reloaded")
    assert browser.path == issued_path
    assert raw.split(".")[1] not in browser.html
    assert ApiKey.objects.count() == 1
    # Shown once: not on the key's page, the list, a cookie, or the page reached back.
    secret = raw.split(".")[1]
    browser.open(f"/admin/sellers/apikey/{key.pk}/change/", "key-page")
    assert secret not in browser.html
    browser.open("/admin/sellers/apikey/", "key-list")
    assert secret not in browser.html
    assert not any(secret in c["value"] for c in browser.driver.get_cookies())

    browser.run_action("revoke", [key.pk], "key-revoked")

    assert browser.messages() == ["1 key(s) revoked."]
    key.refresh_from_db()
    assert not key.is_active
    assert token_status(live_server, raw) == (403, "ERR-8001")
    assert token_status(live_server, key.prefix + ".wrong") == (401, "ERR-8000")
