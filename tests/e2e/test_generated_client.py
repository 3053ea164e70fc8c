"""A generated client lives on our OpenAPI document (issue 25 item 5): openapi-python-client
generates a client from the document a live server serves (/json/v1/schema), and a whole
journey runs through it against that server (real gunicorn, PostgreSQL, Redis): token,
search flat and by journey, price, seat maps and services of the offer, create a hold and
a card order with seats and bags, retrieve by id and by locator, list, seat maps and
services of a booking, confirm the hold, name change, reshop itinerary, quote, accept,
cancel with refund and with credit, an airline-initiated change (a schedule load retiming
a flight) accepted, and the webhook endpoints.

Every request body goes through the generated request model (`from_dict`, then the
generated call's own `to_dict`), and every answer is parsed by the generated models. The
test asserts, over the whole journey, that:

- the generator ran without a warning (a warning means a piece of the client is missing);
- every answer has the status the journey expects and parses into its success model;
- nothing is dropped: each model's `to_dict()` equals the raw JSON answer (and each
  request model's `to_dict()` equals the body it was built from);
- nothing is untyped: no model anywhere in a parsed answer holds `additional_properties`
  (a field the document does not declare is reachable only as a loose property).

Every failure of the journey is collected and reported at once."""

import importlib
import json
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from pathlib import Path
from typing import Any

import attrs
import pytest
import requests

from tests.e2e.servers import gunicorn, server_env_on_test_database, wait_until_ready
from tests.offers.conftest import network  # noqa: F401  (the small test network)
from tests.orders.conftest import CARD
from tests.orders.test_airline_changes import RETIMED_101, reload
from tests.sellers.factories import ApiKeyFactory, SellerFactory

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True, serialized_rollback=True)]

GENERATOR = Path(sys.executable).parent / "openapi-python-client"
PACKAGE = "airline_client"
AGENCY = "GENCLI"


