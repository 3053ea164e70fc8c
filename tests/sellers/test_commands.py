"""create_api_key, whose output scripts rely on (DESIGN.md §10)."""

from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from sellers.keys import hash_key
from sellers.models import ApiKey
from sellers.services import partner_ensure, seller_ensure
from tests.conftest import bearer, token_for

pytestmark = pytest.mark.django_db


def run(*args) -> str:
    out = StringIO()
    call_command(*args, stdout=out)
    return out.getvalue()


@pytest.fixture
def demo_partner(db):
    """What seed_demo creates of sellers (its full run: tests/network/test_seed_demo.py)."""
    partner = partner_ensure(code="DEMO", name="Demo Travel Partner")
    seller_ensure(partner=partner, code="DEMO1", name="Demo Travel Online", is_default=True)
    seller_ensure(partner=partner, code="DEMO2", name="Demo Travel Business")
    return partner


def test_create_api_key_prints_a_working_partner_key_last(api, demo_partner):
    output = run("create_api_key", "--partner", "DEMO")

    raw = output.strip().splitlines()[-1]
    key = ApiKey.objects.get()
    assert key.secret_hash == hash_key(raw)
    assert (key.seller, key.access_level, key.agency_code, key.requests_per_minute) == (
        None,
        "full",
        "",
        600,
    )
    sellers = api.get("/auth/sellers", HTTP_X_API_KEY=raw).json()
    assert [s["sellerCode"] for s in sellers] == ["DEMO1", "DEMO2"]


def test_create_api_key_with_every_option(api, demo_partner):
    raw = (
        run(
            "create_api_key",
            "--partner",
            "demo",
            "--seller",
            "DEMO2",
            "--access",
            "read",
            "--agency",
            "agt42",
            "--rate",
            "30",
            "--name",
            "Reports",
        )
        .strip()
        .splitlines()[-1]
    )

    key = ApiKey.objects.get()
    assert (
        key.seller.code,
        key.access_level,
        key.agency_code,
        key.requests_per_minute,
        key.name,
    ) == ("DEMO2", "read", "AGT42", 30, "Reports")
    whoami = api.get("/json/v1/whoami", **bearer(token_for(api, raw))).json()["data"]
    assert whoami["sellerCode"] == "DEMO2"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--partner", "NOPE"], "No partner"),
        (["--partner", "DEMO", "--seller", "NOPE"], "has no seller"),
        (["--partner", "DEMO", "--agency", "WAY-TOO-LONG-CODE"], "Agency code"),
        (["--partner", "DEMO", "--rate", "0"], "at least 1"),
    ],
)
def test_create_api_key_refuses_bad_arguments(args, message, demo_partner):
    with pytest.raises(CommandError, match=message):
        run("create_api_key", *args)
    assert ApiKey.objects.count() == 0
