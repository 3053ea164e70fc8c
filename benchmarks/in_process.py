"""Requests made in this process through the WSGI application gunicorn serves (Wsgi), as
gunicorn makes them, and the bookings benchmarks.profile makes with them: priced round
trips on A320 nonstops, with a seat and a bag, an AcceptOffer of a seat, an NDC
OrderCreate paid by card."""

import json
import random
import sys
from datetime import UTC, datetime, timedelta
from io import BytesIO

from benchmarks.orders.bookings import (
    AMOUNT_DUE,
    PARTY,
    SURNAMES,
    booking_body,
    order_create_xml,
    round_trip_search,
    seat_and_bag,
)
from benchmarks.orders.seats import a320_markets, is_a320_nonstop


class Wsgi:
    """Requests to the WSGI application gunicorn serves, as gunicorn makes them."""

    def __init__(self) -> None:
        from airline.wsgi import application

        self.application = application
        self.headers: dict[str, str] = {}

    def __call__(
        self, method: str, path: str, body: bytes | dict | None = None, xml: bool = False
    ) -> tuple[int, bytes]:
        raw = body if isinstance(body, bytes) else b"" if body is None else json.dumps(body)
        raw = raw.encode() if isinstance(raw, str) else raw
        path, _, query = path.partition("?")
        environ = {
            "REQUEST_METHOD": method,
            "SCRIPT_NAME": "",
            "PATH_INFO": path,
            "QUERY_STRING": query,
            "SERVER_NAME": "127.0.0.1",
            "SERVER_PORT": "8000",
            "SERVER_PROTOCOL": "HTTP/1.1",
            "REMOTE_ADDR": "127.0.0.1",
            "HTTP_HOST": "127.0.0.1:8000",
            "CONTENT_TYPE": "application/xml" if xml else "application/json",
            "CONTENT_LENGTH": str(len(raw)),
            "wsgi.version": (1, 0),
            "wsgi.url_scheme": "http",
            "wsgi.input": BytesIO(raw),
            "wsgi.errors": sys.stderr,
            "wsgi.multithread": False,
            "wsgi.multiprocess": True,
            "wsgi.run_once": False,
            **self.headers,
        }
        status: list[int] = []

        def start_response(line: str, headers: list, exc_info=None) -> None:
            status.append(int(line.split()[0]))

        result = self.application(environ, start_response)
        try:
            answer = b"".join(result)
        finally:
            result.close()
        return status[0], answer


def prepare(app: Wsgi, wanted: int) -> list[dict]:
    """`wanted` priced round trips on A320 nonstops in economy, each a different
    market-day: {"selections" (the price request), "body" (a create order without its
    payment), "due" (the total)}."""
    markets = a320_markets()
    today = datetime.now(tz=UTC).date()
    rng = random.Random(40)
    out = []
    for k in range(wanted * 3):
        if len(out) == wanted:
            break
        origin, destination = markets[k % len(markets)]
        day = today + timedelta(days=5 + (k // len(markets)) * 17 % 280)
        status, raw = app(
            "POST", "/json/v1/offers", round_trip_search(origin, destination, day.isoformat())
        )
        if status != 201:
            continue
        chosen: dict = {}
        for offer in json.loads(raw)["data"]["offers"]:
            if is_a320_nonstop(offer):
                chosen.setdefault(offer["offerItems"][0]["legIndex"], offer)
        if len(chosen) != 2:
            continue
        selections = {
            "selections": [
                {"offerId": o["offerId"], "offerItemIds": [o["offerItems"][0]["offerItemId"]]}
                for _, o in sorted(chosen.items())
            ],
            "passengers": PARTY,
        }
        status, raw = app("POST", "/json/v1/offers/price", selections)
        if status != 201:
            continue
        priced = json.loads(raw)["data"]
        out.append(
            {
                "selections": selections,
                "body": booking_body(priced, rng.choice(SURNAMES)),
                "due": priced["offer"]["totalPrice"]["total"],
            }
        )
    if len(out) < wanted:
        raise SystemExit(f"only {len(out)} of {wanted} priced offers; cannot go on")
    return out


def with_ancillaries(app: Wsgi, bodies: list[dict]) -> list[dict]:
    """Each body with a standard seat for ADT-1 on the outbound and a first bag for ADT-2,
    from its offer's own seat map and service list."""
    rng = random.Random(41)
    out = []
    for body in bodies:
        asked = {"offerItemIds": body["offerItemIds"]}
        _, seats = app("POST", f"/json/v1/offers/{body['offerId']}/seats", asked)
        _, services = app("POST", f"/json/v1/offers/{body['offerId']}/services", asked)
        out.append({**body, "ancillaries": seat_and_bag(seats, services, rng)})
    return out


def seat_change(hold: dict, seat_map: dict) -> dict:
    """An AcceptOffer of an open seat on the hold's first leg for its lead passenger."""
    pax = hold["pax"][0]["paxId"]
    for deck in seat_map["legSeatMaps"][0]["decks"]:
        for compartment in deck["compartments"]:
            for unit in compartment["units"]:
                if unit["availability"] != "Open":
                    continue
                for row in unit.get("passengerPricing", []):
                    if row["paxRefId"] == pax:
                        designator = unit["designator"]
                        return {
                            "changes": [
                                {
                                    "type": "AcceptOffer",
                                    "offerId": seat_map["offerId"],
                                    "offerItemId": row["offerItemId"],
                                    "passengerIds": [pax],
                                    "seat": {"row": int(designator[:-1]), "column": designator[-1]},
                                }
                            ]
                        }
    raise SystemExit(f"no open seat on {hold['order']['orderId']}")


def order_create_xml_due(prepared: dict) -> bytes:
    """The booking as an OrderCreateRQ paid by card for its amount due."""
    AMOUNT_DUE[prepared["body"]["offerId"]] = prepared["due"]
    return order_create_xml(prepared["body"])
