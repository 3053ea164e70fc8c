"""A fake Stripe for the tests and `make bench`: localstripe (a stateful fake of Stripe's
API, from PyPI) on a loopback port, spoken to with Stripe's own SDK by
orders.money.payments.StripeGateway, never mocked inside our process.

localstripe covers PaymentMethods, PaymentIntents (create, confirm, capture, cancel),
refunds and signed webhooks. Where it falls short of Stripe, the narrowest stand-in is
added here, each named (README "Payments"):

- idempotency keys: localstripe ignores `Idempotency-Key`; a middleware answers a key
  seen before with the first answer, as Stripe does (a concurrent duplicate waits for it).
  Stripe forgets a key after 24 hours; the fake keeps them until
  `POST /_config/stand_in/forget_keys`, which stands for those hours passing;
- the test cards' decline codes: localstripe declines a charge only for 4000000000000341;
  here Stripe's documented test cards decline with Stripe's codes (generic decline,
  insufficient funds, expired card, incorrect CVC, processing error);
- refunds over the charge: localstripe refunds any amount; here, as at Stripe, a refund
  of more than the charge has left is refused (400);
- American Express: localstripe takes only 16-digit numbers and 3-digit CVCs;
- `payment_method_data` on PaymentIntent create (the card given with the intent, as
  StripeGateway does): localstripe takes only a `payment_method` id; here the card
  becomes a PaymentMethod first, as Stripe does;
- the store: localstripe pickles its whole store to /tmp/localstripe.pickle on every
  write (slower with every object, and shared by every instance on the machine); kept in
  memory here;
- a slow provider: `POST /_config/stand_in/delay {path, seconds}` answers the requests whose path
  matches the regular expression late, after doing their work (`seconds=0` clears it);
- disputes: localstripe has none; tests post a `charge.dispute.created` event signed with
  the webhook secret, as Stripe would send it;
- `charge.refunded`: localstripe sends none when a refund is made; tests make the refund
  through the fake's API (as the dashboard would) and post the event signed, its object
  the charge as the fake holds it.

Run: `python -m tests.fakestripe --port N` (prints "ready" once it listens).
"""

import argparse
import asyncio
import re
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

# Stripe's test cards that decline, and how (https://docs.stripe.com/testing#declined-payments).
DECLINES = {
    "4000000000000002": ("card_declined", "generic_decline", "Your card was declined."),
    "4000000000009995": (
        "card_declined",
        "insufficient_funds",
        "Your card has insufficient funds.",
    ),
    "4000000000000069": ("expired_card", "expired_card", "Your card has expired."),
    "4000000000000127": (
        "incorrect_cvc",
        "incorrect_cvc",
        "Your card's security code is incorrect.",
    ),
    "4000000000000119": (
        "processing_error",
        "processing_error",
        "An error occurred while processing your card. Try again in a little bit.",
    ),
}
STAND_IN_NUMBER = "4242424242424242"


