"""IATA_AirShoppingRS and IATA_OfferPriceRS from what the JSON API answers (DESIGN.md §9).

Both are built from the `data` the JSON presenters make of the same stored offers
(offers/presenters.py), so ids, prices and flights are the JSON ones: an offer shopped in
one channel is priced in the other. Data lists are shared by all offers of a response:
PaxJourney (JSON journeyId), PaxSegment (JSON segmentId) with its DatedMarketingSegment
and DatedOperatingSegment, DatedOperatingLeg (JSON legId), PriceClass (the bundle) and
BaggageAllowance (the bundle's included bags). Times are station-local without offset
(as JSON, and as NDC's AircraftScheduledDateTime is read); the offer's expiry is UTC.
"""

import functools
from collections.abc import Iterable, Mapping
from decimal import Decimal
from typing import Any

import orjson
from lxml import etree

from airline.api import clock
from airline.fares.terms import BundleTerms
from ndc import xml
from ndc.errors import NDC_VERSION
from ndc.xml import amount_text, leaf, node

Json = dict[str, Any]


def air_shopping_rs(
    data: Json,
    *,
    directions: Iterable[tuple[str, str]],
    bundles: Mapping[str, BundleTerms],
    request_id: str | None,
) -> bytes:
    """The JSON flat view (`data` of POST /offers) as IATA_AirShoppingRS. Its parts may be
    plain or, as the stored offers keep them, ready JSON (orjson Fragments)."""
    lists = _DataLists(data["pax"], bundles)
    for n, (origin, destination) in enumerate(directions):
        lists.origin_dests[n] = (origin, destination, [])
    offers = []
    for offer in data["offers"]:
        items = [{**item, "flight": _read(item["flight"])} for item in offer["offerItems"]]
        for item in items:
            lists.add_journey(item["flight"], item["legIndex"], item["fare"])
        offers.append((offer, items[:1]))
    carrier_offers = [node("Offer", _offer_text(offer, items, lists)) for offer, items in offers]
    response = xml.msg_node(
        "Response",
        lists.text(),
        node("OffersGroup", node("CarrierOffers", *carrier_offers)),
    )
    return xml.text_document("IATA_AirShoppingRS", response, _payload_attributes(request_id))


def offer_price_rs(
    data: Json, *, bundles: Mapping[str, BundleTerms], request_id: str | None
) -> bytes:
    """The JSON priced view (`data` of POST /offers/price) as IATA_OfferPriceRS."""
    offer = data["offer"]
    lists = _DataLists(data["pax"], bundles)
    journeys = {j["journeyId"]: j for j in map(_read, data["journeys"])}
    for n, item in enumerate(offer["items"]):
        for ref in item["journeyRefIds"]:
            lists.add_journey(journeys[ref], n, item["fare"])

    items = [{**item, "flight": journeys[item["journeyRefIds"][0]]} for item in offer["items"]]
    warning = ""
    if offer["priceChanged"]:
        warning = node(
            "Warning",
            leaf("Code", "PriceChanged"),
            leaf(
                "DescText",
                f"The total changed since the search: it was {_money(offer['previousTotal'])}, "
                f"it is {_money(_read(offer['totalPrice'])['total'])}",
            ),
            leaf("LangCode", "EN"),
        )
    response = xml.msg_node(
        "Response",
        lists.text(),
        node("PricedOffer", _offer_text(offer, items, lists)),
        warning,
    )
    return xml.text_document("IATA_OfferPriceRS", response, _payload_attributes(request_id))


