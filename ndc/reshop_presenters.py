"""IATA_OrderReshopRS from the JSON `data` of reshop and quote order (SPEC.md §2.7; DESIGN.md
§9, §11 "Reshop and quote", "Reshop CancelOrder cancellation").

What each offer of the answer holds (replacement offers, the quote, a cancellation or
name change quote) is described once, in the NDC guide (docs/partners/ndc.md, "OrderReshop and
OrderQuote").

Passengers are the order's (`PaxList/Pax/PaxID` PAX-...); the JSON passengerPrices name
them by the ids they were shopped with, mapped back here through `pax[].passengerId`.
"""

from collections.abc import Mapping, Sequence
from decimal import Decimal
from typing import Any

from django.conf import settings
from lxml import etree

from airline.fares.terms import BundleTerms
from ndc import xml
from ndc.errors import payload_attributes
from ndc.presenters import _DataLists, _price
from ndc.xml import amount, sub

Json = dict[str, Any]

CANCEL_PENALTY_ID = "PEN-CANCEL"
MOVED, DROPPED = "MOVED", "DROPPED"  # JSON serviceChanges actions
NAME_CHANGE_SERVICE = "SVC-NAMECHANGE"


def order_reshop_rs(
    data: Json,
    *,
    name_change: Mapping[str, Any] | None,
    cancelled_items: Sequence[str],
    bundles: Mapping[str, BundleTerms],
    request_id: str | None,
) -> bytes:
    """The JSON reshop `data` as IATA_OrderReshopRS. `name_change` is the NameChange
    instruction (the name asked for), `cancelled_items` the order items a cancellation
    quote covers."""
    return _reshop_rs(
        data,
        offers=data["offers"],
        quotes={},
        name_change=name_change,
        cancelled_items=cancelled_items,
        bundles=bundles,
        request_id=request_id,
    )


def order_quote_rs(
    data: Json, *, bundles: Mapping[str, BundleTerms], request_id: str | None
) -> bytes:
    """The JSON quote `data` as IATA_OrderReshopRS (21.3 has no OrderQuoteRS)."""
    offer = {
        **data["offer"],
        "priceDifferential": data["priceDifferential"],
        "serviceChanges": data["serviceChanges"],
    }
    return _reshop_rs(
        data,
        offers=[offer],
        quotes={q["offerItemId"]: q for q in data["itemChangeQuotes"]},
        name_change=None,
        cancelled_items=(),
        bundles=bundles,
        request_id=request_id,
    )


def _reshop_rs(
    data: Json,
    *,
    offers: list[Json],
    quotes: Mapping[str, Json],
    name_change: Mapping[str, Any] | None,
    cancelled_items: Sequence[str],
    bundles: Mapping[str, BundleTerms],
    request_id: str | None,
) -> bytes:
    root = xml.message_root("IATA_OrderReshopRS")
    response = xml.msg_sub(root, "Response")
    lists = _DataLists([{"paxId": p["paxId"], "ptc": p["ptc"]} for p in data["pax"]], bundles)
    journeys = {j["journeyId"]: j for j in data.get("journeys", [])}
    for offer in offers:
        for n, item in enumerate(offer["items"]):
            for ref in item["journeyRefIds"]:
                lists.add_journey(journeys[ref], n, item["fare"])
    lists.write(response)
    data_lists = response.find(xml.c("DataLists"))
    cancellation = data.get("cancellation")
    if cancellation is not None:
        _penalty_list(data_lists, cancellation["penaltyAmount"])
    if "nameChange" in data:
        _service_definitions(data_lists)

    order = sub(response, "Order")
    sub(order, "OrderID", data["orderId"])
    sub(order, "OwnerCode", settings.AIRLINE_DESIGNATOR)

    reshop_offers = sub(sub(response, "ReshopResults"), "ReshopOffers")
    pax_ids = {p["passengerId"]: p["paxId"] for p in data["pax"] if p.get("passengerId")}
    for offer in offers:
        _changed_offer(sub(reshop_offers, "Offer"), offer, journeys, pax_ids, quotes, lists)
    if cancellation is not None:
        _cancellation_offer(
            sub(reshop_offers, "Offer"), data["orderId"], cancellation, cancelled_items
        )
    if "nameChange" in data:
        _name_change_offer(
            sub(reshop_offers, "Offer"), data["orderId"], data["nameChange"], name_change or {}
        )
    payload_attributes(root, request_id)
    return xml.serialize(root)


