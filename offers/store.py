"""The offer store: offers and priced offers kept server-side between calls (SPEC.md §3
"Offer validity"; DESIGN.md §7).

One search (or one pricing) is stored as one batch under one key, so a search costs one
write however many offers it returns; an offer id is `<batch id>.<n>`. Writers store plain
dicts (the shopping path builds them with ready JSON parts, and converting them would
cost every search); readers take a typed record of the offer's source with
`offer_record`: a ShoppingOffer, a PricedOffer or an AncillaryOffer. The store is the
shared cache: Redis when configured, else the database cache, never process memory,
so an offer made by one worker can be priced by another. Batches outlive their offers'
expiry by a day, so an expired offer answers ERR-3001, not ERR-3000.
"""

import secrets
from dataclasses import dataclass
from datetime import datetime, timedelta
from decimal import Decimal
from typing import Any

import orjson
import redis.exceptions
from django.conf import settings
from django.core.cache import cache
from django.db import DatabaseError

from airline.api.errors import STORAGE_RETRY_AFTER, ApiError, Err


class OfferSource:
    """Where an offer came from; it decides how it may be priced (SPEC.md §3)."""

    SHOPPING = "shopping"
    PRICING = "pricing"
    RESHOP = "reshop"
    QUOTE = "quote"  # a reshop offer repriced by quote order, for AcceptReshopOffer
    ANCILLARY = "ancillary"


STORE_ERRORS = (DatabaseError, redis.exceptions.ConnectionError, redis.exceptions.TimeoutError)
KEEP_AFTER_EXPIRY = timedelta(days=1)


@dataclass(frozen=True)
class OfferOwner:
    """Who an offer is stored for, and so who may read it again (DESIGN.md §11 "Agency
    scope"): the acting seller and the key's agency code. A key with an agency code reads
    only offers shopped or priced under that code; a key without one reads all its
    seller's, as OrderScope narrows orders. Any other reader gets ERR-3000."""

    seller_id: str
    agency_code: str = ""

    @classmethod
    def of(cls, principal) -> "OfferOwner":
        """The owner of what an authenticated caller (sellers.authentication.Principal)
        stores, and the scope of what it reads."""
        return cls(seller_id=str(principal.seller.pk), agency_code=principal.key.agency_code or "")

    def may_read(self, *, seller_id: str, agency_code: str) -> bool:
        """Whether an offer stored for `seller_id` under `agency_code` is in this scope."""
        if seller_id != self.seller_id:
            return False
        return not self.agency_code or agency_code == self.agency_code


@dataclass
class OfferBatch:
    """Offers created together: same owner, passengers, source and expiry."""

    id: str
    seller_id: str
    agency_code: str
    source: str
    created_at: datetime
    expires_at: datetime
    passengers: list[dict[str, str]]  # [{paxId, ptc}]
    offers: dict[str, dict[str, Any]]  # offer id -> the stored offer

    def offer_id(self, n: int) -> str:
        return f"{self.id}.{n}"


def new_batch(
    *, owner: OfferOwner, source: str, now: datetime, passengers: list[dict[str, str]]
) -> OfferBatch:
    ttl = timedelta(seconds=settings.OFFER_TTL_SECONDS)
    return OfferBatch(
        id=secrets.token_urlsafe(12),
        seller_id=owner.seller_id,
        agency_code=owner.agency_code,
        source=source,
        created_at=now,
        expires_at=now + ttl,
        passengers=passengers,
        offers={},
    )


def batch_save(batch: OfferBatch, fields: tuple[str, ...] | None = None) -> None:
    """Store the batch, each offer narrowed to `fields` when given; ERR-9002 if the store
    cannot be reached."""
    offers = batch.offers
    if fields is not None:
        offers = {offer_id: {f: offer[f] for f in fields} for offer_id, offer in offers.items()}
    payload = orjson.dumps(
        {
            "id": batch.id,
            "seller_id": batch.seller_id,
            "agency_code": batch.agency_code,
            "source": batch.source,
            "created_at": batch.created_at.isoformat(),
            "expires_at": batch.expires_at.isoformat(),
            "passengers": batch.passengers,
            "offers": offers,
        },
        default=_encode,
    )
    timeout = (batch.expires_at - batch.created_at + KEEP_AFTER_EXPIRY).total_seconds()
    try:
        cache.set(_key(batch.id), payload, timeout=int(timeout))
    except STORE_ERRORS as exc:
        raise _unavailable() from exc