class _DataLists:
    """The response's data lists, each entry once however many offers refer to it."""

    def __init__(self, pax: list[Json], bundles: Mapping[str, BundleTerms]) -> None:
        self.pax = pax
        self.pax_ids = [p["paxId"] for p in pax]
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
        """The DataLists element appended to `response` (for a document built in lxml)."""
        xml.append_text(response, self.text())

    def text(self) -> str:
        """The DataLists element, as text."""
        journeys = list(self.journeys.values())
        segments = list({s["segmentId"]: s for j in journeys for s in j["segments"]}.values())
        legs = list({leg["legId"]: leg for s in segments for leg in s["legs"]}.values())
        # 21.3 lists hold at least one entry, or are absent.
        return node(
            "DataLists",
            _list("BaggageAllowanceList", self._baggage()),
            _list("DatedMarketingSegmentList", [_marketing_segment(s) for s in segments]),
            _list("DatedOperatingLegList", [_operating_leg(leg) for leg in legs]),
            _list("DatedOperatingSegmentList", [_operating_segment(s) for s in segments]),
            _list(
                "OriginDestList",
                [
                    node(
                        "OriginDest",
                        leaf("DestCode", destination),
                        leaf("OriginCode", origin),
                        leaf("OriginDestID", f"OD{n + 1}"),
                        *[leaf("PaxJourneyRefID", j) for j in journey_ids],
                    )
                    for n, (origin, destination, journey_ids) in sorted(self.origin_dests.items())
                ],
            ),
            _list("PaxJourneyList", [_pax_journey(j) for j in journeys]),
            _list(
                "PaxList",
                [node("Pax", leaf("PaxID", p["paxId"]), leaf("PTC", p["ptc"])) for p in self.pax],
            ),
            _list("PaxSegmentList", [_pax_segment(s) for s in segments]),
            _list(
                "PriceClassList",
                [self._price_class(code, fare) for code, fare in self.price_classes.items()],
            ),
        )

    def _price_class(self, code: str, fare: Json) -> str:
        texts = [fare.get("description")]
        bundle = self.bundles.get(code)
        if bundle is not None:
            texts += [b.get("description") for b in bundle.benefits]
        return node(
            "PriceClass",
            node(
                "CabinType",
                leaf("CabinTypeCode", fare["cabinTypeCode"]),
                leaf("CabinTypeName", fare["cabinName"]),
            ),
            leaf("Code", code),
            *[node("Desc", leaf("DescText", text)) for text in filter(None, texts)],
            leaf("Name", fare["bundleName"]),
            leaf("PriceClassID", code),
        )

    def _baggage(self) -> list[str]:
        """Each bundle's included carry-on and checked bags (DESIGN.md §7)."""
        entries = []
        for code in self.price_classes:
            bundle = self.bundles.get(code)
            if bundle is None:
                continue
            for type_code, quantity, disclosure in _allowances(bundle):
                entries.append(
                    node(
                        "BaggageAllowance",
                        leaf("BaggageAllowanceID", _baggage_id(code, type_code)),
                        leaf("DescText", disclosure) if disclosure else "",
                        node("PieceAllowance", leaf("TotalQty", quantity)),
                        leaf("TypeCode", type_code),
                    )
                )
        return entries

    def baggage_refs(self, code: str) -> list[str]:
        bundle = self.bundles.get(code)
        if bundle is None:
            return []
        return [_baggage_id(code, type_code) for type_code, _, _ in _allowances(bundle)]


def _list(name: str, entries: list[str]) -> str:
    return node(name, *entries) if entries else ""


def _marketing_segment(s: Json) -> str:
    return node(
        "DatedMarketingSegment",
        _point("Arrival", s["destination"], s["arrivalDateTime"]),
        leaf("CarrierDesigCode", s["marketingCarrier"]),
        leaf("DatedMarketingSegmentId", _marketing_id(s)),
        leaf("DatedOperatingSegmentRefId", _operating_id(s)),
        _point("Dep", s["origin"], s["departureDateTime"]),
        leaf("MarketingCarrierFlightNumberText", s["marketingFlightNumber"]),
    )


def _operating_leg(leg: Json) -> str:
    aircraft = ""
    if leg.get("carrierAircraftTypeCode"):
        aircraft = node(
            "CarrierAircraftType", leaf("CarrierAircraftTypeCode", leg["carrierAircraftTypeCode"])
        )
    return node(
        "DatedOperatingLeg",
        _point("Arrival", leg["destination"], leg["arrivalDateTime"]),
        aircraft,
        leaf("DatedOperatingLegID", leg["legId"]),
        _point("Dep", leg["origin"], leg["departureDateTime"]),
        node("IATA_AircraftType", leaf("IATA_AircraftTypeCode", leg["aircraftTypeCode"])),
    )


def _operating_segment(s: Json) -> str:
    return node(
        "DatedOperatingSegment",
        leaf("CarrierDesigCode", s["operatingCarrier"]),
        *[leaf("DatedOperatingLegRefID", leg["legId"]) for leg in s["legs"]],
        leaf("DatedOperatingSegmentId", _operating_id(s)),
        leaf("Duration", s["duration"]),
        leaf("OperatingCarrierFlightNumberText", s["operatingFlightNumber"]),
    )