# --- replacement flights and their quote ----------------------------------------------


def _changed_offer(
    element: etree._Element,
    offer: Json,
    journeys: Mapping[str, Json],
    pax_ids: Mapping[str, str],
    quotes: Mapping[str, Json],
    lists: _DataLists,
) -> None:
    owner = offer["ownerCode"]
    changes = offer.get("serviceChanges", [])
    for item in offer["items"]:
        moved = [
            c for c in changes if c["action"] == MOVED and c["offerItemId"] == item["offerItemId"]
        ]
        _added_item(sub(element, "AddedOfferItem"), item, owner, journeys, pax_ids, quotes, moved)
    for item in offer["items"]:
        refs = lists.baggage_refs(item["fare"]["priceClassRefId"])
        if refs:
            association = sub(element, "BaggageAssociations")
            for ref in refs:
                sub(association, "BaggageAllowanceRefID", ref)
            flights = sub(sub(association, "OfferFlightAssociations"), "PaxJourneyRef")
            for journey_id in item["journeyRefIds"]:
                sub(flights, "PaxJourneyRefID", journey_id)
            for pax in lists.pax:
                sub(association, "PaxRefID", pax["paxId"])
    differential = offer["priceDifferential"]
    deleted = sub(element, "DeleteOrderItem")
    for item in offer["items"]:
        for ref in item["replacesOrderItemRefIds"]:
            sub(sub(deleted, "ExistingOrderItem"), "OrderItemRefID", ref)
    _existing_services(deleted, [c for c in changes if c["action"] == DROPPED])
    sub(deleted, "OfferItemID", differential["offerItemId"])
    _differential(sub(deleted, "PriceDifferential"), differential, new_price=None)
    for change in changes:
        sub(sub(element, "Desc"), "DescText", service_change_text(change))
    sub(element, "OfferExpirationTimeLimitDateTime", offer["expiresAt"])
    sub(element, "OfferID", offer["offerId"])
    sub(element, "OwnerCode", owner)
    _price(sub(element, "TotalPrice"), offer["totalPrice"])


def _added_item(
    element: etree._Element,
    item: Json,
    owner: str,
    journeys: Mapping[str, Json],
    pax_ids: Mapping[str, str],
    quotes: Mapping[str, Json],
    moved: Sequence[Json],
) -> None:
    fare = item["fare"]
    flights = [journeys[ref] for ref in item["journeyRefIds"]]
    for ref in item["replacesOrderItemRefIds"]:
        sub(sub(element, "ExistingOrderItem"), "OrderItemRefID", ref)
    _existing_services(element, moved)
    for row in item["passengerPrices"]:
        detail = sub(element, "FareDetail")
        for segment in (s for flight in flights for s in flight["segments"]):
            component = sub(detail, "FareComponent")
            cabin = sub(component, "CabinType")
            sub(cabin, "CabinTypeCode", segment["cabinTypeCode"])
            sub(cabin, "CabinTypeName", segment["cabinName"])
            sub(component, "FareBasisCode", fare["fareBasisCode"])
            sub(component, "PaxSegmentRefID", segment["segmentId"])
            sub(component, "PriceClassRefID", fare["priceClassRefId"])
            sub(sub(component, "RBD"), "RBD_Code", segment["rbd"])
        for pax_id in row["paxRefIds"]:
            sub(detail, "PaxRefID", pax_ids.get(pax_id, pax_id))
        _price(sub(detail, "Price"), row["price"])  # per passenger (DESIGN.md §11)
    sub(element, "OfferItemID", item["offerItemId"])
    sub(element, "OwnerCode", owner)
    reshop_price = sub(element, "ReshopPrice")
    quote = quotes.get(item["offerItemId"])
    if quote is None:
        _price(sub(sub(reshop_price, "PriceAndFareDetails"), "Price"), item["totalPrice"])
    else:
        _differential(sub(reshop_price, "PriceDifferential"), quote, new_price=item["totalPrice"])
    travellers = [pax_ids.get(p, p) for row in item["passengerPrices"] for p in row["paxRefIds"]]
    for n, pax_id in enumerate(travellers, start=1):
        service = sub(element, "Service")
        journey_ref = sub(sub(service, "OfferServiceAssociation"), "PaxJourneyRef")
        for journey_id in item["journeyRefIds"]:
            sub(journey_ref, "PaxJourneyRefID", journey_id)
        sub(service, "PaxRefID", pax_id)
        sub(service, "ServiceID", f"{item['offerItemId']}.SRV{n}")


