"""seed_demo and create_api_key, whose output scripts rely on (DESIGN.md §10)."""

from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from sellers.keys import hash_key
from sellers.models import ApiKey, Partner, Seller
from tests.conftest import bearer, token_for

pytestmark = pytest.mark.django_db


def run(*args) -> str:
    out = StringIO()
    call_command(*args, stdout=out)
    return out.getvalue()


def test_seed_demo_creates_the_demo_partner_and_sellers_and_is_idempotent():
    run("seed_demo")
    first = list(Seller.objects.values_list("pk", "code", "is_default"))
    run("seed_demo")

    assert Partner.objects.get().code == "DEMO"
    assert list(Seller.objects.values_list("pk", "code", "is_default")) == first
    assert sorted((code, default) for _, code, default in first) == [
        ("DEMO1", True),
        ("DEMO2", False),
    ]


def test_create_api_key_prints_a_working_partner_key_last(api):
    run("seed_demo")

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


def test_create_api_key_with_every_option(api):
    run("seed_demo")

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
def test_create_api_key_refuses_bad_arguments(args, message):
    run("seed_demo")

    with pytest.raises(CommandError, match=message):
        run("create_api_key", *args)
    assert ApiKey.objects.count() == 0
