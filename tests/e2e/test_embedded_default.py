"""`make run`'s configuration on a bare machine: SQLite under the var dir and the database
cache, no DATABASE_URL or REDIS_URL, served by real gunicorn processes."""

from datetime import UTC, datetime, timedelta

import pytest
import requests

from tests.e2e.servers import base_env, gunicorn, manage, wait_until_ready
from tests.orders.conftest import booking_body

pytestmark = pytest.mark.e2e


def test_the_embedded_default_serves_health_tokens_shopping_pricing_and_orders(tmp_path):
    env = base_env(AIRLINE_ENV="development", AIRLINE_VAR_DIR=str(tmp_path))
    manage(env, "migrate", "--noinput")
    manage(env, "seed_demo")
    assert "already loaded" in manage(env, "seed_demo")  # idempotent
    raw = manage(env, "create_api_key", "--partner", "DEMO", "--agency", "SMOKE").splitlines()[-1]
    assert (tmp_path / "airline.sqlite3").exists()

    with (
        gunicorn(env, tmp_path / "a.log", workers=2) as first,
        gunicorn(env, tmp_path / "b.log", workers=1) as second,
    ):
        health = wait_until_ready(first)
        wait_until_ready(second)
        token_response = requests.post(
            first.url + "/auth/token", headers={"x-api-key": raw}, timeout=5
        )
        token = token_response.json()["access_token"]
        auth = {"Authorization": f"Bearer {token}"}
        calls = [
            requests.get(first.url + "/json/v1/whoami", headers=auth, timeout=5) for _ in range(3)
        ]
        day = (datetime.now(tz=UTC) + timedelta(days=14)).date().isoformat()
        search = requests.post(
            first.url + "/json/v1/offers",
            json={
                "originDestinations": [
                    {"origin": "PVD", "destination": "MSY", "departureDate": day}
                ],
                "passengers": [{"type": "ADT"}, {"type": "INF"}],
            },
            headers=auth,
            timeout=10,
        )
        offer = search.json()["data"]["offers"][0]
        # Priced by another process: the offer store is shared (the database cache here).
        quote = requests.post(
            second.url + "/json/v1/offers/price",
            json={
                "selections": [
                    {
                        "offerId": offer["offerId"],
                        "offerItemIds": [offer["offerItems"][0]["offerItemId"]],
                    }
                ],
                "passengers": [{"type": "ADT"}, {"type": "INF"}],
            },
            headers=auth,
            timeout=10,
        )
        booked = requests.post(
            second.url + "/json/v1/orders",
            json=booking_body(quote.json()["data"]),
            headers=auth,
            timeout=10,
        )
        order = booked.json()["data"]
        listed = requests.get(
            first.url + "/json/v1/orders",
            params={"lastName": "LOVELACE", "origin": "pvd"},
            headers=auth,
            timeout=10,
        )
        retrieved = requests.get(
            first.url + f"/json/v1/orders/{order['order']['recordLocator']}",
            headers=auth,
            timeout=10,
        )

    assert health.status_code == 200
    assert health.json()["status"] == "ok"
    assert token_response.status_code == 200
    assert [c.status_code for c in calls] == [200] * 3
    assert calls[0].json()["data"]["sellerCode"] == "DEMO1"
    assert calls[0].json()["data"]["agencyCode"] == "SMOKE"
    # One request counter for every worker of both servers, kept in the database.
    assert [int(c.headers["X-RateLimit-Remaining"]) for c in calls] == [598, 597, 596]
    assert search.status_code == 201
    assert offer["offerItems"][0]["flight"]["stops"] == 1  # PVD-MSY is served by connections only
    assert quote.status_code == 201, quote.text
    assert quote.json()["data"]["offer"]["totalPrice"] == offer["totalPrice"]
    assert booked.status_code == 201, booked.text
    assert retrieved.json()["data"] == order
    journey = order["journeys"][0]
    assert listed.json()["data"]["orders"] == [
        {
            "orderId": order["order"]["orderId"],
            "recordLocator": order["order"]["recordLocator"],
            "statusCode": "ONHOLD",
            "departureDate": journey["departureDateTime"][:10],
            "flightNumber": journey["segments"][0]["marketingFlightNumber"],
            "origin": "PVD",
            "destination": "MSY",
            "sourceOrganizationCode": "SMOKE",
            "passengerName": {"givenName": "Ada", "surname": "Lovelace"},
        }
    ]
    for server in (first, second):
        assert raw not in server.output()
        assert token not in server.output()