def _patch_localstripe() -> None:
    """The stand-ins above that live inside localstripe's resources."""
    from localstripe import resources
    from localstripe.errors import UserError

    resources.Store.dump_to_disk = lambda self: None
    resources.Store.try_load_from_disk = lambda self: None

    card_init = resources.PaymentMethod.__init__

    def payment_method_init(self, type=None, card=None, **kwargs):
        real = dict(card) if isinstance(card, dict) else None
        if real and (len(str(real.get("number", ""))) == 15 or len(str(real.get("cvc", ""))) == 4):
            card = {**real, "number": STAND_IN_NUMBER, "cvc": "123"}
        card_init(self, type=type, card=card, **kwargs)
        if card is not real and real is not None:
            self._card_number = real["number"]
            self.card["last4"] = real["number"][-4:]
            self.card["fingerprint"] = resources.fingerprint(real["number"])

    resources.PaymentMethod.__init__ = payment_method_init

    intent_init = resources.PaymentIntent.__init__

    def payment_intent_init(self, payment_method_data=None, **kwargs):
        if payment_method_data is not None:
            if kwargs.get("payment_method"):
                raise UserError(400, "Pass payment_method or payment_method_data, not both")
            if not isinstance(payment_method_data, dict):
                raise UserError(400, "Bad request")
            kwargs["payment_method"] = resources.PaymentMethod._api_create(**payment_method_data).id
        intent_init(self, **kwargs)

    resources.PaymentIntent.__init__ = payment_intent_init

    refund_init = resources.Refund.__init__

    def refund_within_the_charge(self, charge=None, payment_intent=None, amount=None, **kwargs):
        held = None
        try:
            if isinstance(payment_intent, str):
                held = resources.PaymentIntent._api_retrieve(payment_intent).latest_charge
            elif isinstance(charge, str):
                held = resources.Charge._api_retrieve(charge)
        except UserError:
            pass  # localstripe answers what is not found, or malformed
        wanted = resources.try_convert_to_int(amount)
        if held is not None and getattr(held, "captured", False):
            left = held.amount - (held.amount_refunded or 0)
            if left <= 0 or (isinstance(wanted, int) and wanted > left):
                raise UserError(
                    400,
                    f"Refund amount ({wanted}) is greater than unrefunded amount on charge "
                    f"({left})",
                )
        refund_init(self, charge=charge, payment_intent=payment_intent, amount=amount, **kwargs)

    resources.Refund.__init__ = refund_within_the_charge

    charging_declined = resources.PaymentMethod._charging_is_declined
    resources.PaymentMethod._charging_is_declined = lambda self: (
        getattr(self, "_card_number", None) in DECLINES or charging_declined(self)
    )

    def set_auth_failure(self):
        number = resources.PaymentMethod._api_retrieve(self.payment_method)._card_number
        code, decline, message = DECLINES.get(
            number, ("card_declined", "generic_decline", "Your card was declined.")
        )
        self.status = "failed"
        self.failure_code, self._decline_code, self.failure_message = code, decline, message

    def raise_failure(self):
        raise UserError(
            402,
            self.failure_message,
            {
                "code": self.failure_code,
                "decline_code": getattr(self, "_decline_code", None),
                "charge": self.id,
                "type": "card_error",
            },
        )

    resources.Charge._set_auth_failure = set_auth_failure
    resources.Charge._raise_failure = raise_failure

    # UserError always says invalid_request_error; a card error says card_error.
    user_error_init = UserError.__init__

    def user_error(self, code, message=None, contents=None):
        user_error_init(self, code, message, contents)
        if code == 402:
            self.body["error"]["type"] = "card_error"

    UserError.__init__ = user_error