def _pax_journey(journey: Json) -> str:
    return node(
        "PaxJourney",
        leaf("Duration", journey["duration"]),
        leaf("PaxJourneyID", journey["journeyId"]),
        *[leaf("PaxSegmentRefID", s["segmentId"]) for s in journey["segments"]],
    )


def _pax_segment(s: Json) -> str:
    return node(
        "PaxSegment",
        leaf("DatedMarketingSegmentRefId", _marketing_id(s)),
        leaf("PaxSegmentID", s["segmentId"]),
    )


def _allowances(bundle: BundleTerms) -> list[tuple[str, int, str | None]]:
    disclosures = {d.get("ruleTypeCode"): d.get("description") for d in bundle.baggage_disclosures}
    return [
        ("CarryOn", 1 if bundle.carry_on_included else 0, disclosures.get("CarryOn")),
        ("Checked", bundle.checked_bags_included, disclosures.get("Checked")),
    ]


def _offer_text(offer: Json, items: list[Json], lists: _DataLists) -> str:
    """NewOfferType's content: an AirShopping offer (one item) or the OfferPrice priced
    offer. Each item's `flight` is plain (read with _read)."""
    pax_refs = _pax_refs(tuple(lists.pax_ids))
    parts = []
    for item in items:
        refs = lists.baggage_refs(item["fare"]["priceClassRefId"])
        if refs:
            parts.append(
                node(
                    "BaggageAssociations",
                    *[leaf("BaggageAllowanceRefID", ref) for ref in refs],
                    node("OfferFlightAssociations", _journey_ref(item["flight"]["journeyId"])),
                    pax_refs,
                )
            )
    parts.append(node("Desc", leaf("DescText", offer["description"])))
    parts.append(leaf("OfferExpirationTimeLimitDateTime", offer["expiresAt"]))
    parts.append(leaf("OfferID", offer["offerId"]))
    for item in items:
        parts.append(node("OfferItem", _offer_item(item, offer["ownerCode"], lists.pax_ids)))
    parts.append(leaf("OwnerCode", offer["ownerCode"]))
    parts.append(node("TotalPrice", _price_text(offer["totalPrice"])))
    return "".join(parts)


def _offer_item(item: Json, owner: str, pax_ids: list[str]) -> str:
    fare, flight = item["fare"], item["flight"]
    parts = []
    for row in item["passengerPrices"]:
        parts.append(
            node(
                "FareDetail",
                *[
                    _fare_component(
                        segment["cabinTypeCode"],
                        segment["cabinName"],
                        fare["fareBasisCode"],
                        segment["segmentId"],
                        fare["priceClassRefId"],
                        segment["rbd"],
                    )
                    for segment in flight["segments"]
                ],
                _pax_refs(tuple(row["paxRefIds"])),
                node("Price", _price_text(row["price"])),  # per passenger (DESIGN.md §11)
            )
        )
    parts.append(leaf("OfferItemID", item["offerItemId"]))
    parts.append(leaf("OwnerCode", owner))
    parts.append(node("Price", _price_text(item["totalPrice"])))
    association = _service_association(flight["journeyId"])
    for n, pax_id in enumerate(pax_ids, start=1):
        parts.append(
            node(
                "Service",
                association,
                _pax_refs((pax_id,)),
                leaf("ServiceID", f"{item['offerItemId']}.SRV{n}"),
            )
        )
    return "".join(parts)


# What recurs across the offers of a search, and of searches: written once per process.


@functools.lru_cache(maxsize=20_000)
def _fare_component(
    cabin_code: str, cabin_name: str, fare_basis: str, segment_id: str, price_class: str, rbd: str
) -> str:
    return node(
        "FareComponent",
        node("CabinType", leaf("CabinTypeCode", cabin_code), leaf("CabinTypeName", cabin_name)),
        leaf("FareBasisCode", fare_basis),
        leaf("PaxSegmentRefID", segment_id),
        leaf("PriceClassRefID", price_class),
        node("RBD", leaf("RBD_Code", rbd)),
    )


@functools.lru_cache(maxsize=1_000)
def _pax_refs(pax_ids: tuple[str, ...]) -> str:
    return "".join(leaf("PaxRefID", pax_id) for pax_id in pax_ids)


