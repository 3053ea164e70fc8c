"""What the orders benchmark books: the party, the payments, the priced offers the
clients search and price before any timing, and the same booking as NDC OrderCreate XML."""

import http.client
import json
import random
import time
from collections.abc import Sequence
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

from lxml import etree

from benchmarks.orders.load import call, client_ports, run_clients
from benchmarks.orders.sizes import CLIENTS

REPO = Path(__file__).resolve().parents[2]
PARTY = [{"type": "ADT"}, {"type": "ADT"}, {"type": "CHD"}]
GIVEN = {"ADT-1": "Ada", "ADT-2": "Charles", "CHD-1": "Annabella"}
SURNAME_BASES = [
    "Lovelace",
    "Babbage",
    "Somerville",
    "King",
    "Hopper",
    "Turing",
    "Noether",
    "Curie",
    "Franklin",
    "Meitner",
    "Hodgkin",
    "Goodall",
    "Johnson",
    "Vaughan",
    "Jackson",
    "Lamarr",
    "Herschel",
    "Fleming",
    "Cannon",
    "Leavitt",
    "Mitchell",
    "Anning",
    "Payne",
    "Agnesi",
    "Germain",
    "Kovalevskaya",
    "Nightingale",
    "Blackwell",
    "Carson",
    "Ride",
    "Yalow",
    "Elion",
    "McClintock",
    "Cori",
    "Mayer",
    "Wu",
    "Hamilton",
    "Clarke",
    "Hypatia",
    "Tereshkova",
]
SURNAME_ENDINGS = ("", "son", "ley", "ford", "-Smith")
SURNAMES = [base + ending for ending in SURNAME_ENDINGS for base in SURNAME_BASES]  # 200
CARD = {
    "type": "CreditCard",
    "cardType": "VI",
    "cardNumber": "4111111111111111",
    "expiryDate": "1230",
    "securityCode": "737",
    "payer": {"name": {"givenName": "Ada", "surname": "Lovelace"}},
}
HOLD = {"type": "Hold"}
# The booking phases: (kind, payment, label); each kind's first letter tags its phases.
BOOKING_KINDS = (
    ("hold", HOLD, "on hold"),
    ("card", CARD, "paid by card (test gateway)"),
    ("ndc", CARD, "paid by card, NDC OrderCreate (XML)"),
    ("anc", HOLD, "on hold with a seat and a bag"),
)