def offer_load(
    *,
    offer_id: str,
    owner: OfferOwner,
    now: datetime,
    path: str = "offerId",
    read: dict[str, dict[str, Any] | None] | None = None,
) -> tuple[OfferBatch, dict[str, Any]]:
    """The batch and the offer with this id, if `owner` may read it. `read` keeps the
    batches a request has read already, by id: a request naming several offers of one
    batch (the directions of a search, priced together) reads and decodes it once.

    ERR-3000 when unknown, another seller's or another agency's (never reveal it
    exists), ERR-3001 when
    expired, each naming the request's field `path`; ERR-9002 when the store cannot be
    reached."""
    batch_id, dot, _ = offer_id.rpartition(".")
    if not dot or not batch_id or "\x00" in offer_id:  # no key holds one (nor can on SQL)
        raise offer_not_found(offer_id, path=path)
    if read is not None and batch_id in read:
        data = read[batch_id]
    else:
        try:
            raw = cache.get(_key(batch_id))
        except STORE_ERRORS as exc:
            raise _unavailable() from exc
        data = None if raw is None else orjson.loads(raw)
        if read is not None:
            read[batch_id] = data
    if data is None:
        raise offer_not_found(offer_id, path=path)
    agency_code = data.get("agency_code", "")  # absent from batches stored before it was kept
    readable = owner.may_read(seller_id=data["seller_id"], agency_code=agency_code)
    if not readable or offer_id not in data["offers"]:
        raise offer_not_found(offer_id, path=path)
    batch = OfferBatch(
        id=data["id"],
        seller_id=data["seller_id"],
        agency_code=agency_code,
        source=data["source"],
        created_at=datetime.fromisoformat(data["created_at"]),
        expires_at=datetime.fromisoformat(data["expires_at"]),
        passengers=data["passengers"],
        offers=data["offers"],
    )
    if now >= batch.expires_at:
        raise ApiError(
            Err.OFFER_EXPIRED,
            f"Offer {offer_id} expired at {batch.expires_at:%Y-%m-%dT%H:%M:%SZ}",
            path=path,
        )
    return batch, batch.offers[offer_id]


@dataclass(frozen=True)
class ShoppingOffer:
    """A search's offer as the store keeps it (offers.services.SHOPPING_STORED): enough
    to price it again from live data."""

    offer_id: str
    offer_item_id: str
    leg_index: int
    bundle: str
    cabin: str
    segments: list[list[int]]  # per segment, the flight-date legs it flies
    rbds: list[str]  # per segment
    journey_id: str
    total_price: dict[str, Any]  # the wire Price the search showed

    @classmethod
    def of(cls, offer_id: str, stored: dict[str, Any]) -> "ShoppingOffer":
        return cls(offer_id=offer_id, **_item_fields(stored))


def _item_fields(stored: dict[str, Any]) -> dict[str, Any]:
    """What a shopping offer and a priced item both read of their stored item."""
    return {
        "offer_item_id": stored["offerItemId"],
        "leg_index": stored["legIndex"],
        "bundle": stored["bundle"],
        "cabin": stored["cabin"],
        "segments": stored["segments"],
        "rbds": stored["rbds"],
        "journey_id": stored["journeyId"],
        "total_price": stored["totalPrice"],
    }


