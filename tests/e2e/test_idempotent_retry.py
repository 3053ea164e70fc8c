"""A client whose connection dies after the server committed its change retries with the
same Idempotency-Key and gets the committed answer, not a second change (issue 28 item
8: after a crash 47 cancellations had committed and only 18 clients had seen a 200).

Real gunicorn: the client writes a whole PATCH and closes its socket before reading a
byte, as a client whose process or network dies does; the worker runs the change and
commits it regardless. The test waits for that commit in the database, then retries."""

import json
import socket
import time
from datetime import timedelta

import pytest
import requests

from airline.api.models import IdempotencyRecord
from orders.models import Order, OrderEvent, OrderStatus
from tests.e2e.servers import gunicorn, server_env_on_test_database, wait_until_ready
from tests.offers.conftest import network, search_body  # noqa: F401 (the network fixture)
from tests.orders.conftest import booking_body
from tests.sellers.factories import ApiKeyFactory, PartnerFactory, SellerFactory

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True, serialized_rollback=True)]

CANCEL = {"changes": [{"type": "CancelUnpaidOrder"}]}
KEY = "cancel-after-crash-1"


def send_and_hang_up(url: str, path: str, headers: dict[str, str], body: bytes) -> None:
    """Write one whole request, then close the connection without reading the answer."""
    host, port = url.removeprefix("http://").split(":")
    lines = [f"PATCH {path} HTTP/1.1", f"Host: {host}", f"Content-Length: {len(body)}"]
    lines += [f"{name}: {value}" for name, value in headers.items()]
    with socket.create_connection((host, int(port)), timeout=10) as sock:
        sock.sendall(("\r\n".join(lines) + "\r\n\r\n").encode() + body)
        # SO_LINGER 0: the close sends a reset, as a dead client's kernel would.
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")


def committed(order_id: str, within: float = 30.0) -> bool:
    """Poll the database until the change and its idempotency record are both committed."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        done = IdempotencyRecord.objects.filter(
            key=KEY, state=IdempotencyRecord.State.DONE
        ).exists()
        if done and Order.objects.get(order_id=order_id).status == OrderStatus.CANCELLED:
            return True
        time.sleep(0.02)  # polling another process's commit, not timing behaviour
    return False


def test_a_retry_after_a_dropped_connection_answers_the_committed_change(tmp_path, network):  # noqa: F811
    partner = PartnerFactory()
    SellerFactory(partner=partner, is_default=True)
    issued = ApiKeyFactory(partner=partner, requests_per_minute=100_000)

    with gunicorn(server_env_on_test_database(), tmp_path / "server.log", workers=2) as server:
        assert wait_until_ready(server).status_code == 200
        token = requests.post(
            server.url + "/auth/token", headers={"x-api-key": issued.raw}, timeout=10
        ).json()["access_token"]
        auth = {"Authorization": f"Bearer {token}"}
        day = network + timedelta(days=5)
        offers = requests.post(
            server.url + "/json/v1/offers",
            json=search_body(("PVD", "CHS", day), passengers=[{"type": "ADT"}]),
            headers=auth,
            timeout=30,
        ).json()["data"]["offers"]
        priced = requests.post(
            server.url + "/json/v1/offers/price",
            json={
                "selections": [
                    {
                        "offerId": offers[0]["offerId"],
                        "offerItemIds": [offers[0]["offerItems"][0]["offerItemId"]],
                    }
                ],
                "passengers": [{"type": "ADT"}],
            },
            headers=auth,
            timeout=30,
        )
        assert priced.status_code == 201, priced.text
        booked = requests.post(
            server.url + "/json/v1/orders",
            json=booking_body(priced.json()["data"]),
            headers=auth,
            timeout=30,
        )
        assert booked.status_code == 201, booked.text
        order_id = booked.json()["data"]["order"]["orderId"]
        path = f"/json/v1/orders/{order_id}"
        headers = {**auth, "Content-Type": "application/json", "Idempotency-Key": KEY}

        send_and_hang_up(server.url, path, headers, json.dumps(CANCEL).encode())
        assert committed(order_id), server.output()
        retry = requests.patch(server.url + path, json=CANCEL, headers=headers, timeout=30)
        again = requests.patch(server.url + path, json=CANCEL, headers=headers, timeout=30)
        fresh = requests.patch(server.url + path, json=CANCEL, headers=auth, timeout=30)

    assert retry.status_code == 200, retry.text
    assert retry.headers["Idempotent-Replayed"] == "true"
    assert retry.json()["data"]["order"]["statusCode"] == OrderStatus.CANCELLED
    assert again.content == retry.content
    # One change: one cancellation event; a request without the key is a new one, and
    # the order it would cancel is cancelled already.
    assert (
        OrderEvent.objects.filter(
            order__order_id=order_id, kind=OrderEvent.Kind.HOLD_CANCELLED
        ).count()
        == 1
    )
    assert fresh.status_code == 400
    assert fresh.json()["error"]["code"] == "ERR-4002"
