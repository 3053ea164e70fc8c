"""AirShopping and OfferPrice: the NDC request mapped to the JSON endpoint's input,
validated by the same serializer, handed to the same services, rendered from the same
JSON view of the result (DESIGN.md §9), its stored parts as they are (ready JSON, which
ndc/presenters.py reads once per process). Nothing here decides anything about offers."""

from typing import Any

import orjson
from lxml import etree

from airline.api import clock
from airline.api.quick_validation import validated
from airline.api.responses import dumps
from airline.fares import reference
from airline.network.itineraries import network_index
from ndc import a_la_carte, mapping, presenters
from offers import presenters as json_presenters
from offers.serializers import PriceIn, SearchIn
from offers.services import Selection, check_search, offers_price, offers_search
from offers.store import OfferOwner, offer_record
from sellers.authentication import Principal


def air_shopping(
    *, principal: Principal, document: etree._Element, request_id: str | None
) -> bytes:
    """IATA_AirShoppingRQ -> IATA_AirShoppingRS (as POST /json/{v}/offers)."""
    body = validated(SearchIn, mapping.air_shopping_input(document))
    query = check_search(data=body, now=clock.now())
    batch = offers_search(principal=principal, query=query)
    return presenters.air_shopping_rs(
        json_presenters.flat_view(batch),
        directions=[(d.origin, d.destination) for d in query.directions],
        bundles=_bundles(),
        request_id=request_id,
    )


def offer_price(*, principal: Principal, document: etree._Element, request_id: str | None) -> bytes:
    """IATA_OfferPriceRQ -> IATA_OfferPriceRS (as POST /json/{v}/offers/price)."""
    now = clock.now()

    def shopped_party(offer_id: str) -> list[dict[str, str]]:
        batch, _ = offer_record(offer_id=offer_id, owner=OfferOwner.of(principal), now=now)
        return [{"paxId": p["paxId"], "type": p["ptc"]} for p in batch.passengers]

    picks = a_la_carte.picks_of(document)
    body = validated(PriceIn, mapping.offer_price_input(document, shopped_party=shopped_party))
    selections = [Selection(s["offerId"], tuple(s["offerItemIds"])) for s in body["selections"]]
    batch, journeys = offers_price(
        principal=principal, selections=selections, passengers=body["passengers"]
    )
    priced = json_presenters.priced_view(batch, journeys, network_index())
    chosen = (
        a_la_carte.offered_again(
            principal=principal,
            picks=picks,
            priced=priced,
            shopped={s.offer_id for s in selections},
            now=now,
        )
        if picks
        else []
    )
    rs = presenters.offer_price_rs(priced, bundles=_bundles(), request_id=request_id)
    return a_la_carte.with_items(rs, chosen)


def _plain(data: Any) -> Any:
    """A JSON view as the JSON client reads it, read back once, whole: for the renderers
    that take plain data only (ndc/ancillaries.py); the presenters here read the stored
    offers' ready JSON parts themselves."""
    return orjson.loads(dumps(data))


def _bundles() -> dict[str, Any]:
    """Every bundle by code, for what the JSON Fare leaves out of a PriceClass and a
    BaggageAllowance (its benefits, its included bags)."""
    return {bundle.code: bundle for bundle in reference.bundles()}