def generate(schema: bytes, where: Path) -> Any:
    """The client openapi-python-client generates from `schema`, imported."""
    (where / "schema.json").write_bytes(schema)
    # No post hooks: formatting the generated code is not what is tested.
    (where / "config.yaml").write_text("post_hooks: []\n")
    result = subprocess.run(
        [
            str(GENERATOR),
            "generate",
            "--path",
            "schema.json",
            "--output-path",
            PACKAGE,
            "--meta",
            "none",
            "--config",
            "config.yaml",
        ],
        cwd=where,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    assert "warning" not in output.lower(), output
    sys.path.insert(0, str(where))
    try:
        return importlib.import_module(PACKAGE)
    finally:
        sys.path.remove(str(where))


def _same_instant(a: str, b: str) -> bool:
    """A date-time the client re-renders (`Z` as `+00:00`) is the same value."""
    try:
        return datetime.fromisoformat(a) == datetime.fromisoformat(b)
    except ValueError:
        return False


def differences(raw: Any, rendered: Any, path: str = "") -> list[str]:
    """Where `rendered` (a model's to_dict()) differs from `raw` (the JSON answer)."""
    if isinstance(raw, dict) and isinstance(rendered, dict):
        found = [f"{path}.{k}: dropped" for k in raw.keys() - rendered.keys()]
        found += [f"{path}.{k}: added" for k in rendered.keys() - raw.keys()]
        for key in raw.keys() & rendered.keys():
            found += differences(raw[key], rendered[key], f"{path}.{key}")
        return found
    if isinstance(raw, list) and isinstance(rendered, list):
        if len(raw) != len(rendered):
            return [f"{path}: {len(raw)} entries, {len(rendered)} rendered"]
        pairs = enumerate(zip(raw, rendered, strict=True))
        return [d for i, (a, b) in pairs for d in differences(a, b, f"{path}[{i}]")]
    # True == 1 in Python, not in JSON.
    same = raw is rendered if bool in (type(raw), type(rendered)) else raw == rendered
    if same:
        return []
    if isinstance(raw, str) and isinstance(rendered, str) and _same_instant(raw, rendered):
        return []
    return [f"{path}: {raw!r} rendered as {rendered!r}"]


def untyped(model: Any, path: str = "") -> list[str]:
    """Paths of fields a parsed answer holds only as loose `additional_properties`."""
    if isinstance(model, list):
        return [p for item in model for p in untyped(item, path)]
    if not attrs.has(type(model)):
        return []
    found = [f"{path}.{k}" for k in getattr(model, "additional_properties", {})]
    for attribute in attrs.fields(type(model)):
        if attribute.name != "additional_properties":
            found += untyped(getattr(model, attribute.name), f"{path}.{attribute.name}")
    return found


@dataclass
class Journey:
    """Calls the generated client and keeps every failure, so that one run reports them all."""

    failures: list[str] = field(default_factory=list)
    last: Any = None  # the last HTTP answer, kept by an httpx event hook

    def keep(self, response: Any) -> None:
        response.read()
        self.last = response

    @property
    def httpx_args(self) -> dict[str, Any]:
        return {"event_hooks": {"response": [self.keep]}}

    def body(self, model: type, data: dict[str, Any]) -> Any:
        """`data` as the generated request model, which must keep all of it."""
        built = model.from_dict(data)
        for problem in differences(data, built.to_dict()):
            self.failures.append(f"{model.__name__} request: {problem}")
        return built

    def call(self, name: str, operation: Callable, success: type, status: int, **kwargs) -> Any:
        """The raw JSON answer of `operation`, after checking its parsed model. The journey
        goes on after a failure (on the raw answer), so that one run finds them all."""
        try:
            response = operation.sync_detailed(**kwargs)
        except Exception as exc:  # a model that cannot parse the answer
            self.failures.append(f"{name}: the generated models failed: {exc!r}")
            raw = self.last.json()
            return raw.get("data") if isinstance(raw, dict) else raw
        raw = json.loads(response.content)
        if response.status_code != status or not isinstance(response.parsed, success):
            self.failures.append(f"{name}: {response.status_code} {raw}")
            return None
        parsed = response.parsed
        rendered = [p.to_dict() for p in parsed] if isinstance(parsed, list) else parsed.to_dict()
        self.failures += [f"{name} dropped {d}" for d in differences(raw, rendered)]
        self.failures += [f"{name} untyped {p}" for p in untyped(response.parsed)]
        return raw.get("data", raw) if isinstance(raw, dict) else raw


def seat_pick(seat_maps: dict, pax_id: str) -> dict:
    """An open seat `pax_id` may buy on the first seat map, as an ancillary entry."""
    for deck in seat_maps["legSeatMaps"][0]["decks"]:
        for compartment in deck["compartments"]:
            for unit in compartment["units"]:
                for row in unit.get("passengerPricing", []):
                    if unit["availability"] == "Open" and row["paxRefId"] == pax_id:
                        designator = unit["designator"]
                        return {
                            "offerId": seat_maps["offerId"],
                            "offerItemId": row["offerItemId"],
                            "passengerIds": [pax_id],
                            "seat": {"row": int(designator[:-1]), "column": designator[-1]},
                        }
    raise AssertionError(f"no open seat for {pax_id}")


def bag_pick(services: dict, pax_id: str, code: str = "CB1") -> dict:
    [service] = [s for s in services["services"] if s["serviceCode"] == code]
    row = next(
        r for r in service["segmentAvailability"][0]["passengerPricing"] if r["paxRefId"] == pax_id
    )
    return {
        "offerId": services["offerId"],
        "offerItemId": row["offerItemId"],
        "passengerIds": [pax_id],
    }


def live_journeys(view: dict) -> list[str]:
    """The journeys of the order's live (CONFIRMED) flight items."""
    segments = {
        s
        for i in view["order"]["items"]
        if i["statusCode"] == "CONFIRMED"
        for s in i["segmentRefIds"]
    }
    return [
        j["journeyId"]
        for j in view["journeys"]
        if {s["segmentId"] for s in j["segments"]} & segments
    ]


def passengers_of(priced: dict) -> list[dict]:
    names = iter([("Ada", "Lovelace"), ("Charles", "Babbage"), ("Mary", "Somerville")])
    return [
        {
            "passengerId": p["paxId"],
            "type": p["ptc"],
            "name": dict(zip(("givenName", "surname"), next(names), strict=True)),
        }
        for p in priced["pax"]
    ]


def test_a_generated_client_books_and_services_a_journey_end_to_end(network, tmp_path):  # noqa: F811
    start: date = network
    seller = SellerFactory(code="GEN1", is_default=True)
    key = ApiKeyFactory(partner=seller.partner, agency_code=AGENCY, requests_per_minute=10**6)
    env = {**server_env_on_test_database(), "WEBHOOK_ALLOW_LOOPBACK": "1"}

    with gunicorn(env, tmp_path / "server.log", workers=1) as server:
        assert wait_until_ready(server).status_code == 200
        document = requests.get(
            server.url + "/json/v1/schema",
            headers={"Accept": "application/vnd.oai.openapi+json"},
            timeout=30,
        )
        assert document.status_code == 200
        assert document.json()["servers"] == [{"url": server.url, "description": "This service"}]
        generated = generate(document.content, tmp_path)
        failures = run_journey(generated, server.url, key.raw, start, tmp_path)

    # Issue 25 item 3 (part A's branch): until reshop and quote answers stop declaring a
    # required segment `statusCode` they never carry, exactly two failures are expected
    # here: "reshop itinerary" and "quote", KeyError('statusCode'). Nothing else fails.
    assert failures == [], "\n".join(failures)


def run_journey(generated, url: str, raw_key: str, start: date, tmp_path: Path) -> list[str]:
    m = importlib.import_module(f"{PACKAGE}.models")
    auth, shopping, ancillaries, orders, webhooks = (
        importlib.import_module(f"{PACKAGE}.api.{tag}")
        for tag in ("auth", "shopping", "ancillaries", "orders", "webhooks")
    )
    journey = Journey()
    anonymous = generated.Client(
        base_url=url, raise_on_unexpected_status=True, httpx_args=journey.httpx_args
    )
    imp = importlib.import_module
    op = {
        name: imp(f"{PACKAGE}.api.{module.__name__.rsplit('.', 1)[1]}.{name}")
        for module, names in (
            (auth, ("create_token", "list_sellers", "who_am_i")),
            (shopping, ("create_offers", "create_offers_by_journey", "price_offers")),
            (
                ancillaries,
                ("offer_seat_maps", "offer_services", "order_seat_maps", "order_services"),
            ),
            (
                orders,
                (
                    "create_order",
                    "list_orders",
                    "retrieve_order",
                    "change_order",
                    "reshop_order",
                    "quote_order",
                ),
            ),
            (webhooks, ("create_webhook", "list_webhooks", "ping_webhook", "delete_webhook")),
        )
        for name in names
    }

    # The token: the key in x-api-key, on a client with no bearer token.
    token = journey.call(
        "token", op["create_token"], m.TokenResponse, 200, client=anonymous, x_api_key=raw_key
    )
    assert token is not None, journey.failures
    journey.call("sellers", op["list_sellers"], list, 200, client=anonymous, x_api_key=raw_key)
    client = generated.AuthenticatedClient(
        base_url=url,
        token=token["access_token"],
        raise_on_unexpected_status=True,
        httpx_args=journey.httpx_args,
    )
    call = journey.call
    call("whoami", op["who_am_i"], m.WhoAmIEnvelope, 200, client=client)

    # Webhooks: register (loopback allowed on this server), list, ping, delete.
    hook = call(
        "create webhook",
        op["create_webhook"],
        m.WebhookEnvelope,
        201,
        client=client,
        body=journey.body(
            m.WebhookInRequest, {"url": "http://127.0.0.1:9/hooks", "events": ["order.created"]}
        ),
    )
    call("list webhooks", op["list_webhooks"], m.WebhookListEnvelope, 200, client=client)
    if hook:
        call(
            "ping webhook",
            op["ping_webhook"],
            m.WebhookPingEnvelope,
            200,
            client=client,
            webhook_id=hook["webhookId"],
        )
        call(
            "delete webhook",
            op["delete_webhook"],
            m.WebhookDeletedEnvelope,
            200,
            client=client,
            webhook_id=hook["webhookId"],
        )

    def priced_trip(outbound: date, back: date | None, *, party: int, bundle: str = "Nice") -> dict:
        directions = [("PVD", "CHS", outbound)] + ([("CHS", "PVD", back)] if back else [])
        search = {
            "originDestinations": [
                {"origin": o, "destination": d, "departureDate": day.isoformat()}
                for o, d, day in directions
            ],
            "passengers": [{"type": "ADT"}] * party,
            "currency": "USD",
        }
        found = call(
            "search",
            op["create_offers"],
            m.FlatOffersEnvelope,
            201,
            client=client,
            body=journey.body(m.SearchInRequest, search),
        )
        call(
            "search by journey",
            op["create_offers_by_journey"],
            m.ByJourneyOffersEnvelope,
            201,
            client=client,
            body=journey.body(m.SearchInRequest, search),
        )
        flights = {0: "MX101", 1: "MX102"}
        selections = []
        for leg_index in range(len(directions)):
            offer = next(
                o
                for o in found["offers"]
                if o["offerItems"][0]["legIndex"] == leg_index
                and o["offerItems"][0]["flight"]["flightNumbers"] == [flights[leg_index]]
                and o["offerItems"][0]["fare"]["bundleName"] == bundle
            )
            selections.append(
                {
                    "offerId": offer["offerId"],
                    "offerItemIds": [offer["offerItems"][0]["offerItemId"]],
                }
            )
        body = journey.body(
            m.PriceInRequest, {"selections": selections, "passengers": search["passengers"]}
        )
        return call(
            "price", op["price_offers"], m.PricedOfferEnvelope, 201, client=client, body=body
        )

    def book(priced: dict, payment: dict, *, extras: bool) -> dict:
        items = [i["offerItemId"] for i in priced["offer"]["items"]]
        body = {
            "offerId": priced["offer"]["offerId"],
            "offerItemIds": items,
            "passengers": passengers_of(priced),
            "contact": {"emailAddress": "ada@example.com", "phoneNumber": "+1 401 555 0123"},
            "payment": payment,
        }
        if extras:
            ancillary = {"offerItemIds": items}
            seat_maps = call(
                "offer seat maps",
                op["offer_seat_maps"],
                m.SeatMapsEnvelope,
                200,
                client=client,
                offer_id=priced["offer"]["offerId"],
                body=journey.body(m.AncillaryInRequest, ancillary),
            )
            services = call(
                "offer services",
                op["offer_services"],
                m.ServiceListEnvelope,
                200,
                client=client,
                offer_id=priced["offer"]["offerId"],
                body=journey.body(m.AncillaryInRequest, ancillary),
            )
            lead = priced["pax"][0]["paxId"]
            body["ancillaries"] = [seat_pick(seat_maps, lead), bag_pick(services, lead)]
        return call(
            "create order",
            op["create_order"],
            m.OrderViewEnvelope,
            201,
            client=client,
            body=journey.body(m.CreateOrderInRequest, body),
        )

    def change(name: str, order_id: str, body: dict) -> dict:
        return call(
            name,
            op["change_order"],
            m.OrderViewEnvelope,
            200,
            client=client,
            order_id=order_id,
            body=journey.body(m.PatchedChangeOrderInRequest, body),
        )

    def reshop(name: str, order_id: str, instruction: dict) -> dict:
        return call(
            name,
            op["reshop_order"],
            m.ReshopEnvelope,
            200,
            client=client,
            order_id=order_id,
            body=journey.body(m.ReshopInRequest, {"instruction": instruction}),
        )

    def cancel(name: str, order_id: str) -> dict:
        quoted = reshop(f"{name} quote", order_id, {"type": "CancelOrder"})
        view = call(
            "retrieve",
            op["retrieve_order"],
            m.OrderViewEnvelope,
            200,
            client=client,
            order_id=order_id,
        )
        changes = [{"type": "CancelJourney", "journeyRef": j} for j in live_journeys(view)]
        cancelled = change(name, order_id, {"changes": changes})
        return {"quote": quoted["cancellation"], "view": cancelled}

    far, near = start + timedelta(days=10), start + timedelta(days=3)

    # A hold with a seat and a bag: retrieve, list, confirm, rename, cancel with refund.
    held = book(priced_trip(far, far + timedelta(days=3), party=2), {"type": "Hold"}, extras=True)
    held_id = held["order"]["orderId"]
    assert held["order"]["statusCode"] == "ONHOLD"
    assert {s["category"] for s in held["services"]} >= {"seat", "baggage"}
    call(
        "retrieve by id",
        op["retrieve_order"],
        m.OrderViewEnvelope,
        200,
        client=client,
        order_id=held_id,
    )
    call(
        "retrieve by locator",
        op["retrieve_order"],
        m.OrderViewEnvelope,
        200,
        client=client,
        order_id=held["order"]["recordLocator"],
    )
    listed = call(
        "list", op["list_orders"], m.OrderListEnvelope, 200, client=client, organization_code=AGENCY
    )
    assert held_id in {o["orderId"] for o in listed["orders"]}
    confirmed = change(
        "confirm hold", held_id, {"changes": [{"type": "ConfirmHold"}], "payment": CARD}
    )
    assert confirmed["order"]["statusCode"] == "CONFIRMED"
    order_body = journey.body(
        m.OrderAncillaryInRequest, {"orderItemIds": [confirmed["order"]["items"][0]["itemId"]]}
    )
    call(
        "order seat maps",
        op["order_seat_maps"],
        m.SeatMapsEnvelope,
        200,
        client=client,
        order_id=held_id,
        body=order_body,
    )
    call(
        "order services",
        op["order_services"],
        m.ServiceListEnvelope,
        200,
        client=client,
        order_id=held_id,
        body=order_body,
    )
    pax = confirmed["pax"][1]["paxId"]
    fee = reshop(
        "name change quote", held_id, {"type": "NameChange", "paxRefId": pax, "surname": "Byron"}
    )
    rename = {
        "changes": [
            {
                "type": "UpdatePassenger",
                "passengerId": pax,
                "patch": {"name": {"givenName": "Ada", "surname": "Byron"}},
            }
        ]
    }
    if fee["nameChange"]["fee"]["amount"] > 0:
        rename["payment"] = CARD
    renamed = change("name change", held_id, rename)
    assert renamed["pax"][1]["name"]["surname"] == "Byron"
    refunded = cancel("cancel with refund", held_id)
    assert refunded["quote"]["refundAmount"]["amount"] > 0, refunded
    assert refunded["view"]["order"]["statusCode"] == "CANCELLED"

    # A card order with a seat and a bag: reshop to another day, quote, accept; then
    # cancel inside 7 days of departure, for airline credit (DESIGN.md §7, Nice).
    paid = book(priced_trip(near, None, party=1), CARD, extras=True)
    paid_id = paid["order"]["orderId"]
    reshopped = reshop(
        "reshop itinerary",
        paid_id,
        {
            "type": "ReshopItinerary",
            "originDestinations": [
                {
                    "origin": "PVD",
                    "destination": "CHS",
                    "departureDate": (near + timedelta(days=1)).isoformat(),
                }
            ],
            "deleteOrderItemRefIds": [paid["order"]["items"][0]["itemId"]],
        },
    )
    offer = reshopped["offers"][0]
    quoted = call(
        "quote",
        op["quote_order"],
        m.QuoteEnvelope,
        200,
        client=client,
        order_id=paid_id,
        body=journey.body(
            m.QuoteInRequest,
            {
                "offerId": offer["offerId"],
                "offerItemIds": [i["offerItemId"] for i in offer["items"]],
            },
        ),
    )
    accept = {
        "changes": [
            {
                "type": "AcceptReshopOffer",
                "offerId": quoted["offer"]["offerId"],
                "offerItemIds": [i["offerItemId"] for i in quoted["offer"]["items"]],
            }
        ]
    }
    if quoted["priceDifferential"]["differentialTypeCode"] == "AddCol":
        accept["payment"] = CARD
    exchanged = change("accept reshop offer", paid_id, accept)
    assert exchanged["order"]["statusCode"] == "CONFIRMED"
    credited = cancel("cancel with credit", paid_id)
    assert credited["quote"]["creditAmount"]["amount"] > 0, credited
    assert credited["view"]["credits"], credited["view"]

    # An airline-initiated change: a schedule load retimes MX101; the seller accepts it.
    moved = book(priced_trip(far + timedelta(days=5), None, party=1), CARD, extras=False)
    reload(tmp_path, start, f101=RETIMED_101)
    view = call(
        "retrieve after the load",
        op["retrieve_order"],
        m.OrderViewEnvelope,
        200,
        client=client,
        order_id=moved["order"]["orderId"],
    )
    [airline_change] = view["airlineInitiatedChanges"]
    accepted = change(
        "accept airline change",
        moved["order"]["orderId"],
        {"changes": [{"type": "AcceptAirlineChange", "airlineChangeId": airline_change["id"]}]},
    )
    assert accepted["airlineInitiatedChanges"][0]["status"] == "ACCEPTED"
    return journey.failures
