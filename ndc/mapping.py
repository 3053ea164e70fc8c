"""NDC request documents -> the request bodies the JSON API takes, and JSON field paths
-> the XPath of the element they came from (DESIGN.md §9).

This is the one place that knows how a 21.3 request maps onto our services: each
function builds exactly the dict the JSON endpoint's serializer validates (SearchIn,
PriceIn), so both channels go through the same rules and services. When the services
take typed input instead of dicts, only this module changes.
"""

from collections.abc import Callable
from typing import Any

from lxml import etree

from airline.api.errors import ApiError, several_errors
from ndc.xml import MSG, c, refused, text

# IATA's cabin type codes (PADIS 9873) beside the letters the JSON API uses (SPEC.md §1).
CABIN_CODES = {"1": "F", "2": "C", "4": "W", "5": "Y"}

_SHOP = "/IATA_AirShoppingRQ/Request"
_OD = f"{_SHOP}/FlightRequest/FlightRequestOriginDestinationsCriteria/OriginDestCriteria"
AIR_SHOPPING_PATHS = {
    "originDestinations": _OD,
    "originDestinations.origin": f"{_OD}/OriginDepCriteria/IATA_LocationCode",
    "originDestinations.destination": f"{_OD}/DestArrivalCriteria/IATA_LocationCode",
    "originDestinations.departureDate": f"{_OD}/OriginDepCriteria/Date",
    "cabinTypeCode": f"{_OD}/CabinType/CabinTypeCode",
    "currency": f"{_SHOP}/ResponseParameters/CurParameter/CurCode",
    "passengers": f"{_SHOP}/PaxList/Pax",
    "passengers.type": f"{_SHOP}/PaxList/Pax/PTC",
    "passengers.paxId": f"{_SHOP}/PaxList/Pax/PaxID",
}

_PRICE = "/IATA_OfferPriceRQ/Request"
_SELECTED = f"{_PRICE}/PricedOffer/SelectedOfferList/SelectedOffer"
OFFER_PRICE_PATHS = {
    "selections": _SELECTED,
    "selections.offerId": f"{_SELECTED}/OfferRefID",
    "offerId": f"{_SELECTED}/OfferRefID",  # the offer store's ERR-3000 / ERR-3001
    "selections.offerItemIds": f"{_SELECTED}/SelectedOfferItem/OfferItemRefID",
    "passengers": f"{_PRICE}/DataLists/PaxList/Pax",
    "passengers.type": f"{_PRICE}/DataLists/PaxList/Pax/PTC",
    "passengers.paxId": f"{_PRICE}/DataLists/PaxList/Pax/PaxID",
}


def air_shopping_input(document: etree._Element) -> dict[str, Any]:
    """IATA_AirShoppingRQ -> the body of POST /json/{v}/offers (SPEC.md §4.4)."""
    request = document.find(f"{{{MSG}}}Request")
    body = flight_request_input(request.find(c("FlightRequest")))
    body["passengers"] = _passengers(request.find(c("PaxList")))
    currencies = [
        text(parameter, "CurCode")
        for parameter in request.findall(f"{c('ResponseParameters')}/{c('CurParameter')}")
    ]
    if currencies:
        # SPEC.md §4.4: one currency; the first asked is the one checked.
        body["currency"] = currencies[0]
    return body


def flight_request_input(flight_request: etree._Element) -> dict[str, Any]:
    """A FlightRequest (AirShopping's, OrderReshop's new flights) -> `originDestinations`
    and, when one is asked, `cabinTypeCode`, as the JSON bodies carry them."""
    criteria = flight_request.find(c("FlightRequestOriginDestinationsCriteria"))
    if criteria is None:
        raise refused(
            flight_request[0],
            "only FlightRequestOriginDestinationsCriteria "
            "(origin, destination and date per direction) is supported",
        )
    directions = criteria.findall(c("OriginDestCriteria"))
    body: dict[str, Any] = {
        "originDestinations": [
            {
                "origin": text(od, "OriginDepCriteria", "IATA_LocationCode"),
                "destination": text(od, "DestArrivalCriteria", "IATA_LocationCode"),
                "departureDate": text(od, "OriginDepCriteria", "Date"),
            }
            for od in directions
        ]
    }
    cabins = [
        cabin
        for od in directions
        for cabin in od.findall(f"{c('CabinType')}/{c('CabinTypeCode')}")
        if (cabin.text or "").strip()
    ]
    codes = sorted({cabin.text.strip() for cabin in cabins})
    if len(codes) > 1:
        raise refused(
            next(cabin for cabin in cabins if cabin.text.strip() != cabins[0].text.strip()),
            "one cabin per request, the same for every direction, not " + ", ".join(codes),
        )
    if codes:
        [code] = codes
        body["cabinTypeCode"] = CABIN_CODES.get(code, code)
    return body