def _app():
    _patch_localstripe()
    from aiohttp import web
    from localstripe.errors import UserError
    from localstripe.server import app

    answered: dict[str, tuple[int, bytes, str]] = {}
    in_flight: dict[str, asyncio.Future] = {}
    delays: dict[str, float] = {}

    @web.middleware
    async def idempotency(request, handler):
        key = request.headers.get("Idempotency-Key")
        if request.method != "POST" or not key:
            return await handler(request)
        scoped = f"{request.headers.get('Authorization', '')} {key}"
        if scoped in in_flight:
            await asyncio.shield(in_flight[scoped])
        if scoped in answered:
            status, body, content_type = answered[scoped]
            response = web.Response(status=status, body=body, content_type=content_type)
            response.headers["Idempotent-Replayed"] = "true"
            return response
        in_flight[scoped] = asyncio.get_running_loop().create_future()
        try:
            try:
                response = await handler(request)
            except UserError as error:  # a decline is answered again as a decline
                response = error.to_response()
            # Stripe keeps the answer to a key unless it was a server error.
            if response.status < 500 and isinstance(response, web.Response):
                answered[scoped] = (response.status, response.body, response.content_type)
            return response
        finally:
            in_flight.pop(scoped).set_result(None)

    @web.middleware
    async def slow(request, handler):
        response = await handler(request)
        for pattern, seconds in list(delays.items()):
            if re.search(pattern, request.path):
                await asyncio.sleep(seconds)
        return response

    async def set_delay(request):
        data = await request.post()
        seconds = float(data.get("seconds", "0"))
        if seconds > 0:
            delays[data["path"]] = seconds
        else:
            delays.pop(data.get("path", ""), None)
        return web.Response(text="ok")

    async def forget_keys(request):
        answered.clear()
        return web.Response(text="ok")

    # localstripe's error middleware comes first; ours run inside it, around the handler,
    # so a replayed answer is the first one, errors included.
    app.middlewares.append(slow)
    app.middlewares.append(idempotency)
    app.router.add_post("/_config/stand_in/delay", set_delay)
    app.router.add_post("/_config/stand_in/forget_keys", forget_keys)
    return app


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--host", default="127.0.0.1")
    args = parser.parse_args()
    from aiohttp import web

    app = _app()
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((args.host, args.port))

    async def ready(_app) -> None:
        print("ready", flush=True)

    app.on_startup.append(ready)
    web.run_app(app, sock=sock, access_log=None, print=None)


@dataclass
class FakeStripe:
    """A running fake Stripe: its base URL and the keys to talk to it."""

    url: str
    api_key: str = "sk_test_fake"
    webhook_secret: str = "whsec_fake"

    def delay(self, path: str, seconds: float) -> None:
        """Answer requests whose path matches `path` `seconds` late (0: on time again)."""
        import requests

        requests.post(
            self.url + "/_config/stand_in/delay", data={"path": path, "seconds": seconds}, timeout=5
        ).raise_for_status()

    def forget_idempotency_keys(self) -> None:
        """Forget every idempotency key, as Stripe does 24 hours after a key's first use."""
        import requests

        requests.post(self.url + "/_config/stand_in/forget_keys", timeout=5).raise_for_status()

    def register_webhook(self, url: str, events: list[str] | None = None) -> None:
        """Have the fake send its events to `url`, signed with `webhook_secret`."""
        import requests

        data = {"url": url, "secret": self.webhook_secret}
        if events:
            data["events[]"] = events
        requests.post(self.url + "/_config/webhooks/ours", data=data, timeout=5).raise_for_status()

    def post(self, path: str, **data) -> dict:
        """A POST to the fake's API, as someone in Stripe's dashboard would make it."""
        import requests

        answer = requests.post(
            self.url + path,
            data=data,
            headers={"Authorization": f"Bearer {self.api_key}"},
            timeout=10,
        )
        answer.raise_for_status()
        return answer.json()

    def get(self, path: str, **params) -> dict:
        """A GET of the fake's API, as the tests' own eye on the provider's books."""
        import requests

        answer = requests.get(
            self.url + path,
            params=params,
            headers={"Authorization": f"Bearer {self.api_key}"},
            timeout=10,
        )
        answer.raise_for_status()
        return answer.json()


@contextmanager
def fake_stripe(port: int, *, log=None) -> Iterator[FakeStripe]:
    """The fake Stripe server in a child process on 127.0.0.1:`port`, until the block ends."""
    process = subprocess.Popen(
        [sys.executable, "-m", "tests.fakestripe", "--port", str(port)],
        stdout=subprocess.PIPE,
        stderr=log or subprocess.DEVNULL,
        text=True,
    )
    try:
        deadline = time.monotonic() + 30
        line = process.stdout.readline()
        if line.strip() != "ready" or time.monotonic() > deadline:
            raise RuntimeError(f"the fake Stripe server did not start: {line!r}")
        yield FakeStripe(url=f"http://127.0.0.1:{port}")
    finally:
        process.terminate()
        process.wait(timeout=10)


if __name__ == "__main__":
    main()
