"""Seat maps of the largest aircraft and AcceptOffer (PATCH /orders/{orderId}) on holds:
the orders benchmark's servicing phases."""

import http.client
import json
import os
import random
import time
from datetime import UTC, datetime, timedelta

from benchmarks.orders.bookings import HOLD, PARTY, SURNAMES, booking_body, round_trip_search
from benchmarks.orders.load import call, load_requests, run_clients
from benchmarks.orders.sizes import A320_HOLDS_PER_CLIENT, A320_OFFERS_PER_CLIENT, CLIENTS

A320_CONFIGURATION = "C12Y138"  # the demo's largest aircraft: 150 seats


def ancillaries_bench(port: int, auth: dict) -> dict:
    """Priced offers and holds on A320 nonstops (searched, priced and booked by the
    clients, each hold's seat map and service list fetched), then the timed phases:
    seat maps of offers and orders, AcceptOffer of a seat, AcceptOffer of a bag."""
    markets = a320_markets()
    today = datetime.now(tz=UTC).date()
    rng = random.Random(11)
    wanted_offers = CLIENTS * A320_OFFERS_PER_CLIENT
    wanted_holds = CLIENTS * A320_HOLDS_PER_CLIENT
    tasks = []
    for k in range(int((wanted_offers + wanted_holds) * 1.5)):
        origin, destination = markets[k % len(markets)]
        day = today + timedelta(days=5 + (k // len(markets)) * 17 % 280)
        tasks.append((origin, destination, day.isoformat(), rng.choice(SURNAMES)))
    started = time.monotonic()
    # Each client prices its offers and books its holds; the first of each client's
    # tasks become its unbooked priced offers.
    results = run_clients(
        _a320_client,
        [(port, auth, tasks[n::CLIENTS], A320_OFFERS_PER_CLIENT) for n in range(CLIENTS)],
    )
    prep_seconds = time.monotonic() - started
    offers = [offer for r in results for offer in r["offers"]]
    holds = [r["holds"][:A320_HOLDS_PER_CLIENT] for r in results]
    failures = [f for r in results for f in r["failures"]]
    print(
        f"\n(A320: {len(offers)} priced offers and {sum(map(len, holds))} holds with their "
        f"seat maps and service lists prepared in {prep_seconds:.1f} s on {len(markets)} "
        f"markets; {len(failures)} tasks without: {sorted(set(failures))[:3]})"
    )
    if len(offers) < CLIENTS or min(map(len, holds)) < A320_HOLDS_PER_CLIENT // 2:
        raise SystemExit("too few A320 offers or holds; cannot go on")

    # Seat maps: a priced offer's and a hold's, one leg (the outbound item) and both.
    cases = [
        (
            "offer, 1 leg (outbound item)",
            "so1",
            [
                ("POST", f"/json/v1/offers/{o}/seats", {"offerItemIds": items[:1]})
                for o, items in offers
            ],
        ),
        (
            "offer, 2 legs (round trip)",
            "so2",
            [
                ("POST", f"/json/v1/offers/{o}/seats", {"offerItemIds": items})
                for o, items in offers
            ],
        ),
        (
            "order, 1 leg (outbound item)",
            "sr1",
            [
                (
                    "POST",
                    f"/json/v1/orders/{h['orderId']}/seats",
                    {"orderItemIds": h["itemIds"][:1]},
                )
                for hs in holds
                for h in hs
            ],
        ),
        (
            "order, 2 legs (no body: all items)",
            "sr2",
            [("POST", f"/json/v1/orders/{h['orderId']}/seats", {}) for hs in holds for h in hs],
        ),
    ]
    seat_maps = []
    for name, tag, requests in cases:
        method, path, body = requests[0]
        status, raw = call(port, method, path, body, auth)
        assert status == 200, (path, status, raw[:300])
        data = json.loads(raw)["data"]
        seats = [
            u
            for m in data["legSeatMaps"]
            for d in m["decks"]
            for c in d["compartments"]
            for u in c["units"]
        ]
        shape = {
            "legs": len(data["legSeatMaps"]),
            "equipment": sorted({m["equipmentType"] for m in data["legSeatMaps"]}),
            "units": len(seats),
            "open": sum(1 for u in seats if u["availability"] == "Open"),
            "kb": len(raw) / 1024,
        }
        rate = load_requests(port, requests, auth, tag)
        seat_maps.append((name, tag, shape, rate))

    # AcceptOffer: a seat per hold, handed out so that no two requests want one seat.
    taken: set[tuple] = set()
    unseated = 0
    for client_holds in holds:
        for hold in client_holds:
            hold["seat"] = None
            for designator, item_id in hold["units"]:
                if (*hold["leg"], designator) not in taken:
                    taken.add((*hold["leg"], designator))
                    hold["seat"] = (designator, item_id)
                    break
            unseated += hold["seat"] is None
    seat_changes = [
        [
            (
                h["orderId"],
                {
                    "changes": [
                        {
                            "type": "AcceptOffer",
                            "offerId": h["seatOfferId"],
                            "offerItemId": h["seat"][1],
                            "passengerIds": [h["pax"]],
                            "seat": {"row": int(h["seat"][0][:-1]), "column": h["seat"][0][-1]},
                        }
                    ]
                },
            )
            for h in client_holds
            if h["seat"] is not None
        ]
        for client_holds in holds
    ]
    bag_changes = [
        [(h["orderId"], {"changes": [h["bag"]]}) for h in client_holds if h["bag"] is not None]
        for client_holds in holds
    ]
    accepts = {
        "seat": accept_phase(port, auth, seat_changes, "as"),
        "bag": accept_phase(port, auth, bag_changes, "ab"),
    }
    if unseated:
        print(f"  ({unseated} holds found no seat left to hand out)")
    return {"seat_maps": seat_maps, "accepts": accepts}


def a320_markets() -> list[tuple[str, str]]:
    """Markets with an A320 (configuration C12Y138) nonstop, both ways."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT DISTINCT l.origin_id, l.destination_id FROM network_flightleg l "
            "JOIN network_seatconfiguration c ON c.id = l.configuration_id "
            "WHERE c.code = %s ORDER BY 1, 2",
            [A320_CONFIGURATION],
        )
        found = {tuple(row) for row in cursor.fetchall()}
    return sorted(m for m in found if m[::-1] in found)


def is_a320_nonstop(offer: dict) -> bool:
    flight = offer["offerItems"][0]["flight"]
    segments = flight["segments"]
    return (
        flight["stops"] == 0
        and all(s["cabinTypeCode"] == "Y" for s in segments)
        and all(leg["aircraftTypeCode"] == "320" for s in segments for leg in s["legs"])
    )


def _a320_client(port: int, auth: dict, tasks: list, unbooked: int, results) -> None:
    """Search and price a round trip on A320 nonstops in economy for each task; the first
    `unbooked` priced offers are kept as they are, the rest booked on hold, and each hold's
    seat map and service list fetched."""
    offers, holds, failures = [], [], []
    for origin, destination, day, surname in tasks:
        if len(holds) >= A320_HOLDS_PER_CLIENT:
            break
        search = round_trip_search(origin, destination, day)
        try:
            status, raw = call(port, "POST", "/json/v1/offers", search, auth)
            found = json.loads(raw)["data"]["offers"] if status == 201 else []
            chosen = {}
            for offer in found:
                if is_a320_nonstop(offer):
                    chosen.setdefault(offer["offerItems"][0]["legIndex"], offer)
            if len(chosen) != 2:
                failures.append("no A320 nonstop both ways")
                continue
            price = {
                "selections": [
                    {"offerId": o["offerId"], "offerItemIds": [o["offerItems"][0]["offerItemId"]]}
                    for _, o in sorted(chosen.items())
                ],
                "passengers": PARTY,
            }
            status, raw = call(port, "POST", "/json/v1/offers/price", price, auth)
            if status != 201:
                failures.append(f"price {status}")
                continue
            priced = json.loads(raw)["data"]
            if len(offers) < unbooked:
                items = [i["offerItemId"] for i in priced["offer"]["items"]]
                offers.append((priced["offer"]["offerId"], items))
                continue
            body = {**booking_body(priced, surname), "payment": HOLD}
            rid = f"ah-{os.getpid()}-{len(holds)}"
            status, raw = call(port, "POST", "/json/v1/orders", body, auth, rid)
            if status != 201:
                failures.append(f"book {status}")
                continue
            holds.append(_hold_for_changes(port, auth, json.loads(raw)["data"]))
        except (OSError, http.client.HTTPException, ValueError, KeyError) as exc:
            failures.append(repr(exc)[:80])
    results.put({"offers": offers, "holds": holds, "failures": failures})


def _hold_for_changes(port: int, auth: dict, booked: dict) -> dict:
    """What AcceptOffer needs of a hold: the lead adult's open seats on the first leg
    (with their offer items) and the CB1 item of the first journey for the same adult."""
    order_id = booked["order"]["orderId"]
    pax = booked["pax"][0]["paxId"]
    journey = booked["journeys"][0]["journeyId"]
    status, raw = call(port, "POST", f"/json/v1/orders/{order_id}/seats", {}, auth)
    assert status == 200, (status, raw[:300])
    seat_data = json.loads(raw)["data"]
    first = seat_data["legSeatMaps"][0]
    units = [
        (unit["designator"], row["offerItemId"])
        for deck in first["decks"]
        for compartment in deck["compartments"]
        for unit in compartment["units"]
        if unit["availability"] == "Open"
        for row in unit.get("passengerPricing", [])
        if row["paxRefId"] == pax
    ]
    status, raw = call(port, "POST", f"/json/v1/orders/{order_id}/services", {}, auth)
    assert status == 200, (status, raw[:300])
    service_data = json.loads(raw)["data"]
    bag = None
    for service in service_data["services"]:
        if service["serviceCode"] != "CB1":
            continue
        for availability in service["segmentAvailability"]:
            if availability.get("journeyRefId") != journey:
                continue
            for row in availability["passengerPricing"]:
                if row["paxRefId"] == pax:
                    bag = {
                        "type": "AcceptOffer",
                        "offerId": service_data["offerId"],
                        "offerItemId": row["offerItemId"],
                        "passengerIds": [pax],
                    }
    return {
        "orderId": order_id,
        "itemIds": [item["itemId"] for item in booked["order"]["items"]],
        "pax": pax,
        "seatOfferId": seat_data["offerId"],
        # The segment id is made of the flight-date legs' ids: the same on every order.
        "leg": (first["segmentRefId"], first["departureStation"]),
        "units": units,
        "bag": bag,
    }


def accept_phase(port: int, auth: dict, per_client: list[list], tag: str) -> dict:
    """Each client PATCHes its own orders one after another, all starting at one instant."""
    start_at = time.monotonic() + 0.3
    results = run_clients(
        _patch_client, [(port, auth, changes, tag, start_at) for changes in per_client]
    )
    finished = max(r["finished"] for r in results)
    done = sum(r["done"] for r in results)
    failures = [f for r in results for f in r["failures"]]
    if failures:
        print(f"  ({len(failures)} of {done + len(failures)} PATCHes in phase {tag} failed:")
        for failure in failures[:5]:
            print(f"    {failure}")
        print("  )")
    return {"done": done, "failures": failures, "rate": done / (finished - start_at)}


def _patch_client(port: int, auth: dict, changes: list, tag: str, start_at: float, results):
    time.sleep(max(0.0, start_at - time.monotonic()))
    done, failures = 0, []
    for n, (order_id, body) in enumerate(changes):
        try:
            status, raw = call(
                port, "PATCH", f"/json/v1/orders/{order_id}", body, auth, f"{tag}-{os.getpid()}-{n}"
            )
        except (OSError, http.client.HTTPException) as exc:
            failures.append(f"{order_id}: {exc!r}")
            continue
        if status == 200:
            done += 1
        else:
            failures.append(f"{order_id}: {status} {raw[:300]!r}")
    results.put({"done": done, "failures": failures, "finished": time.monotonic()})
