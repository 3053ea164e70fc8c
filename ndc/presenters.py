"""IATA_AirShoppingRS and IATA_OfferPriceRS from what the JSON API answers (DESIGN.md §9).

Both are built from the `data` the JSON presenters make of the same stored offers
(offers/presenters.py), so ids, prices and flights are the JSON ones: an offer shopped in
one channel is priced in the other. Data lists are shared by all offers of a response:
PaxJourney (JSON journeyId), PaxSegment (JSON segmentId) with its DatedMarketingSegment
and DatedOperatingSegment, DatedOperatingLeg (JSON legId), PriceClass (the bundle) and
BaggageAllowance (the bundle's included bags). Times are station-local without offset
(as JSON, and as NDC's AircraftScheduledDateTime is read); the offer's expiry is UTC.
"""

import copy
from collections.abc import Iterable, Mapping
from decimal import Decimal
from typing import Any

import orjson
from lxml import etree

from airline.fares.terms import BundleTerms
from ndc import xml
from ndc.errors import payload_attributes
from ndc.xml import amount, sub

Json = dict[str, Any]


def air_shopping_rs(
    data: Json,
    *,
    directions: Iterable[tuple[str, str]],
    bundles: Mapping[str, BundleTerms],
    request_id: str | None,
) -> bytes:
    """The JSON flat view (`data` of POST /offers) as IATA_AirShoppingRS."""
    root = xml.message_root("IATA_AirShoppingRS")
    response = xml.msg_sub(root, "Response")
    lists = _DataLists(data["pax"], bundles)
    for n, (origin, destination) in enumerate(directions):
        lists.origin_dests[n] = (origin, destination, [])
    for offer in data["offers"]:
        for item in offer["offerItems"]:
            lists.add_journey(item["flight"], item["legIndex"], item["fare"])
    lists.write(response)

    carrier_offers = sub(sub(response, "OffersGroup"), "CarrierOffers")
    for offer in data["offers"]:
        item = offer["offerItems"][0]
        element = sub(carrier_offers, "Offer")
        _offer(element, offer, [item], lists)
    payload_attributes(root, request_id)
    return xml.serialize(root)


def offer_price_rs(
    data: Json, *, bundles: Mapping[str, BundleTerms], request_id: str | None
) -> bytes:
    """The JSON priced view (`data` of POST /offers/price) as IATA_OfferPriceRS."""
    root = xml.message_root("IATA_OfferPriceRS")
    response = xml.msg_sub(root, "Response")
    offer = data["offer"]
    lists = _DataLists(data["pax"], bundles)
    journeys = {j["journeyId"]: j for j in data["journeys"]}
    for n, item in enumerate(offer["items"]):
        for ref in item["journeyRefIds"]:
            lists.add_journey(journeys[ref], n, item["fare"])
    lists.write(response)

    items = [{**item, "flight": journeys[item["journeyRefIds"][0]]} for item in offer["items"]]
    _offer(sub(response, "PricedOffer"), offer, items, lists)
    if offer["priceChanged"]:
        warning = sub(response, "Warning")
        sub(warning, "Code", "PriceChanged")
        sub(
            warning,
            "DescText",
            f"The total changed since the search: it was {_money(offer['previousTotal'])}, "
            f"it is {_money(offer['totalPrice']['total'])}",
        )
        sub(warning, "LangCode", "EN")
    payload_attributes(root, request_id)
    return xml.serialize(root)