def _existing_services(element: etree._Element, changes: Sequence[Json]) -> None:
    """The order's services a replacement moves (under its AddedOfferItem) or drops
    (under the offer's DeleteOrderItem): an ExistingOrderItem per service order item,
    an ExistingService per service with JSON's action as its FutureStatusCode."""
    by_item: dict[str, list[Json]] = {}
    for change in changes:
        by_item.setdefault(change["itemId"], []).append(change)
    for item_id, services in by_item.items():
        existing = sub(element, "ExistingOrderItem")
        for change in services:
            service = sub(existing, "ExistingService")
            sub(service, "FutureStatusCode", change["action"])
            sub(service, "ServiceRefID", change["serviceId"])
        sub(existing, "OrderItemRefID", item_id)


def service_change_text(change: Json) -> str:
    """A JSON serviceChanges entry in words, as an offer's Desc: code, seat, action,
    its part in the difference, whose and which service, and why a drop."""
    words = [change["code"], change.get("seat"), change["action"]]
    text = " ".join(w for w in words if w) + f" {_money(change['balanceDelta'])}"
    text += f" ({change['serviceId']}, {change['paxRefId']}, paid {_money(change['amount'])})"
    if change["action"] == DROPPED:
        text += f": {change['reason']}"
    else:
        where = change.get("segmentRefId") or change["journeyRefId"]
        text += f": to {where}"
    return text


def _differential(element: etree._Element, differential: Json, *, new_price: Json | None) -> None:
    """SPEC.md §2.7 priceDifferential as PriceDifferentialType: what is due to the
    airline (balanceDelta > 0) or by it (< 0), the new total and the old."""
    sub(element, "DifferentialTypeCode", differential["differentialTypeCode"])
    delta = differential["balanceDelta"]
    price = sub(sub(element, "DiffPrice"), "Price")
    owed = _decimal(delta)
    if owed < 0:
        amount(price, "DueByAirlineAmount", {**delta, "amount": -owed})
    elif owed > 0:
        amount(price, "DueToAirlineAmount", delta)
    amount(price, "TotalAmount", delta)
    new = sub(sub(element, "NewPrice"), "Price")
    if new_price is not None:
        _price(new, new_price)
    else:
        amount(new, "TotalAmount", differential["newTotal"])
    amount(sub(sub(element, "OldPrice"), "Price"), "TotalAmount", differential["oldTotal"])


# --- cancellation ---------------------------------------------------------------------


