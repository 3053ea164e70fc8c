"""Card bookings on the two payment gateways. Run with `make bench` (or
`python -m benchmarks.payments`).

Three gunicorns (2 workers each) on one scratch database `airline_bench` seeded with the
demo airline: one with the test gateway, two with orders.money.payments.StripeGateway against
the fake Stripe server (tests/fakestripe.py) on a loopback port, one with
STRIPE_CAPTURE "automatic" (the default: two calls to the provider per booking, the
PaymentIntent with the card in it, then confirm, which captures) and one with "manual"
(three: and capture at ticketing, inside the booking's transaction), where the test
gateway writes one ledger row. 8 clients book priced round trips by card (2 ADT + 1 CHD),
phases taking turns between the three servers, REPEATS of each, the others idle while
one is timed. Reported: create order by card, server time (median, p95, from each
server's own access-log line), Stripe beside the test gateway; target (for the default)
p95 <= 1.3x the test gateway's. Before the bookings, what provider calls cost on the
otherwise idle machine (`provider_call_floor`: one call, and a booking's two): the floor
of Stripe's share.
"""

import http.client
import os
import time
import urllib.parse

from benchmarks.common import (
    bench_database_seeded,
    log_path,
    median,
    ms,
    p95,
    scratch,
    start_gunicorn,
    table,
    tiny,
    write_figures,
)
from benchmarks.orders.bookings import CARD, prepare_offers
from benchmarks.orders.load import json_headers, server_times, wait_ready
from benchmarks.orders.scenarios import book_phase
from benchmarks.orders.sizes import CLIENTS

REPEATS = tiny(2, 1)
ORDERS_PER_CLIENT = tiny(15, 1)  # per phase
TARGET = 1.3
STRIPE_SERVERS = {"stripe": "automatic", "stripe-manual": "manual"}


def main() -> None:
    os.environ.setdefault("REDIS_URL", "redis://127.0.0.1:6379/3")
    raw_key, markets = bench_database_seeded("bench-payments")
    from tests.e2e.servers import free_port
    from tests.fakestripe import fake_stripe
    from tests.gateways import stripe_settings

    with fake_stripe(free_port()) as provider:
        floor = provider_call_floor(provider)
        servers = {"test": start_gunicorn(workers=2, log_name="bench-pay-test.log")}
        for name, capture in STRIPE_SERVERS.items():
            env = {
                key: str(value) for key, value in stripe_settings(provider, capture=capture).items()
            }
            servers[name] = start_gunicorn(workers=2, log_name=f"bench-pay-{name}.log", env=env)
        try:
            for _, port in servers.values():
                wait_ready(port)
            port = servers["test"][1]
            auth = json_headers(port, raw_key)
            per_phase = CLIENTS * ORDERS_PER_CLIENT
            warmup = CLIENTS * 2
            prepared = prepare_offers(
                port, auth, markets, len(servers) * (REPEATS * per_phase + warmup)
            )
            for name, (process, server_port) in servers.items():
                book_phase(server_port, auth, prepared[:warmup], CARD, f"warm-{name}", process.pid)
                prepared = prepared[warmup:]
            failures = 0
            for _ in range(REPEATS):
                for name, (process, server_port) in servers.items():
                    phase = book_phase(
                        server_port, auth, prepared[:per_phase], CARD, f"card-{name}", process.pid
                    )
                    prepared = prepared[per_phase:]
                    failures += len(phase["failures"])
        finally:
            for process, _ in servers.values():
                process.terminate()
                process.wait(timeout=30)

    # Each server's own log: the timed phases' requests are tagged "card".
    times = {name: server_times(log_path(f"bench-pay-{name}.log"))["card"] for name in servers}
    labels = {
        "test": "test gateway",
        "stripe": "Stripe SDK -> fake Stripe, STRIPE_CAPTURE=automatic (2 calls)",
        "stripe-manual": "Stripe SDK -> fake Stripe, STRIPE_CAPTURE=manual (3 calls)",
    }
    table(
        f"Create order by card, server time, {CLIENTS} clients",
        ("gateway", "orders", "median", "p95"),
        [
            (labels[name], len(times[name]), ms(median(times[name])), ms(p95(times[name])))
            for name in servers
        ],
    )
    table(
        f"Provider calls, the machine otherwise idle: {FLOOR_CALLS} retrieves, interleaved; "
        f"{FLOOR_BOOKINGS} create + confirm",
        ("how", "median", "client CPU"),
        [
            ("Stripe SDK (StripeGateway's client)", ms(floor["sdk"]), ms(floor["sdk_cpu"])),
            ("bare http.client (the fake server's time + loopback)", ms(floor["bare"]), "-"),
            ("a booking's two calls by the SDK (create, confirm)", ms(floor["booking"]), "-"),
        ],
    )
    ratio = p95(times["stripe"]) / p95(times["test"])
    verdict = "ok" if ratio <= TARGET else "over target"
    manual = p95(times["stripe-manual"]) / p95(times["test"])
    notes = [
        "Floor of the default's median over the test gateway's, from its two calls alone: "
        f"{(median(times['test']) + floor['booking']) / median(times['test']):.2f}",
        f"Stripe (automatic, the default) p95 / test gateway p95: {ratio:.2f} "
        f"(target <= {TARGET}: {verdict})",
        f"Stripe (manual) p95 / test gateway p95: {manual:.2f}",
    ]
    if failures:
        notes.append(f"{failures} bookings failed")
    print("\n".join(f"  {note}" for note in notes))
    write_figures("payments", notes)