class _DataLists:
    """The response's data lists, each entry once however many offers refer to it."""

    def __init__(self, pax: list[Json], bundles: Mapping[str, BundleTerms]) -> None:
        self.pax = pax
        self.bundles = bundles
        self.journeys: dict[str, Json] = {}
        self.origin_dests: dict[int, tuple[str, str, list[str]]] = {}
        self.price_classes: dict[str, Json] = {}

    def add_journey(self, flight: Json, direction: int, fare: Json) -> None:
        if flight["journeyId"] not in self.journeys:
            self.journeys[flight["journeyId"]] = flight
            od = self.origin_dests.setdefault(
                direction, (flight["origin"], flight["destination"], [])
            )
            od[2].append(flight["journeyId"])
        self.price_classes.setdefault(fare["priceClassRefId"], fare)

    def write(self, response: etree._Element) -> None:
        lists = sub(response, "DataLists")
        self._baggage(lists)
        journeys = list(self.journeys.values())
        segments = [s for j in journeys for s in j["segments"]]
        unique_segments = list({s["segmentId"]: s for s in segments}.values())
        legs = list({leg["legId"]: leg for s in unique_segments for leg in s["legs"]}.values())

        marketing = sub(lists, "DatedMarketingSegmentList")
        for s in unique_segments:
            element = sub(marketing, "DatedMarketingSegment")
            _point(element, "Arrival", s["destination"], s["arrivalDateTime"])
            sub(element, "CarrierDesigCode", s["marketingCarrier"])
            sub(element, "DatedMarketingSegmentId", _marketing_id(s))
            sub(element, "DatedOperatingSegmentRefId", _operating_id(s))
            _point(element, "Dep", s["origin"], s["departureDateTime"])
            sub(element, "MarketingCarrierFlightNumberText", s["marketingFlightNumber"])

        operating_legs = sub(lists, "DatedOperatingLegList")
        for leg in legs:
            element = sub(operating_legs, "DatedOperatingLeg")
            _point(element, "Arrival", leg["destination"], leg["arrivalDateTime"])
            if leg.get("carrierAircraftTypeCode"):
                sub(
                    sub(element, "CarrierAircraftType"),
                    "CarrierAircraftTypeCode",
                    leg["carrierAircraftTypeCode"],
                )
            sub(element, "DatedOperatingLegID", leg["legId"])
            _point(element, "Dep", leg["origin"], leg["departureDateTime"])
            sub(sub(element, "IATA_AircraftType"), "IATA_AircraftTypeCode", leg["aircraftTypeCode"])

        operating = sub(lists, "DatedOperatingSegmentList")
        for s in unique_segments:
            element = sub(operating, "DatedOperatingSegment")
            sub(element, "CarrierDesigCode", s["operatingCarrier"])
            for leg in s["legs"]:
                sub(element, "DatedOperatingLegRefID", leg["legId"])
            sub(element, "DatedOperatingSegmentId", _operating_id(s))
            sub(element, "Duration", s["duration"])
            sub(element, "OperatingCarrierFlightNumberText", s["operatingFlightNumber"])

        origin_dests = sub(lists, "OriginDestList")
        for n, (origin, destination, journey_ids) in sorted(self.origin_dests.items()):
            element = sub(origin_dests, "OriginDest")
            sub(element, "DestCode", destination)
            sub(element, "OriginCode", origin)
            sub(element, "OriginDestID", f"OD{n + 1}")
            for journey_id in journey_ids:
                sub(element, "PaxJourneyRefID", journey_id)

        pax_journeys = sub(lists, "PaxJourneyList")
        for journey in journeys:
            element = sub(pax_journeys, "PaxJourney")
            sub(element, "Duration", journey["duration"])
            sub(element, "PaxJourneyID", journey["journeyId"])
            for s in journey["segments"]:
                sub(element, "PaxSegmentRefID", s["segmentId"])

        pax_list = sub(lists, "PaxList")
        for pax in self.pax:
            element = sub(pax_list, "Pax")
            sub(element, "PaxID", pax["paxId"])
            sub(element, "PTC", pax["ptc"])

        pax_segments = sub(lists, "PaxSegmentList")
        for s in unique_segments:
            element = sub(pax_segments, "PaxSegment")
            sub(element, "DatedMarketingSegmentRefId", _marketing_id(s))
            sub(element, "PaxSegmentID", s["segmentId"])

        price_classes = sub(lists, "PriceClassList")
        for code, fare in self.price_classes.items():
            element = sub(price_classes, "PriceClass")
            cabin = sub(element, "CabinType")
            sub(cabin, "CabinTypeCode", fare["cabinTypeCode"])
            sub(cabin, "CabinTypeName", fare["cabinName"])
            sub(element, "Code", code)
            texts = [fare.get("description")]
            bundle = self.bundles.get(code)
            if bundle is not None:
                texts += [b.get("description") for b in bundle.benefits]
            for description in filter(None, texts):
                sub(sub(element, "Desc"), "DescText", description)
            sub(element, "Name", fare["bundleName"])
            sub(element, "PriceClassID", code)

        for container in list(lists):  # 21.3 lists hold at least one entry, or are absent
            if len(container) == 0:
                lists.remove(container)

    def _baggage(self, lists: etree._Element) -> None:
        """Each bundle's included carry-on and checked bags (DESIGN.md §7)."""
        allowances = sub(lists, "BaggageAllowanceList")
        for code in self.price_classes:
            bundle = self.bundles.get(code)
            if bundle is None:
                continue
            for type_code, quantity, disclosure in _allowances(bundle):
                element = sub(allowances, "BaggageAllowance")
                sub(element, "BaggageAllowanceID", _baggage_id(code, type_code))
                if disclosure:
                    sub(element, "DescText", disclosure)
                sub(sub(element, "PieceAllowance"), "TotalQty", quantity)
                sub(element, "TypeCode", type_code)

    def baggage_refs(self, code: str) -> list[str]:
        bundle = self.bundles.get(code)
        if bundle is None:
            return []
        return [_baggage_id(code, type_code) for type_code, _, _ in _allowances(bundle)]


def _allowances(bundle: BundleTerms) -> list[tuple[str, int, str | None]]:
    disclosures = {d.get("ruleTypeCode"): d.get("description") for d in bundle.baggage_disclosures}
    return [
        ("CarryOn", 1 if bundle.carry_on_included else 0, disclosures.get("CarryOn")),
        ("Checked", bundle.checked_bags_included, disclosures.get("Checked")),
    ]


