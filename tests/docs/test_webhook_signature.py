"""The signature check the partners' webhook page gives (docs/partners/webhooks.md
"Verifying signatures") accepts what the service signs and refuses the rest: the page's
Python block is run as written against the signer deliveries use."""

import re
import time
from pathlib import Path

from webhooks.delivery import signature

REPO = Path(__file__).resolve().parents[2]
PAGE = REPO / "docs" / "partners" / "webhooks.md"
SECRET = "whsec_test"
BODY = b'{"id": "evt_1", "type": "ping"}'


def pages_check():
    section = PAGE.read_text().split("## Verifying signatures", 1)[1]
    code = re.search(r"^```python\n(.*?)^```$", section, flags=re.S | re.M).group(1)
    scope: dict = {}
    exec(compile(code, str(PAGE), "exec"), scope)  # noqa: S102  (our own manual's code)
    return scope["webhook_is_genuine"]


def signed(timestamp: int, body: bytes = BODY) -> dict[str, str]:
    stamp = str(timestamp)
    return {"Webhook-Timestamp": stamp, "Webhook-Signature": signature(SECRET, stamp, body)}


def test_it_accepts_a_request_the_service_signed():
    assert pages_check()(SECRET, signed(int(time.time())), BODY)


def test_it_refuses_another_body_another_secret_or_no_signature():
    check = pages_check()
    now = int(time.time())
    assert not check(SECRET, signed(now), BODY + b" ")
    assert not check("whsec_other", signed(now), BODY)
    assert not check(SECRET, {"Webhook-Timestamp": str(now)}, BODY)


def test_it_refuses_a_replay_older_than_five_minutes():
    check = pages_check()
    now = 1_800_000_000
    assert check(SECRET, signed(now - 299), BODY, now=now)
    assert not check(SECRET, signed(now - 301), BODY, now=now)