def _cancellation_offer(
    element: etree._Element, order_id: str, cancellation: Json, items: Sequence[str]
) -> None:
    refund, credit = cancellation["refundAmount"], cancellation["creditAmount"]
    penalty = cancellation["penaltyAmount"]
    given_back = _decimal(refund) + _decimal(credit)
    currency = refund["currency"]
    deleted = sub(element, "DeleteOrderItem")
    for ref in items:
        sub(sub(deleted, "ExistingOrderItem"), "OrderItemRefID", ref)
    sub(deleted, "OfferItemID", order_id)
    sub(deleted, "PenaltyRefID", CANCEL_PENALTY_ID)
    differential = sub(deleted, "PriceDifferential")
    if _decimal(refund) > 0:
        kind = "Refund"
    elif _decimal(credit) > 0:
        kind = "Residual"  # IATA: "an amount kept by the airline for future use"
    else:
        kind = "EvenExchange"  # an unpaid hold: nothing paid, nothing owed
    sub(differential, "DifferentialTypeCode", kind)
    price = sub(sub(differential, "DiffPrice"), "Price")
    if given_back:
        amount(price, "DueByAirlineAmount", {"amount": given_back, "currency": currency})
    if _decimal(penalty):
        fee = sub(price, "Fee")
        amount(fee, "Amount", penalty)
        sub(fee, "DescText", "PenaltyFee Cancellation penalty")
    amount(price, "TotalAmount", {"amount": -given_back, "currency": currency})
    # The cancelled items cost nothing any more.
    amount(sub(sub(differential, "NewPrice"), "Price"), "TotalAmount", {**refund, "amount": 0})
    for label, money in (
        ("Refund to the original payment", refund),
        ("Airline credit", credit),
        ("Cancellation penalty", penalty),
    ):
        sub(sub(element, "Desc"), "DescText", f"{label}: {_money(money)}")
    sub(element, "OfferID", order_id)
    sub(element, "OwnerCode", settings.AIRLINE_DESIGNATOR)


def _penalty_list(data_lists: etree._Element, penalty: Json) -> None:
    penalties = _data_list(data_lists, "PenaltyList")
    element = sub(penalties, "Penalty")
    sub(element, "DescText", "Retained when the order items are cancelled")
    sub(element, "PenaltyID", CANCEL_PENALTY_ID)
    amount(sub(element, "Price"), "TotalAmount", penalty)
    sub(element, "TypeCode", "Cancellation")


# --- name change ----------------------------------------------------------------------


def _name_change_offer(
    element: etree._Element, order_id: str, name_change: Json, asked: Mapping[str, Any]
) -> None:
    pax_id = name_change["paxRefId"]
    sub(element, "OfferID", order_id)
    item = sub(element, "OfferItem")
    service = sub(item, "NameChangeService")
    sub(service, "PaxRefID", pax_id)
    sub(service, "ServiceDefinitionRefID", NAME_CHANGE_SERVICE)
    sub(service, "ServiceID", f"NAME-{pax_id}")
    sub(item, "OfferItemID", f"NAME-{pax_id}")
    sub(item, "OwnerCode", settings.AIRLINE_DESIGNATOR)
    new_name = sub(item, "PaxNameChange")
    if asked.get("givenName"):
        sub(new_name, "GivenName", asked["givenName"])
    sub(new_name, "PaxRefID", pax_id)
    sub(new_name, "Surname", asked.get("surname") or "")
    price = sub(item, "Price")
    fee = sub(price, "Fee")
    amount(fee, "Amount", name_change["fee"])
    sub(fee, "DescText", "ServiceFee Name change")
    amount(price, "TotalAmount", name_change["fee"])
    sub(element, "OwnerCode", settings.AIRLINE_DESIGNATOR)


def _service_definitions(data_lists: etree._Element) -> None:
    definitions = _data_list(data_lists, "ServiceDefinitionList")
    element = sub(definitions, "ServiceDefinition")
    sub(
        sub(element, "Desc"),
        "DescText",
        "Passenger name change; commit it with change order UpdatePassenger",
    )
    sub(element, "Name", "Name change")
    sub(element, "OwnerCode", settings.AIRLINE_DESIGNATOR)
    sub(element, "ServiceDefinitionID", NAME_CHANGE_SERVICE)


# --- helpers --------------------------------------------------------------------------


def _data_list(data_lists: etree._Element, name: str) -> etree._Element:
    """A new list in DataLists, in its place: 21.3's DataListsType orders its lists by
    name."""
    element = etree.Element(xml.c(name))
    for n, child in enumerate(data_lists):
        if etree.QName(child).localname > name:
            data_lists.insert(n, element)
            return element
    data_lists.append(element)
    return element


def _decimal(money: Json) -> Decimal:
    value = money["amount"]
    return Decimal(repr(value) if isinstance(value, float) else value)


def _money(money: Json) -> str:
    return f"{_decimal(money):.2f} {money['currency']}"