def prepare_offers(port: int | Sequence[int], auth: dict, markets: list, wanted: int) -> list:
    """Create-order bodies for `wanted` priced round trips: each a different market-day
    (the demo schedule has ~76-150 seats per flight-date; a booking takes 3 each way).
    With several ports (nodes), the clients are dealt out among them (`client_ports`).
    Says how long that took; stops the benchmark when fewer than `wanted` came of it."""
    today = datetime.now(tz=UTC).date()
    rng = random.Random(7)
    span = 290  # outbound days 3..292, back 7 days later: inside the 330-day schedule
    tasks = []
    for k in range(int(wanted * 1.1) + CLIENTS):
        origin, destination = markets[k % len(markets)]
        day = today + timedelta(days=3 + (k // len(markets)) * 13 % span)
        tasks.append((origin, destination, day.isoformat(), rng.choice(SURNAMES)))
    started = time.monotonic()
    results = run_clients(
        _prepare_client,
        [
            (client_port, auth, tasks[n::CLIENTS])
            for n, client_port in enumerate(client_ports(port, CLIENTS))
        ],
    )
    seconds = time.monotonic() - started
    bodies = [body for result in results for body in result["bodies"]]
    failures = sum(result["failures"] for result in results)
    for result in results:
        AMOUNT_DUE.update(result["due"])
    rng.shuffle(bodies)  # hold and card phases get offers from every market and season
    nodes = "" if isinstance(port, int) else f" through {len(set(port))} nodes"
    print(
        f"\n(prepared {len(bodies)} priced offers{nodes} in {seconds:.1f} s: search + price "
        f"by {CLIENTS} clients; {failures} searches without a usable offer)"
    )
    if len(bodies) < wanted:
        raise SystemExit(f"only {len(bodies)} of {wanted} priced offers; cannot go on")
    return bodies


def round_trip_search(origin: str, destination: str, day: str) -> dict:
    """The shopping request for the benchmark's party: out on `day`, back a week later."""
    back = date.fromisoformat(day) + timedelta(days=7)
    return {
        "originDestinations": [
            {"origin": origin, "destination": destination, "departureDate": day},
            {"origin": destination, "destination": origin, "departureDate": back.isoformat()},
        ],
        "passengers": PARTY,
    }


def _prepare_client(port: int, auth: dict, tasks: list, results) -> None:
    bodies, failures, due = [], 0, {}
    for origin, destination, day, surname in tasks:
        search = round_trip_search(origin, destination, day)
        try:
            status, raw = call(port, "POST", "/json/v1/offers", search, auth)
            offers = json.loads(raw)["data"]["offers"] if status == 201 else []
            chosen = {}
            for offer in offers:
                chosen.setdefault(offer["offerItems"][0]["legIndex"], offer)
            if len(chosen) != 2:
                failures += 1
                continue
            price = {
                "selections": [
                    {"offerId": o["offerId"], "offerItemIds": [o["offerItems"][0]["offerItemId"]]}
                    for o in chosen.values()
                ],
                "passengers": PARTY,
            }
            status, raw = call(port, "POST", "/json/v1/offers/price", price, auth)
            if status != 201:
                failures += 1
                continue
            priced = json.loads(raw)["data"]
            bodies.append(booking_body(priced, surname))
            due[priced["offer"]["offerId"]] = priced["offer"]["totalPrice"]["total"]
        except (OSError, http.client.HTTPException, ValueError, KeyError):
            failures += 1
    results.put({"bodies": bodies, "failures": failures, "due": due})


def booking_body(priced: dict, surname: str) -> dict:
    """tests/orders/conftest.py booking_body, one family name per booking; no payment yet."""
    return {
        "offerId": priced["offer"]["offerId"],
        "offerItemIds": [i["offerItemId"] for i in priced["offer"]["items"]],
        "passengers": [
            {
                "passengerId": p["paxId"],
                "type": p["ptc"],
                "name": {"givenName": GIVEN.get(p["paxId"], "Pat"), "surname": surname},
            }
            for p in priced["pax"]
        ],
        "contact": {"emailAddress": "ada@example.com", "phoneNumber": "+1 401 555 0123"},
    }


_NDC_MSG = "{http://www.iata.org/IATA/2015/EASD/00/IATA_OffersAndOrdersMessage}"
_NDC_CNS = "{http://www.iata.org/IATA/2015/EASD/00/IATA_OffersAndOrdersCommonTypes}"


# offerId -> the priced offer's total ({"amount", "currency"}), as prepare_offers priced
# them: an OrderCreateRQ's payment must state the amount due (ERR-6002), where a JSON
# create order's card payment states none, so the create-order bodies do not carry it.
AMOUNT_DUE: dict[str, dict] = {}


def order_create_xml(body: dict) -> bytes:
    """The JSON booking `body` (no payment) as the OrderCreateRQ of ndc/examples, paid by
    its card for the amount due: the same offer, items, party (ADT-1, ADT-2, CHD-1), names
    and contact, without the example's documents, birth dates and loyalty account (JSON
    sends none)."""
    document = etree.parse(str(REPO / "ndc" / "examples" / "OrderCreateRQ.xml")).getroot()
    due = AMOUNT_DUE[body["offerId"]]
    for amount in document.iterfind(f".//{_NDC_CNS}PaymentProcessingDetails/{_NDC_CNS}Amount"):
        amount.text = str(due["amount"])
        amount.set("CurCode", due["currency"])
    offer = document.find(f".//{_NDC_CNS}SelectedPricedOffer")
    offer.find(f"{_NDC_CNS}OfferRefID").text = body["offerId"]
    items = offer.findall(f"{_NDC_CNS}SelectedOfferItem")
    for element, item_id in zip(items, body["offerItemIds"], strict=True):
        element.find(f"{_NDC_CNS}OfferItemRefID").text = item_id
    names = {p["passengerId"]: p["name"] for p in body["passengers"]}
    for pax in document.iterfind(f".//{_NDC_CNS}PaxList/{_NDC_CNS}Pax"):
        for extra in ("IdentityDoc", "LoyaltyProgramAccount", "ContactInfoRefID"):
            for element in pax.findall(f"{_NDC_CNS}{extra}"):
                pax.remove(element)
        individual = pax.find(f"{_NDC_CNS}Individual")
        for extra in ("Birthdate", "GenderCode"):
            for element in individual.findall(f"{_NDC_CNS}{extra}"):
                individual.remove(element)
        name = names[pax.findtext(f"{_NDC_CNS}PaxID")]
        individual.find(f"{_NDC_CNS}GivenName").text = name["givenName"]
        individual.find(f"{_NDC_CNS}Surname").text = name["surname"]
    return etree.tostring(document, xml_declaration=True, encoding="UTF-8")


def error_in(raw: bytes) -> str:
    """The error code and text of a refused booking (JSON envelope or NDC Error), else
    the start of the answer."""
    try:
        if raw.lstrip().startswith(b"<"):
            error = etree.fromstring(raw).find(f".//{_NDC_MSG}Error")
            return f"{error.findtext(f'{_NDC_CNS}Code')}: {error.findtext(f'{_NDC_CNS}DescText')}"
        error = json.loads(raw)["error"]
        return f"{error['code']}: {error.get('description')} (path {error.get('path')})"
    except (etree.XMLSyntaxError, AttributeError, ValueError, KeyError, TypeError):
        return repr(raw[:300])


def ndc_order_refs(raw: bytes) -> tuple[str, str]:
    """(OrderID, record locator) of an IATA_OrderViewRS."""
    document = etree.fromstring(raw)
    order = document.find(f"{_NDC_MSG}Response/{_NDC_CNS}Order")
    locator = order.findtext(f".//{_NDC_CNS}BookingRef/{_NDC_CNS}BookingID")
    return order.findtext(f"{_NDC_CNS}OrderID"), locator


def prepare_ancillaries(port: int, auth: dict, bodies: list) -> list:
    """The bodies, each with one standard seat for ADT-1 on the outbound's first leg and
    a first bag for ADT-2 on the outbound, from its priced offer's own seat map and
    service list (create order's `ancillaries`). Seats are drawn at random among the
    open ones, so that two bookings on a shared leg rarely want the same seat; a clash
    shows as a failed booking in the report."""
    results = run_clients(
        _ancillaries_client, [(port, auth, bodies[n::CLIENTS], n) for n in range(CLIENTS)]
    )
    return [body for result in results for body in result["bodies"]]


def _ancillaries_client(port: int, auth: dict, bodies: list, seed: int, results) -> None:
    rng = random.Random(seed)
    out = []
    for body in bodies:
        asked = {"offerItemIds": body["offerItemIds"]}
        offer = body["offerId"]
        _, seats = call(port, "POST", f"/json/v1/offers/{offer}/seats", asked, auth)
        _, services = call(port, "POST", f"/json/v1/offers/{offer}/services", asked, auth)
        out.append({**body, "ancillaries": seat_and_bag(seats, services, rng)})
    results.put({"bodies": out})


def seat_and_bag(seats: bytes, services: bytes, rng: random.Random) -> list[dict]:
    """Create order's `ancillaries` from an offer's seat map and service list (their raw
    answers): a standard seat drawn by `rng` among the open ones for ADT-1 on the
    outbound's first leg, and a first bag (CB1) for ADT-2 on the outbound."""
    seat_data, service_data = json.loads(seats)["data"], json.loads(services)["data"]
    units = [
        u
        for d in seat_data["legSeatMaps"][0]["decks"]
        for c in d["compartments"]
        for u in c["units"]
        if u["availability"] == "Open" and u["group"] == "standard"
    ]
    unit = rng.choice(units)
    [seat_row] = [r for r in unit["passengerPricing"] if r["paxRefId"] == "ADT-1"]
    [bag] = [s for s in service_data["services"] if s["serviceCode"] == "CB1"]
    bag_row = next(
        r
        for a in bag["segmentAvailability"][:1]
        for r in a["passengerPricing"]
        if r["paxRefId"] == "ADT-2"
    )
    return [
        {
            "offerId": seat_data["offerId"],
            "offerItemId": seat_row["offerItemId"],
            "passengerIds": ["ADT-1"],
            "seat": {"row": int(unit["designator"][:-1]), "column": unit["designator"][-1]},
        },
        {
            "offerId": service_data["offerId"],
            "offerItemId": bag_row["offerItemId"],
            "passengerIds": ["ADT-2"],
        },
    ]
