"""POST/GET/DELETE /json/{v}/webhooks and ping: the acting seller's endpoints, full keys
only, safe URLs only, the secret shown once (DESIGN.md §10)."""

import pytest

from tests.conftest import bearer, error_of, token_for
from tests.webhooks.conftest import register
from webhooks import addresses
from webhooks.models import WebhookDelivery, WebhookEndpoint

PUBLIC = "93.184.216.34"


@pytest.fixture
def auth(api, partner_key):
    return bearer(token_for(api, partner_key.raw))


@pytest.fixture
def resolves_to(monkeypatch):
    """Make every host name resolve to the given addresses (no DNS in tests)."""

    def set_addresses(*ips):
        monkeypatch.setattr(addresses, "resolve", lambda host, port: list(ips))

    return set_addresses


def test_it_registers_an_endpoint_and_shows_the_secret_once(api, auth, resolves_to, clock):
    resolves_to(PUBLIC)
    response = register(api, auth, "https://hooks.example.com/airline", events=["order.created"])

    assert response.status_code == 201, response.content
    created = response.json()["data"]
    assert created["webhookId"].startswith("whk_")
    assert created["secret"].startswith("whsec_")
    assert created["events"] == ["order.created"]
    assert created["active"] is True
    stored = WebhookEndpoint.objects.get(webhook_id=created["webhookId"])
    assert stored.secret == created["secret"]
    assert stored.seller.code == "ACME1"

    listed = api.get("/json/v1/webhooks", **auth).json()["data"]["webhooks"]
    assert [w["webhookId"] for w in listed] == [created["webhookId"]]
    assert "secret" not in listed[0]


def test_it_takes_loopback_http_only_when_the_setting_allows_it(api, auth, settings):
    settings.WEBHOOK_ALLOW_LOOPBACK = False
    error_of(register(api, auth, "http://127.0.0.1:8123/hooks"), 422, "ERR-1005", path="url")

    settings.WEBHOOK_ALLOW_LOOPBACK = True
    assert register(api, auth, "http://127.0.0.1:8123/hooks").status_code == 201


def test_it_refuses_plain_http_to_a_public_host(api, auth, settings, resolves_to):
    settings.WEBHOOK_ALLOW_LOOPBACK = True  # loopback only, never plain http elsewhere
    resolves_to(PUBLIC)
    error_of(register(api, auth, "http://hooks.example.com/"), 422, "ERR-1005", path="url")


@pytest.mark.parametrize(
    "url",
    [
        "https://127.0.0.1/hooks",
        "https://[::1]/hooks",
        "https://10.0.0.5/hooks",
        "https://192.168.1.20/hooks",
        "https://172.16.0.1/hooks",
        "https://169.254.169.254/latest/meta-data",  # the cloud metadata service
        "https://[fd00:ec2::254]/",  # its IPv6 twin
        "https://[::ffff:10.0.0.5]/",
        "https://100.64.0.1/",  # carrier-grade NAT, not public
        "https://0.0.0.0/",
        "https://[2002:7f00:1::]/",  # 6to4 of 127.0.0.1
        "https://[2002:a00:1::]/",  # 6to4 of 10.0.0.1
        "https://[2002:a9fe:a9fe::]/",  # 6to4 of the metadata service
        "https://[64:ff9b::a00:1]/",  # NAT64 of 10.0.0.1
        "https://hooks.example.com:0/",
        "https://hooks.example.com:65536/",
        "https://hooks.example.com/\r\nX-Injected: 1",
        "https://hooks.example.com/a\nb",
        "https://hooks.example.com/\tpath",
        "https://hooks.example.com/\x00",
        "https://hooks.example.com/\x7f",
        "https://hooks.example.com/a\x85b",  # a C1 control (NEL)
        "ftp://hooks.example.com/",
        "https://user:pw@hooks.example.com/",
        "not a url",
    ],
)
def test_it_refuses_urls_that_could_reach_our_own_network(api, auth, url, resolves_to):
    if "example.com" in url:
        resolves_to(PUBLIC)
    error_of(register(api, auth, url), 422, "ERR-1005", path="url")
    assert not WebhookEndpoint.objects.exists()