FLOOR_CALLS = tiny(200, 10)
FLOOR_BOOKINGS = tiny(50, 2)


def provider_call_floor(provider) -> dict[str, float]:
    """What one call to the fake provider costs before any booking load: the same
    PaymentIntent retrieved FLOOR_CALLS times through Stripe's SDK and by a bare
    http.client request, interleaved (seconds; the SDK's CPU in this process). The
    difference between the booking medians above and these is waiting for the cores."""
    from orders.money.payments import _stripe_client

    client = _stripe_client(provider.api_key, provider.url, 5.0)
    card = {"number": "4242424242424242", "exp_month": 12, "exp_year": 2040, "cvc": "123"}

    def card_intent(**options):  # a PaymentIntent with the card in it, as a booking's
        return client.v1.payment_intents.create(
            params={
                "amount": 1000,
                "currency": "usd",
                "payment_method_data": {"type": "card", "card": card},
                "payment_method_types": ["card"],
                "capture_method": "automatic",
            },
            options=options,
        )

    intent = card_intent()
    address = urllib.parse.urlparse(provider.url)
    connection = http.client.HTTPConnection(address.hostname, address.port, timeout=5)
    headers = {"Authorization": f"Bearer {provider.api_key}"}

    def bare() -> None:
        connection.request("GET", f"/v1/payment_intents/{intent.id}", headers=headers)
        connection.getresponse().read()

    def sdk() -> None:
        client.v1.payment_intents.retrieve(intent.id)

    for _ in range(20):  # connections open, code paths warm
        bare()
        sdk()
    bare_times, sdk_times, sdk_cpu = [], [], []
    for _ in range(FLOOR_CALLS):
        started = time.perf_counter()
        bare()
        bare_times.append(time.perf_counter() - started)
        cpu, started = time.process_time(), time.perf_counter()
        sdk()
        sdk_times.append(time.perf_counter() - started)
        sdk_cpu.append(time.process_time() - cpu)
    connection.close()
    # A booking's own two calls: the intent with the card in it, then confirm (which
    # charges and, with automatic capture, captures).
    booking_times = []
    for n in range(FLOOR_BOOKINGS):
        started = time.perf_counter()
        created = card_intent(idempotency_key=f"floor-{os.getpid()}-{n}")
        client.v1.payment_intents.confirm(created.id)
        booking_times.append(time.perf_counter() - started)
    return {
        "sdk": median(sdk_times),
        "sdk_cpu": median(sdk_cpu),
        "bare": median(bare_times),
        "booking": median(booking_times),
    }


if __name__ == "__main__":
    with scratch():
        main()
