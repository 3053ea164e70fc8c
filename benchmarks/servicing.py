"""Servicing benchmark. Run with `make bench` (or `python -m benchmarks.servicing`).

A real gunicorn (2 workers) on PostgreSQL and Redis (db 3) against a fresh scratch
database `airline_bench`, seeded with the demo airline; load from 8 client processes.
Each client books its own one-way card orders for one adult in the Nice bundle (which
allows changes), on many markets and days, then, phase after phase with every client
starting at one instant:

- create offers (POST /offers) and create order by card, the reference in the same run;
- reshop ReshopItinerary: replacement flights a day later for each order;
- quote order: the first replacement offer priced again;
- AcceptReshopOffer by card (PATCH /orders/{id}; a card whenever the quote is AddCol);
- reshop CancelOrder, then the cancellation committed (CancelJourney).

Server time per request (median, p95) comes from the service's own access-log line;
every answer that is not a success is counted and printed.
"""

import json
import os
import random
import time
from datetime import UTC, datetime, timedelta

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
from benchmarks.orders.bookings import CARD
from benchmarks.orders.load import call, json_headers, run_clients, server_times, wait_ready
from benchmarks.orders.sizes import CLIENTS

ORDERS_PER_CLIENT = tiny(15, 1)
ONE = [{"type": "ADT"}]
BUNDLE = "Nice"
PHASES = [
    ("co", "create offers (POST /offers)"),
    ("cr", "create order, card"),
    ("rs", "reshop ReshopItinerary"),
    ("qt", "quote order"),
    ("ax", "AcceptReshopOffer, card"),
    ("rc", "reshop CancelOrder"),
    ("cj", "cancel (CancelJourney)"),
]
TARGETS_MS = {"rs": 60, "qt": 40, "ax": 150, "cj": 100}  # p95


def main() -> None:
    started = time.monotonic()
    os.environ.setdefault("REDIS_URL", "redis://127.0.0.1:6379/3")
    raw_key, markets = bench_database_seeded("bench-servicing")

    server, port = start_gunicorn(workers=2, log_name="bench-servicing.log")
    log = log_path("bench-servicing.log")
    log.write_text("")
    failures: dict[str, list[str]] = {}
    try:
        wait_ready(port)
        auth = json_headers(port, raw_key)
        today = datetime.now(tz=UTC).date()
        rng = random.Random(15)
        tasks = [
            (*markets[k % len(markets)], (today + timedelta(days=9 + rng.randrange(200))))
            for k in range(CLIENTS * ORDERS_PER_CLIENT)
        ]
        per_client = [tasks[n::CLIENTS] for n in range(CLIENTS)]
        per_client = _phase(_book, port, auth, per_client, failures)
        per_client = _phase(_reshop, port, auth, per_client, failures)
        per_client = _phase(_quote, port, auth, per_client, failures)
        per_client = _phase(_accept, port, auth, per_client, failures)
        _phase(_cancel, port, auth, per_client, failures)
    finally:
        server.terminate()
        server.wait(timeout=15)

    times = server_times(log)
    rows = []
    for tag, name in PHASES:
        found = times.get(tag, [])
        target = TARGETS_MS.get(tag)
        rows.append(
            (
                name,
                str(len(found)),
                ms(median(found)) if found else "-",
                ms(p95(found)) if found else "-",
                f"<= {target} ms" if target else "",
            )
        )
    table(
        f"Servicing at {CLIENTS} clients: server time per request",
        ("request", "n", "median", "p95", "target p95"),
        rows,
    )
    for phase, failed in failures.items():
        if failed:
            print(f"\n{len(failed)} requests failed in {phase}, e.g. {failed[0]}")
    print(f"\n(whole benchmark {time.monotonic() - started:.0f} s)")
    write_figures("servicing")


def _phase(work, port: int, auth: dict, per_client: list[list], failures: dict) -> list[list]:
    """Every client runs `work` over its own items, all starting at one instant."""
    start_at = time.monotonic() + 0.3
    results = run_clients(_client, [(work, port, auth, items, start_at) for items in per_client])
    failures[work.__name__.strip("_")] = [f for r in results for f in r["failures"]]
    return [r["items"] for r in results]


def _client(work, port: int, auth: dict, items: list, start_at: float, results) -> None:
    time.sleep(max(0.0, start_at - time.monotonic()))
    done, failed = [], []
    for n, item in enumerate(items):
        try:
            done.append(work(port, auth, item, f"{os.getpid()}-{n}"))
        except _Failed as failure:
            failed.append(str(failure))
    results.put({"items": done, "failures": failed})


