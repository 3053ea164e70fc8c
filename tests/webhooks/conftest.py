"""A real webhook receiver (http.server on 127.0.0.1, an ephemeral port, in a thread),
loopback URLs allowed, and helpers to register endpoints and verify signatures."""

import hashlib
import hmac
import json
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from tests.orders import conftest as booking

# The booking tests' network, bearer headers and priced offer serve these tests too.
network = booking.network
auth = booking.auth
travel_day = booking.travel_day
priced = booking.priced


@dataclass
class Received:
    headers: dict[str, str]
    body: bytes
    answered: int

    @property
    def json(self) -> dict:
        return json.loads(self.body)


@dataclass
class Receiver:
    """Answers each POST with the next of `statuses` (then 200), and keeps what it got."""

    url: str
    statuses: list[int] = field(default_factory=list)
    received: list[Received] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def answer(self, headers: dict[str, str], body: bytes) -> int:
        with self.lock:
            status = self.statuses.pop(0) if self.statuses else 200
            self.received.append(Received(headers, body, status))
            return status

    def delivered(self) -> list[Received]:
        return [r for r in self.received if 200 <= r.answered < 300]


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    box: dict[str, Receiver] = {}

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self):
            body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
            status = box["r"].answer(dict(self.headers.items()), body)
            self.send_response(status)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *args):  # quiet test output
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    box["r"] = Receiver(url=f"http://127.0.0.1:{server.server_port}/hooks")
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield box["r"]
    server.shutdown()
    server.server_close()


@pytest.fixture
def loopback_allowed(settings):
    settings.WEBHOOK_ALLOW_LOOPBACK = True


def verifies(secret: str, received: Received) -> bool:
    """What a seller's receiver does (README "## Webhooks")."""
    timestamp = received.headers["Webhook-Timestamp"]
    expected = hmac.new(
        secret.encode(), timestamp.encode() + b"." + received.body, hashlib.sha256
    ).hexdigest()
    return hmac.compare_digest(received.headers["Webhook-Signature"], "v1=" + expected)


def register(api, auth, url, **extra):
    return api.post("/json/v1/webhooks", {"url": url, **extra}, format="json", **auth)