@pytest.mark.parametrize(
    "char",
    [
        "\u2028",  # LINE SEPARATOR (Zl)
        "\u2029",  # PARAGRAPH SEPARATOR (Zp)
        "\u200b",  # ZERO WIDTH SPACE (Cf)
        "\u200d",  # ZERO WIDTH JOINER (Cf)
        "\u202e",  # RIGHT-TO-LEFT OVERRIDE (Cf)
        "\ufeff",  # BYTE ORDER MARK (Cf)
        "\u00ad",  # SOFT HYPHEN (Cf)
        " ",  # SPACE (Zs)
        "\u00a0",  # NO-BREAK SPACE (Zs)
        "\u3000",  # IDEOGRAPHIC SPACE (Zs)
        "\ue000",  # private use (Co)
        "\U000f0000",  # supplementary private use (Co)
        "\u0378",  # unassigned (Cn)
        "\ufffe",  # a noncharacter (Cn)
    ],
)
@pytest.mark.parametrize("where", ["path", "host"])
def test_it_refuses_invisible_and_separator_characters(api, auth, resolves_to, char, where):
    resolves_to(PUBLIC)
    url = (
        f"https://hooks.example.com/a{char}b"
        if where == "path"
        else f"https://hooks{char}.example.com/a"
    )

    error = error_of(register(api, auth, url), 422, "ERR-1005", path="url")

    assert f"U+{ord(char):04X}" in error["description"]
    assert not WebhookEndpoint.objects.exists()


def test_a_surrogate_is_refused_too():
    # JSON cannot carry a lone surrogate to the API (the parser refuses the body); the
    # admin form and stored rows meet the same check.
    with pytest.raises(addresses.RefusedUrl, match="U\\+D800"):
        addresses.check_url("https://hooks.example.com/a\ud800b")


def test_printable_non_ascii_is_taken(api, auth, resolves_to, clock):
    resolves_to(PUBLIC)

    response = register(api, auth, "https://hooks.example.com/caf\u00e9/\u65e5\u672c")

    assert response.status_code == 201, response.content
    assert WebhookEndpoint.objects.get().url == "https://hooks.example.com/caf\u00e9/\u65e5\u672c"


@pytest.mark.parametrize("address", ["2002:7f00:1::", "2002:a00:1::", "64:ff9b::7f00:1"])
def test_it_refuses_a_name_that_resolves_to_a_translated_private_address(
    api, auth, resolves_to, settings, address
):
    # Loopback allowed or not: a translator reaching 127.0.0.1 is not the local receiver.
    settings.WEBHOOK_ALLOW_LOOPBACK = True
    resolves_to(PUBLIC, address)
    error = error_of(register(api, auth, "https://hooks.example.com/"), 422, "ERR-1005", path="url")
    assert "not a public address" in error["description"]
    assert not WebhookEndpoint.objects.exists()


def test_a_6to4_address_of_a_public_host_is_taken(api, auth, resolves_to, clock):
    resolves_to("2002:5db8:d822::")  # 6to4 of 93.184.216.34
    assert register(api, auth, "https://hooks.example.com/").status_code == 201


def test_it_refuses_a_name_that_resolves_to_a_private_address(api, auth, resolves_to):
    # One private address among public ones is enough to refuse: the client could be
    # handed any of them.
    resolves_to(PUBLIC, "10.1.2.3")
    error_of(register(api, auth, "https://hooks.example.com/"), 422, "ERR-1005", path="url")


