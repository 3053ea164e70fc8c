"""No API key or token in clear in the database or in any log line (DESIGN.md §5, §10)."""

import logging
from io import StringIO

import pytest
from django.core.management import call_command

from tests.conftest import bearer, token_for

pytestmark = [pytest.mark.django_db, pytest.mark.urls("tests.api.urls")]


def test_keys_and_tokens_appear_in_neither_the_database_nor_the_logs(
    api, caplog, capsys, default_seller
):
    caplog.set_level(logging.DEBUG)  # every logger, every level
    out = StringIO()
    call_command("create_api_key", "--partner", "ACME", "--name", "secret test", stdout=out)
    raw = out.getvalue().strip().splitlines()[-1]
    secret = raw.split(".", 1)[1]

    token = token_for(api, raw)
    api.get("/json/v1/whoami", **bearer(token))
    api.get("/json/v1/whoami", HTTP_X_API_KEY=raw)
    api.get("/json/v1/probe/crash", **bearer(token))  # an error logged with a traceback
    api.post("/auth/token", HTTP_X_API_KEY=raw + "x")  # a failed attempt
    api.get("/json/v1/whoami", HTTP_AUTHORIZATION=f"Bearer {token}x")

    dump = StringIO()
    call_command("dumpdata", stdout=dump)
    logged = (
        "\n".join(
            [caplog.text, *(r.getMessage() + str(getattr(r, "fields", "")) for r in caplog.records)]
        )
        + capsys.readouterr().err
    )

    assert caplog.records, "the requests above must have been logged"
    for value in (raw, secret, token):
        assert value not in dump.getvalue()
        assert value not in logged