def offer_price_input(
    document: etree._Element, *, shopped_party: Callable[[str], list[dict[str, str]]]
) -> dict[str, Any]:
    """IATA_OfferPriceRQ -> the body of POST /json/{v}/offers/price (SPEC.md §4.5).
    DataLists/PaxList is optional in 21.3: without it the party is the one the first
    selected offer was shopped for (`shopped_party(offerId)`, JSON passengers)."""
    request = document.find(f"{{{MSG}}}Request")
    priced_offer = request.find(c("PricedOffer"))
    selected = priced_offer.find(c("SelectedOfferList"))
    if selected is None:
        chosen = priced_offer[0]
        raise refused(
            chosen,
            "only SelectedOfferList is supported; order items are repriced with OrderReshop",
        )
    pax_list = request.find(f"{c('DataLists')}/{c('PaxList')}")
    if pax_list is None:
        passengers = shopped_party(text(selected.find(c("SelectedOffer")), "OfferRefID") or "")
        listed = "the shopped offer's passengers (no DataLists/PaxList was sent)"
    else:
        passengers = _passengers(pax_list)
        listed = "DataLists/PaxList"
    known = {p.get("paxId") for p in passengers}
    for ref in selected.iter(c("PaxRefID")):
        if (ref.text or "").strip() not in known:
            raise refused(ref, f"{ref.text!r} is not a PaxID of {listed}")
    # A-la-carte items (a ServiceList ALaCarteOffer's) are priced apart (ndc.a_la_carte).
    flights = [
        (offer, [i for i in offer.findall(c("SelectedOfferItem")) if not _a_la_carte(i)])
        for offer in selected.findall(c("SelectedOffer"))
    ]
    return {
        "selections": [
            {
                "offerId": text(offer, "OfferRefID"),
                "offerItemIds": [text(item, "OfferItemRefID") for item in items],
            }
            for offer, items in flights
            if items
        ],
        "passengers": passengers,
    }


def _a_la_carte(item: etree._Element) -> bool:
    return item.find(c("SelectedALaCarteOfferItem")) is not None or (
        item.find(c("SelectedSeat")) is not None
    )


def _passengers(pax_list: etree._Element | None) -> list[dict[str, str]]:
    """Pax (PaxID, PTC) as the JSON passengers; a missing PTC is left for the
    serializer to name, as JSON's missing `type` is."""
    if pax_list is None:
        return []
    passengers = []
    for pax in pax_list.findall(c("Pax")):
        passenger = {"paxId": text(pax, "PaxID")}
        ptc = text(pax, "PTC")
        if ptc is not None:
            passenger["type"] = ptc
        passengers.append(passenger)
    return passengers


def translated(err: ApiError, paths: dict[str, str]) -> ApiError:
    """`err` with its JSON field path (SPEC.md §7 `path`) replaced by the XPath of the
    element the field came from, in `path` and in the description; each of several
    errors so."""
    if err.errors:
        return several_errors([translated(each, paths) for each in err.errors])
    xpath = paths.get(err.path or "")
    if xpath is None:
        return err
    description = err.description.replace(f"{err.path}:", f"{xpath}:", 1)
    if not description.startswith(xpath):
        description = f"{xpath}: {description}"
    return ApiError(err.spec, description, path=xpath, headers=err.headers, reason=err.reason)