def test_it_refuses_unknown_event_types_and_fields(api, auth, resolves_to):
    resolves_to(PUBLIC)
    url = "https://hooks.example.com/"
    error_of(register(api, auth, url, events=["order.exploded"]), 422, "ERR-1005")
    error_of(register(api, auth, url, secret="mine"), 422, "ERR-1005")


def test_a_read_only_key_may_not_register_list_or_delete(api, read_only_key, resolves_to):
    resolves_to(PUBLIC)
    auth = bearer(token_for(api, read_only_key.raw))
    error_of(register(api, auth, "https://hooks.example.com/"), 403, "ERR-8001")
    error_of(api.get("/json/v1/webhooks", **auth), 403, "ERR-8001")
    error_of(api.delete("/json/v1/webhooks/whk_x", **auth), 403, "ERR-8001")


def test_it_refuses_another_sellers_webhook(api, auth, seller_key, resolves_to, clock):
    resolves_to(PUBLIC)
    mine = register(api, auth, "https://hooks.example.com/").json()["data"]["webhookId"]
    other = bearer(token_for(api, seller_key.raw))  # acts as ACME2

    assert api.get("/json/v1/webhooks", **other).json()["data"]["webhooks"] == []
    error_of(api.delete(f"/json/v1/webhooks/{mine}", **other), 404, "ERR-1000")
    error_of(api.post(f"/json/v1/webhooks/{mine}/ping", **other), 404, "ERR-1000")
    assert WebhookEndpoint.objects.filter(webhook_id=mine, active=True).exists()
    assert not WebhookDelivery.objects.exists()


def test_a_deleted_endpoint_is_gone_for_the_seller_and_keeps_its_deliveries(
    api, auth, receiver, loopback_allowed, clock
):
    from webhooks.delivery import webhooks_deliver

    webhook_id = register(api, auth, receiver.url).json()["data"]["webhookId"]
    kept = register(api, auth, receiver.url).json()["data"]["webhookId"]
    api.post(f"/json/v1/webhooks/{webhook_id}/ping", **auth)
    assert webhooks_deliver()["delivered"] == 1
    api.post(f"/json/v1/webhooks/{webhook_id}/ping", **auth)  # still pending at the delete

    response = api.delete(f"/json/v1/webhooks/{webhook_id}", **auth)

    assert response.status_code == 200, response.content
    assert response.json()["data"] == {"webhookId": webhook_id}
    listed = api.get("/json/v1/webhooks", **auth).json()["data"]["webhooks"]
    assert [w["webhookId"] for w in listed] == [kept]
    error_of(api.post(f"/json/v1/webhooks/{webhook_id}/ping", **auth), 404, "ERR-1000")
    error_of(api.delete(f"/json/v1/webhooks/{webhook_id}", **auth), 404, "ERR-1000")
    endpoint = WebhookEndpoint.objects.get(webhook_id=webhook_id)
    assert (endpoint.active, endpoint.deleted_at) == (False, clock.at)
    statuses = WebhookDelivery.objects.filter(endpoint=endpoint).order_by("id")
    assert [d.status for d in statuses] == ["DELIVERED", "CANCELLED"]
    # The cancelled delivery is never sent, nor resent.
    assert webhooks_deliver() == {}
    assert len(receiver.received) == 1
    assert WebhookEndpoint.objects.get(webhook_id=kept).active is True


def test_a_ping_is_delivered_signed(api, auth, receiver, loopback_allowed, clock):
    from tests.webhooks.conftest import verifies
    from webhooks.delivery import webhooks_deliver

    created = register(api, auth, receiver.url).json()["data"]
    ping = api.post(f"/json/v1/webhooks/{created['webhookId']}/ping", **auth)
    assert ping.status_code == 200, ping.content

    assert webhooks_deliver() == {"delivered": 1, "retrying": 0, "failed": 0}

    [got] = receiver.received
    assert got.json["type"] == "ping"
    assert got.json["id"] == ping.json()["data"]["eventId"] == got.headers["Webhook-Id"]
    assert verifies(created["secret"], got)
