"""CPU and statements per hold and per card booking in process, side by side (not
collected by the suite: not test_*.py).

Run through pytest, on the test network and fixtures (tests/orders/conftest.py):

    AIRLINE_ENV=test DATABASE_URL=... REDIS_URL=... .venv/bin/pytest -q -s \
        tests/orders/profile_bookings.py  (env BOOKINGS=N a kind a round,
        BOOKINGS_SQL=1 to list one booking's statements of each kind)

Each booking (round trip, 2 ADT + 1 CHD; payment Hold or CreditCard on the test gateway)
is a raw WSGI call of POST /json/v1/orders, as in tests/orders/profile_holds.py, each on
an offer of its own priced before any timing. The two kinds take turns, round by round
(hold first, then card first), so a busy machine weighs on both alike. Reports, per kind,
the median over the rounds of CPU ms per booking (getrusage), PostgreSQL's CPU per
booking (its backend's, from /proc, when it runs on this machine), wall ms and
statements per booking (besides BEGIN, COMMIT and the health check's SELECT 1).
"""

import json
import os
import resource
import statistics
import time
from datetime import timedelta

import pytest
from django.core.handlers.wsgi import WSGIHandler
from django.db.models import F

from airline.network.models import LegInventory
from tests.conftest import statements_sent
from tests.orders.conftest import CARD, HOLD, booking_body, price_offer
from tests.orders.profile_holds import _backend_cpu_reader, _environ

ROUNDS = 5
KINDS = {"hold": HOLD, "card": CARD}


@pytest.mark.django_db(transaction=True, serialized_rollback=True)
def test_bookings_profile(api, auth, network, partner_key):
    count = int(os.environ.get("BOOKINGS", "20"))
    # Room for every request of the run in the key's minute (pricing included).
    partner_key.key.requests_per_minute = 1_000_000
    partner_key.key.save(update_fields=["requests_per_minute"])
    # Room for every booking in every class: the test network's classes are small.
    LegInventory.objects.update(authorized=F("authorized") + 100_000)
    day = network + timedelta(days=5)
    offers = [
        price_offer(api, auth, day + timedelta(days=n % 20), back=day + timedelta(days=25))
        for n in range(len(KINDS) * (count * ROUNDS + 1))
    ]
    app = WSGIHandler()
    header = auth["HTTP_AUTHORIZATION"]

    def book(payment) -> None:
        body = json.dumps(booking_body(offers.pop(), payment=payment)).encode()
        status = []
        out = app(_environ(body, header), lambda s, h, *a: status.append(s))
        answer = b"".join(out)
        out.close()
        assert status[0].startswith("201"), (status, answer)

    for payment in KINDS.values():
        book(payment)  # warm caches
    backend = _backend_cpu_reader()
    figures = {kind: {"cpu": [], "database": [], "wall": [], "statements": []} for kind in KINDS}
    last: dict[str, list[str]] = {}
    for r in range(ROUNDS):
        for kind in list(KINDS)[:: 1 if r % 2 == 0 else -1]:
            with statements_sent() as sent:
                t0, w0, b0 = (
                    resource.getrusage(resource.RUSAGE_SELF),
                    time.perf_counter(),
                    backend(),
                )
                for _ in range(count):
                    book(KINDS[kind])
                t1, w1, b1 = (
                    resource.getrusage(resource.RUSAGE_SELF),
                    time.perf_counter(),
                    backend(),
                )
            cpu = t1.ru_utime - t0.ru_utime + t1.ru_stime - t0.ru_stime
            figures[kind]["cpu"].append(cpu * 1000 / count)
            figures[kind]["database"].append((b1 - b0) * 1000 / count)
            figures[kind]["wall"].append((w1 - w0) * 1000 / count)
            figures[kind]["statements"].append(len(sent) / count)
            last[kind] = sent[-len(sent) // count :]
    for kind, measured in figures.items():
        median = {name: statistics.median(values) for name, values in measured.items()}
        print(
            f"\n{kind}: CPU {median['cpu']:.2f} ms/booking (rounds "
            f"{', '.join(f'{c:.2f}' for c in measured['cpu'])}), PostgreSQL CPU "
            f"{median['database']:.2f} ms, wall {median['wall']:.2f} ms, statements "
            f"{median['statements']:.1f}/booking"
        )
    if os.environ.get("BOOKINGS_SQL"):
        for kind, statements in last.items():
            print(f"\n{kind}, one booking's statements:")
            for sql in statements:
                print(" ", sql[:200])