def _offer(element: etree._Element, offer: Json, items: list[Json], lists: _DataLists) -> None:
    """NewOfferType: an AirShopping offer (one item) or the OfferPrice priced offer."""
    pax_ids = [p["paxId"] for p in lists.pax]
    for item in items:
        refs = lists.baggage_refs(item["fare"]["priceClassRefId"])
        if refs:
            association = sub(element, "BaggageAssociations")
            for ref in refs:
                sub(association, "BaggageAllowanceRefID", ref)
            flights = sub(association, "OfferFlightAssociations")
            sub(sub(flights, "PaxJourneyRef"), "PaxJourneyRefID", item["flight"]["journeyId"])
            for pax_id in pax_ids:
                sub(association, "PaxRefID", pax_id)
    sub(sub(element, "Desc"), "DescText", offer["description"])
    sub(element, "OfferExpirationTimeLimitDateTime", offer["expiresAt"])
    sub(element, "OfferID", offer["offerId"])
    for item in items:
        _offer_item(sub(element, "OfferItem"), item, offer["ownerCode"], pax_ids)
    sub(element, "OwnerCode", offer["ownerCode"])
    _price(sub(element, "TotalPrice"), offer["totalPrice"])


def _offer_item(element: etree._Element, item: Json, owner: str, pax_ids: list[str]) -> None:
    fare, flight = item["fare"], item["flight"]
    for row in item["passengerPrices"]:
        detail = sub(element, "FareDetail")
        for segment in flight["segments"]:
            component = sub(detail, "FareComponent")
            cabin = sub(component, "CabinType")
            sub(cabin, "CabinTypeCode", segment["cabinTypeCode"])
            sub(cabin, "CabinTypeName", segment["cabinName"])
            sub(component, "FareBasisCode", fare["fareBasisCode"])
            sub(component, "PaxSegmentRefID", segment["segmentId"])
            sub(component, "PriceClassRefID", fare["priceClassRefId"])
            sub(sub(component, "RBD"), "RBD_Code", segment["rbd"])
        for pax_id in row["paxRefIds"]:
            sub(detail, "PaxRefID", pax_id)
        _price(sub(detail, "Price"), row["price"])  # per passenger (DESIGN.md §11)
    sub(element, "OfferItemID", item["offerItemId"])
    sub(element, "OwnerCode", owner)
    _price(sub(element, "Price"), item["totalPrice"])
    for n, pax_id in enumerate(pax_ids, start=1):
        service = sub(element, "Service")
        association = sub(service, "OfferServiceAssociation")
        sub(sub(association, "PaxJourneyRef"), "PaxJourneyRefID", flight["journeyId"])
        sub(service, "PaxRefID", pax_id)
        sub(service, "ServiceID", f"{item['offerItemId']}.SRV{n}")


def _price(element: etree._Element, price: Json) -> None:
    """SPEC.md §1 Price as PriceType: BaseAmount, Fee, TaxSummary, TotalAmount.

    A search shows few distinct prices in many places (each fare class's per-passenger
    and item prices recur across journeys and bundles), and building elements one by one
    is most of an AirShopping's time: each distinct price is built once per process and
    copied (in C) wherever it recurs."""
    key = orjson.dumps(price)
    built = _PRICES.get(key)
    if built is None:
        if len(_PRICES) > PRICE_CACHE_SIZE:
            _PRICES.clear()
        built = _PRICES[key] = etree.Element(xml.c("Price"))
        _build_price(built, price)
    element.extend(copy.deepcopy(built)[:])


PRICE_CACHE_SIZE = 10_000
_PRICES: dict[bytes, etree._Element] = {}


def _build_price(element: etree._Element, price: Json) -> None:
    amount(element, "BaseAmount", price["base"])
    for fee in price["fees"]:
        fee_element = sub(element, "Fee")
        amount(fee_element, "Amount", fee["amount"])
        label = " ".join(filter(None, (fee["type"], fee.get("code"), fee.get("description"))))
        sub(fee_element, "DescText", label)
    if price["taxes"]:
        summary = sub(element, "TaxSummary")
        for tax in price["taxes"]:
            tax_element = sub(summary, "Tax")
            amount(tax_element, "Amount", tax["amount"])
            if tax.get("description"):
                sub(tax_element, "DescText", tax["description"])
            if tax.get("code"):
                sub(tax_element, "TaxCode", tax["code"])
        total_tax = sum((Decimal(repr(t["amount"]["amount"])) for t in price["taxes"]), Decimal())
        amount(
            summary,
            "TotalTaxAmount",
            {"amount": total_tax, "currency": price["total"]["currency"]},
        )
    amount(element, "TotalAmount", price["total"])


def _point(parent: etree._Element, name: str, station: str, local_time: str) -> None:
    point = sub(parent, name)
    sub(point, "AircraftScheduledDateTime", local_time)
    sub(point, "IATA_LocationCode", station)


def _marketing_id(segment: Json) -> str:
    return "MKT" + segment["segmentId"].removeprefix("SEG")


def _operating_id(segment: Json) -> str:
    return "OPS" + segment["segmentId"].removeprefix("SEG")


def _baggage_id(bundle_code: str, type_code: str) -> str:
    return f"BAG-{bundle_code}-{type_code}"


def _money(money: Json) -> str:
    return f"{Decimal(repr(money['amount'])):.2f} {money['currency']}"