class _Failed(Exception):
    pass


def _ok(status: int, raw: bytes, *expected: int) -> dict:
    if status not in expected:
        raise _Failed(f"{status} {raw[:200]!r}")
    return json.loads(raw)["data"]


def _book(port: int, auth: dict, task: tuple, rid: str) -> dict:
    origin, destination, day = task
    search = {
        "originDestinations": [
            {"origin": origin, "destination": destination, "departureDate": day.isoformat()}
        ],
        "passengers": ONE,
    }
    found = _ok(*call(port, "POST", "/json/v1/offers", search, auth, f"co-{rid}"), 201)
    offer = next(
        (o for o in found["offers"] if o["offerItems"][0]["fare"]["bundleName"] == BUNDLE), None
    )
    if offer is None:
        raise _Failed(f"no {BUNDLE} offer {origin}-{destination} {day}")
    price = {
        "selections": [
            {"offerId": offer["offerId"], "offerItemIds": [offer["offerItems"][0]["offerItemId"]]}
        ],
        "passengers": ONE,
    }
    priced = _ok(*call(port, "POST", "/json/v1/offers/price", price, auth), 201)
    body = {
        "offerId": priced["offer"]["offerId"],
        "offerItemIds": [i["offerItemId"] for i in priced["offer"]["items"]],
        "passengers": [
            {
                "passengerId": "ADT-1",
                "type": "ADT",
                "name": {"givenName": "Ada", "surname": "Bench"},
            }
        ],
        "contact": {"emailAddress": "ada@example.com"},
        "payment": CARD,
    }
    order = _ok(*call(port, "POST", "/json/v1/orders", body, auth, f"cr-{rid}"), 201)
    return {
        "orderId": order["order"]["orderId"],
        "origin": origin,
        "destination": destination,
        "day": (day + timedelta(days=1)).isoformat(),
    }


def _reshop(port: int, auth: dict, order: dict, rid: str) -> dict:
    body = {
        "instruction": {
            "type": "ReshopItinerary",
            "originDestinations": [
                {
                    "origin": order["origin"],
                    "destination": order["destination"],
                    "departureDate": order["day"],
                }
            ],
        }
    }
    path = f"/json/v1/orders/{order['orderId']}/reshop"
    data = _ok(*call(port, "POST", path, body, auth, f"rs-{rid}"), 200)
    if not data["offers"]:
        raise _Failed(f"no replacement for {order['orderId']}")
    return {**order, "offer": data["offers"][0]}


def _quote(port: int, auth: dict, order: dict, rid: str) -> dict:
    offer = order["offer"]
    body = {"offerId": offer["offerId"], "offerItemIds": [i["offerItemId"] for i in offer["items"]]}
    path = f"/json/v1/orders/{order['orderId']}/quote"
    return {**order, "quote": _ok(*call(port, "POST", path, body, auth, f"qt-{rid}"), 200)}


def _accept(port: int, auth: dict, order: dict, rid: str) -> dict:
    quote = order["quote"]
    body = {
        "changes": [
            {
                "type": "AcceptReshopOffer",
                "offerId": quote["offer"]["offerId"],
                "offerItemIds": [i["offerItemId"] for i in quote["offer"]["items"]],
            }
        ]
    }
    if quote["priceDifferential"]["differentialTypeCode"] == "AddCol":
        body["payment"] = CARD
    path = f"/json/v1/orders/{order['orderId']}"
    _ok(*call(port, "PATCH", path, body, auth, f"ax-{rid}"), 200)
    return {"orderId": order["orderId"]}


def _cancel(port: int, auth: dict, order: dict, rid: str) -> dict:
    path = f"/json/v1/orders/{order['orderId']}"
    body = {"instruction": {"type": "CancelOrder"}}
    _ok(*call(port, "POST", path + "/reshop", body, auth, f"rc-{rid}"), 200)
    view = _ok(*call(port, "GET", path, None, auth), 200)
    live = {
        segment
        for item in view["order"]["items"]
        if item["statusCode"] == "CONFIRMED"
        for segment in item["segmentRefIds"]
    }
    journeys = [
        j["journeyId"] for j in view["journeys"] if {s["segmentId"] for s in j["segments"]} <= live
    ]
    changes = [{"type": "CancelJourney", "journeyRef": ref} for ref in journeys]
    _ok(*call(port, "PATCH", path, {"changes": changes}, auth, f"cj-{rid}"), 200)
    return order


if __name__ == "__main__":
    with scratch():
        main()
