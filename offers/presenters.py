"""The `data` of shopping and pricing responses, from stored offer batches (SPEC.md §2.2,
§2.3, §2.4). Plain dicts; the stored offers already hold their wire parts."""

from typing import Any

from django.conf import settings

from airline.api import clock
from airline.network.itineraries import Journey, NetworkIndex
from offers.services import SearchQuery
from offers.store import OfferBatch
from offers.wire import PAYMENT_FUNCTIONS, flight_wire

ITEM_FIELDS = ("totalPrice", "flight", "fare", "passengerPrices")


def flat_view(batch: OfferBatch) -> dict[str, Any]:
    """POST /offers: every offer, each with its one item."""
    expires_at = clock.format_utc(batch.expires_at)
    offers = []
    for offer_id, offer in batch.offers.items():
        item = {
            "offerItemId": offer["offerItemId"],
            "legIndex": offer["legIndex"],
            **{f: offer[f] for f in ITEM_FIELDS},
        }
        item["seatsRemaining"] = offer["seatsRemaining"]
        offers.append(
            {
                "offerId": offer_id,
                "ownerCode": settings.AIRLINE_DESIGNATOR,
                "expiresAt": expires_at,
                "description": offer["description"],
                "totalPrice": offer["totalPrice"],
                "offerItems": [item],
            }
        )
    return {
        "view": "flat",
        "pax": batch.passengers,
        "paymentFunctions": PAYMENT_FUNCTIONS,
        "offers": offers,
    }


def by_journey_view(batch: OfferBatch, query: SearchQuery) -> dict[str, Any]:
    """POST /offers/byJourney: the same offers grouped by direction, then journey."""
    expires_at = clock.format_utc(batch.expires_at)
    directions = [
        {
            "legIndex": n,
            "origin": d.origin,
            "destination": d.destination,
            "departureDate": d.departure_date.isoformat(),
            "journeys": [],
        }
        for n, d in enumerate(query.directions)
    ]
    journeys: dict[tuple[int, str], dict[str, Any]] = {}
    for offer_id, offer in batch.offers.items():
        key = (offer["legIndex"], offer["journeyId"])
        if key not in journeys:
            journeys[key] = {"flight": offer["flight"], "options": []}
            directions[offer["legIndex"]]["journeys"].append(journeys[key])
        journeys[key]["options"].append(
            {
                "offerId": offer_id,
                "offerItemId": offer["offerItemId"],
                "expiresAt": expires_at,
                "totalPrice": offer["totalPrice"],
                "fare": offer["fare"],
                "passengerPrices": offer["passengerPrices"],
            }
        )
    return {"view": "byJourney", "pax": batch.passengers, "directions": directions}


def priced_view(batch: OfferBatch, journeys: list[Journey], index: NetworkIndex) -> dict[str, Any]:
    """POST /offers/price: the merged quote; items point at top-level journeys."""
    [(offer_id, offer)] = batch.offers.items()
    items = [
        {
            "offerItemId": item["offerItemId"],
            "totalPrice": item["totalPrice"],
            "journeyRefIds": [item["journeyId"]],
            "fare": item["fare"],
            "passengerPrices": item["passengerPrices"],
        }
        for item in offer["items"]
    ]
    journey_wires = [
        flight_wire(
            journey, index, cabin=item["cabin"], rbds=item["rbds"], with_flight_numbers=False
        )
        for journey, item in zip(journeys, offer["items"], strict=True)
    ]
    return {
        "pax": batch.passengers,
        "paymentFunctions": PAYMENT_FUNCTIONS,
        "offer": {
            "offerId": offer_id,
            "ownerCode": settings.AIRLINE_DESIGNATOR,
            "expiresAt": clock.format_utc(batch.expires_at),
            "description": " + ".join(item["description"] for item in offer["items"]),
            "totalPrice": offer["totalPrice"],
            "priceChanged": offer["priceChanged"],
            **({"previousTotal": offer["previousTotal"]} if "previousTotal" in offer else {}),
            "items": items,
        },
        "journeys": journey_wires,
    }
