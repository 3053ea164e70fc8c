"""A-la-carte items in OfferPrice, as 21.3 prices them: a SelectedOffer of a ServiceList
ALaCarteOffer (a `SelectedOfferItem` with `SelectedALaCarteOfferItem`, Qty 1) beside the
flights is priced into the PricedOffer, whose OfferItems OrderCreate then books as one
offer (the bag inside the priced offer's SelectedPricedOffer).

The services offer the partner chose from was made for the shopping offer; an order
books services offered for its priced offer (orders.booking checks the offer they come
from). So each chosen item is offered again for the priced offer, by the same service
list (offers.ancillaries.service_list, stored as a new services offer), and matched by
what it sells: the product, where it applies and the passengers. Its item id on the new
offer is the OfferItemID the PricedOffer shows and OrderCreate names; its price is that
offer's. The NDC guide (docs/partners/ndc.md, "AirShopping and OfferPrice") describes it.
"""

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from typing import Any

import orjson
from django.conf import settings
from lxml import etree

from airline.api.errors import ApiError, Err
from airline.api.responses import dumps
from ndc import xml
from ndc.order_mapping import ancillary_pick
from ndc.xml import MSG, amount, c, element_path, refused, sub, text
from offers import ancillaries as services
from offers.store import AncillaryOffer, OfferOwner, offer_record
from orders.requests.inputs import AncillaryPick
from sellers.authentication import Principal

Json = dict[str, Any]


@dataclass(frozen=True)
class Chosen:
    """One a-la-carte item as the PricedOffer sells it: its id on the services offer
    made for the priced offer, the product, where it applies, and a passengerPricing
    row per passenger."""

    offer_item_id: str
    definition_id: str
    definition: Json
    journey_ref: str | None
    segment_ref: str | None
    rows: dict[str, Json]

    @property
    def total(self) -> Decimal:
        return sum(
            (xml.decimal(r["amount"]) + xml.decimal(r["taxAmount"]) for r in self.rows.values()),
            Decimal(0),
        )


def picks_of(document: etree._Element) -> list[tuple[AncillaryPick, etree._Element]]:
    """The a-la-carte SelectedOfferItems of an OfferPriceRQ, read as create order's
    ancillary picks (Qty 1 checked), each with its element."""
    selected = document.find(f"{{{MSG}}}Request/{c('PricedOffer')}/{c('SelectedOfferList')}")
    picks = []
    if selected is None:
        return picks
    for offer in selected.findall(c("SelectedOffer")):
        offer_id = text(offer, "OfferRefID") or ""
        for item in offer.findall(c("SelectedOfferItem")):
            pick = ancillary_pick(offer_id, item)
            if pick is None:
                continue
            if pick.seat is not None:
                raise refused(
                    item.find(c("SelectedSeat")),
                    "a seat is chosen on the priced offer's SeatAvailability and booked "
                    "with OrderCreate",
                )
            picks.append((pick, item))
    return picks


def offered_again(
    *,
    principal: Principal,
    picks: Sequence[tuple[AncillaryPick, etree._Element]],
    priced: Json,
    shopped: set[str],
    now: datetime,
) -> list[Chosen]:
    """Each pick offered again for the priced offer `priced` (the JSON priced view):
    ERR-3000/3001 for an unknown or expired services offer, ERR-3002 for an item it
    lacks, ERR-3003 for a services offer of other flights (`shopped`: the flight offers
    priced with it) or a product no longer offered for them."""
    owner = OfferOwner.of(principal)
    offer = priced["offer"]
    with services.ancillary_lookup():
        trip = services.offer_trip(
            offer_id=offer["offerId"],
            item_ids=[i["offerItemId"] for i in offer["items"]],
            passengers=None,
            owner=owner,
            now=now,
        )
        listed = orjson.loads(
            dumps(
                services.service_list(
                    trip=trip,
                    owner=owner,
                    categories=principal.key.allowed_ancillary_categories,
                    now=now,
                )
            )
        )
    _, fresh = offer_record(offer_id=listed["offerId"], owner=owner, now=now)
    assert isinstance(fresh, AncillaryOffer)
    rows = _rows(listed)
    chosen = []
    for pick, element in picks:
        where = element_path(element.getparent().find(c("OfferRefID")))
        try:
            _, old = offer_record(offer_id=pick.offer_id, owner=owner, now=now)
        except ApiError as err:
            raise ApiError(err.spec, f"{where}: {err.description}", path=where) from None
        if not isinstance(old, AncillaryOffer) or old.context.get("offerId") not in shopped:
            raise ApiError(
                Err.INVALID_SELECTION,
                f"{where}: offer {pick.offer_id} is not a ServiceList ALaCarteOffer of the "
                "flight offers priced here",
                path=where,
            )
        item = old.items.get(pick.offer_item_id)
        item_path = element_path(element.find(c("OfferItemRefID")))
        if item is None:
            raise ApiError(
                Err.OFFER_ITEMS_NOT_FOUND,
                f"{item_path}: offer {pick.offer_id} has no item {pick.offer_item_id}",
                path=item_path,
            )
        passengers = list(pick.passenger_ids or item.prices)
        place = (item.kind, item.code, item.journey_ref, item.segment_ref, item.leg_id)
        match = next(
            (
                item_id
                for item_id, again in fresh.items.items()
                if (again.kind, again.code, again.journey_ref, again.segment_ref, again.leg_id)
                == place
                and all(p in again.prices for p in passengers)
            ),
            None,
        )
        if match is None:
            raise ApiError(
                Err.INVALID_SELECTION,
                f"{item_path}: {item.code} is not offered for the priced flights to "
                f"{', '.join(passengers)}",
                path=item_path,
            )
        found = rows[match]
        chosen.append(
            Chosen(
                offer_item_id=match,
                definition_id=found["definition_id"],
                definition=found["definition"],
                journey_ref=found["journey"],
                segment_ref=found["segment"],
                rows={p: found["rows"][p] for p in passengers},
            )
        )
    return chosen