@dataclass(frozen=True)
class PricedItem:
    """One journey of a priced offer, with the wire parts the price response showed (the
    order keeps them as booked)."""

    offer_item_id: str
    leg_index: int
    bundle: str
    cabin: str
    segments: list[list[int]]
    rbds: list[str]
    journey_id: str
    total_price: dict[str, Any]
    fare: dict[str, Any]
    passenger_prices: list[dict[str, Any]]
    flight: dict[str, Any]  # the flight wire: legs with their local times and aircraft
    description: str

    @classmethod
    def of(cls, stored: dict[str, Any]) -> "PricedItem":
        return cls(
            **_item_fields(stored),
            fare=stored["fare"],
            passenger_prices=stored["passengerPrices"],
            flight=stored["flight"],
            description=stored["description"],
        )


@dataclass(frozen=True)
class PricedOffer:
    """A price offer's quote: its items, in selection order."""

    offer_id: str
    items: tuple[PricedItem, ...]
    total_price: dict[str, Any]

    @classmethod
    def of(cls, offer_id: str, stored: dict[str, Any]) -> "PricedOffer":
        return cls(
            offer_id=offer_id,
            items=tuple(PricedItem.of(item) for item in stored["items"]),
            total_price=stored["totalPrice"],
        )


@dataclass(frozen=True)
class AncillaryItem:
    """A seat or service item of a seat map or service list: its product, where it
    applies, and the price (amount, tax) per passenger it was offered to."""

    kind: str  # seat or service
    code: str
    prices: dict[str, tuple[Decimal, Decimal]]
    journey_ref: str | None = None
    segment_ref: str | None = None
    leg_id: int | None = None
    zone: str = ""
    cabin: str = ""

    @classmethod
    def of(cls, stored: dict[str, Any]) -> "AncillaryItem":
        return cls(
            kind=stored["kind"],
            code=stored["code"],
            prices={
                ref: (Decimal(amount), Decimal(tax))
                for ref, (amount, tax) in stored["prices"].items()
            },
            journey_ref=stored.get("journeyRef"),
            segment_ref=stored.get("segmentRef"),
            leg_id=stored.get("legId"),
            zone=stored.get("zone", ""),
            cabin=stored.get("cabin", ""),
        )


@dataclass(frozen=True)
class AncillaryOffer:
    """A seats or services answer: the offer or order it was made for (`context`) and
    its items by offerItemId."""

    offer_id: str
    context: dict[str, str]
    items: dict[str, AncillaryItem]

    @classmethod
    def of(cls, offer_id: str, stored: dict[str, Any]) -> "AncillaryOffer":
        return cls(
            offer_id=offer_id,
            context=stored["context"],
            items={item_id: AncillaryItem.of(item) for item_id, item in stored["items"].items()},
        )


OfferRecord = ShoppingOffer | PricedOffer | AncillaryOffer
_RECORDS = {
    OfferSource.SHOPPING: ShoppingOffer.of,
    OfferSource.PRICING: PricedOffer.of,
    OfferSource.ANCILLARY: AncillaryOffer.of,
}


def offer_record(
    *,
    offer_id: str,
    owner: OfferOwner,
    now: datetime,
    path: str = "offerId",
    read: dict[str, dict[str, Any] | None] | None = None,
) -> tuple[OfferBatch, OfferRecord | None]:
    """offer_load, the offer typed by its source; None for a reshop or quote offer,
    which orders.servicing.exchange reads with its own records (ExchangeOffer)."""
    batch, stored = offer_load(offer_id=offer_id, owner=owner, now=now, path=path, read=read)
    record = _RECORDS.get(batch.source)
    return batch, None if record is None else record(offer_id, stored)


def offer_not_found(offer_id: str, *, path: str = "offerId") -> ApiError:
    return ApiError(Err.OFFER_NOT_FOUND, f"Offer {offer_id} not found", path=path)


def _unavailable() -> ApiError:
    return ApiError(
        Err.OFFER_CACHE_UNAVAILABLE,
        f"The offer store is unavailable; retry in {STORAGE_RETRY_AFTER} s",
        headers={"Retry-After": STORAGE_RETRY_AFTER},
    )


def _key(batch_id: str) -> str:
    return f"offers:{batch_id}"


def _encode(value: Any) -> Any:
    if isinstance(value, Decimal):
        return str(value)  # exact: stored money keeps its cents
    raise TypeError(type(value).__name__)