@functools.lru_cache(maxsize=20_000)
def _journey_ref(journey_id: str) -> str:
    return node("PaxJourneyRef", leaf("PaxJourneyRefID", journey_id))


@functools.lru_cache(maxsize=20_000)
def _service_association(journey_id: str) -> str:
    return node("OfferServiceAssociation", _journey_ref(journey_id))


def _price(element: etree._Element, price: Json) -> None:
    """SPEC.md §1 Price as PriceType's content appended to `element` (for a document
    built in lxml): see _price_text."""
    xml.append_text(element, _price_text(price))


def _price_text(price: Json | orjson.Fragment) -> str:
    """SPEC.md §1 Price as PriceType's content: BaseAmount, Fee, TaxSummary, TotalAmount.

    A search shows few distinct prices in many places (each fare class's per-passenger
    and item prices recur across journeys and bundles): each is written once per
    process, by its JSON."""
    key = _json_of(price)
    written = _PRICES.get(key)
    if written is None:
        if len(_PRICES) > PRICE_CACHE_SIZE:
            _PRICES.clear()
        written = _PRICES[key] = _write_price(_read(price))
    return written


PRICE_CACHE_SIZE = 10_000
_PRICES: dict[bytes, str] = {}


def _write_price(price: Json) -> str:
    parts = [amount_text("BaseAmount", price["base"])]
    for fee in price["fees"]:
        label = " ".join(filter(None, (fee["type"], fee.get("code"), fee.get("description"))))
        parts.append(node("Fee", amount_text("Amount", fee["amount"]), leaf("DescText", label)))
    if price["taxes"]:
        taxes = [
            node(
                "Tax",
                amount_text("Amount", tax["amount"]),
                leaf("DescText", tax["description"]) if tax.get("description") else "",
                leaf("TaxCode", tax["code"]) if tax.get("code") else "",
            )
            for tax in price["taxes"]
        ]
        total_tax = sum((xml.decimal(t["amount"]["amount"]) for t in price["taxes"]), Decimal())
        parts.append(
            node(
                "TaxSummary",
                *taxes,
                amount_text(
                    "TotalTaxAmount",
                    {"amount": total_tax, "currency": price["total"]["currency"]},
                ),
            )
        )
    parts.append(amount_text("TotalAmount", price["total"]))
    return "".join(parts)


def _read(part: Any) -> Any:
    """A part of the JSON view as plain data. The stored offers keep theirs as ready JSON
    (orjson Fragments, offers/services.py); each distinct one is read once per process,
    and what it reads is shared: never change it."""
    if not isinstance(part, orjson.Fragment):
        return part
    key = orjson.dumps(part)
    plain = _READ.get(key)
    if plain is None:
        if len(_READ) > READ_CACHE_SIZE:
            _READ.clear()
        plain = _READ[key] = orjson.loads(key)
    return plain


READ_CACHE_SIZE = 20_000
_READ: dict[bytes, Any] = {}


def _json_of(part: Any) -> bytes:
    """A part's JSON, as the JSON API writes it: the key of what is written from it."""
    return orjson.dumps(part, default=_decimal_as_number)


def _decimal_as_number(value: Any) -> Any:
    if isinstance(value, Decimal):
        return float(value)
    raise TypeError(type(value).__name__)


def _payload_attributes(request_id: str | None) -> str:
    """ndc.errors.payload_attributes, as text."""
    return xml.msg_node(
        "PayloadAttributes",
        leaf("Timestamp", clock.format_utc(clock.now())),
        leaf("TrxID", request_id) if request_id else "",
        leaf("VersionNumber", NDC_VERSION),
    )


def _point(name: str, station: str, local_time: str) -> str:
    return node(
        name, leaf("AircraftScheduledDateTime", local_time), leaf("IATA_LocationCode", station)
    )


def _marketing_id(segment: Json) -> str:
    return "MKT" + segment["segmentId"].removeprefix("SEG")


def _operating_id(segment: Json) -> str:
    return "OPS" + segment["segmentId"].removeprefix("SEG")


def _baggage_id(bundle_code: str, type_code: str) -> str:
    return f"BAG-{bundle_code}-{type_code}"


def _money(money: Json) -> str:
    return f"{xml.decimal(money['amount']):.2f} {money['currency']}"