def _rows(listed: Json) -> dict[str, Json]:
    """The services answer's passengerPricing rows by offer item, with their product
    and place (as ndc.ancillary_presenters groups them)."""
    items: dict[str, Json] = {}
    for service in listed["services"]:
        definition_id = f"SVC-{service['serviceCode']}"
        definition = {
            "code": service["serviceCode"],
            "name": service["name"],
            "ssr": service["ssrCode"],
            "rfisc": service["feeCode"],
            "type": service["type"],
        }
        for availability in service["segmentAvailability"]:
            for row in availability["passengerPricing"]:
                entry = items.setdefault(
                    row["offerItemId"],
                    {
                        "definition_id": definition_id,
                        "definition": definition,
                        "segment": availability.get("segmentRefId"),
                        "journey": availability.get("journeyRefId"),
                        "rows": {},
                    },
                )
                entry["rows"][row["paxRefId"]] = row
    return items


# --- the PricedOffer with them ----------------------------------------------------------


def with_items(rs: bytes, chosen: Sequence[Chosen]) -> bytes:
    """The OfferPriceRS `rs` with the chosen items in its PricedOffer (an OfferItem each,
    after the flights', a Service per passenger) and their products in
    DataLists/ServiceDefinitionList; the TotalPrice grows by them, each a Fee."""
    if not chosen:
        return rs
    root = etree.fromstring(rs)
    response = root.find(f"{{{MSG}}}Response")
    offer = response.find(c("PricedOffer"))
    anchor = offer.find(c("OwnerCode"))
    for n, entry in enumerate(chosen, start=1):
        element = etree.Element(c("OfferItem"))
        anchor.addprevious(element)
        _offer_item(element, entry, n)
    total = offer.find(c("TotalPrice"))
    total_amount = total.find(c("TotalAmount"))
    taxes = total.find(c("TaxSummary"))
    before = taxes if taxes is not None else total_amount  # PriceType: Fee, TaxSummary, Total
    for entry in chosen:
        fee = etree.Element(c("Fee"))
        before.addprevious(fee)
        amount(fee, "Amount", {"amount": entry.total, "currency": _currency(entry)})
        sub(fee, "DescText", f"{entry.definition['type']} {entry.definition['code']}")
    grown = xml.decimal(total_amount.text) + sum((e.total for e in chosen), Decimal(0))
    total_amount.text = f"{grown:.2f}"
    _definitions(response.find(c("DataLists")), chosen)
    return xml.serialize(root)


def _offer_item(element: etree._Element, entry: Chosen, n: int) -> None:
    sub(element, "OfferItemID", entry.offer_item_id)
    sub(element, "OwnerCode", settings.AIRLINE_DESIGNATOR)
    price = sub(element, "Price")
    base = sum((xml.decimal(r["amount"]) for r in entry.rows.values()), Decimal(0))
    tax = sum((xml.decimal(r["taxAmount"]) for r in entry.rows.values()), Decimal(0))
    currency = _currency(entry)
    amount(price, "BaseAmount", {"amount": base, "currency": currency})
    amount(sub(price, "TaxSummary"), "TotalTaxAmount", {"amount": tax, "currency": currency})
    amount(price, "TotalAmount", {"amount": base + tax, "currency": currency})
    for m, pax_id in enumerate(entry.rows, start=1):
        service = sub(element, "Service")
        definition = sub(sub(service, "OfferServiceAssociation"), "ServiceDefinitionRef")
        if entry.segment_ref or entry.journey_ref:
            flights = sub(definition, "OfferFlightAssociations")
            if entry.segment_ref:
                sub(sub(flights, "PaxSegmentRef"), "PaxSegmentRefID", entry.segment_ref)
            else:
                sub(sub(flights, "PaxJourneyRef"), "PaxJourneyRefID", entry.journey_ref)
        sub(definition, "ServiceDefinitionRefID", entry.definition_id)
        sub(service, "PaxRefID", pax_id)
        sub(service, "ServiceID", f"ALC{n}.SRV{m}")


def _definitions(data_lists: etree._Element, chosen: Sequence[Chosen]) -> None:
    from ndc.reshop_presenters import _data_list

    definitions = _data_list(data_lists, "ServiceDefinitionList")
    for definition_id, definition in {e.definition_id: e.definition for e in chosen}.items():
        element = sub(definitions, "ServiceDefinition")
        if definition.get("ssr"):
            instructions = sub(element, "BookingInstructions")
            sub(sub(instructions, "SpecialService"), "SpecialServiceCode", definition["ssr"])
        sub(sub(element, "Desc"), "DescText", definition["type"])
        sub(element, "Name", definition["name"])
        sub(element, "OwnerCode", settings.AIRLINE_DESIGNATOR)
        if definition.get("rfisc"):
            sub(element, "RFISC", definition["rfisc"])
        sub(element, "ServiceCode", definition["code"])
        sub(element, "ServiceDefinitionID", definition_id)


def _currency(entry: Chosen) -> str:
    return next(iter(entry.rows.values()))["currency"]
