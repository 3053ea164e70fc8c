"""The one error registry: every ERR code with its HTTP status, title and auth error key.

Domain code raises `ApiError(Err.X, "what went wrong", path="field.path")`; the JSON
envelope, the auth body shape and NDC/XML each render the same error (responses.py).
"""

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, TypeVar

from rest_framework.exceptions import APIException


@dataclass(frozen=True)
class ErrorSpec:
    """One row of the registry (SPEC.md §7, plus the codes DESIGN.md §4 adds)."""

    code: str
    status: int
    title: str
    error_key: str  # the `errorKey` of the auth body shape (SPEC.md §7)


# Seconds a client is told to wait (Retry-After) when PostgreSQL or Redis cannot be
# reached: about what a failover of either or a pooler restart takes (docs/operators/production.md
# "When Redis is down").
STORAGE_RETRY_AFTER = "5"


class Err:
    """Every error the service can return. Codes are stable; titles are for people."""

    NOT_FOUND = ErrorSpec("ERR-1000", 404, "Resource not found", "NotFound")
    METHOD_NOT_ALLOWED = ErrorSpec("ERR-1001", 405, "Method not allowed", "MethodNotAllowed")
    UNSUPPORTED_VERSION = ErrorSpec("ERR-1002", 404, "Unsupported API version", "NotFound")
    UNSUPPORTED_MEDIA_TYPE = ErrorSpec(
        "ERR-1003", 415, "Content-Type must be application/json", "UnsupportedMediaType"
    )
    INVALID_VALUE = ErrorSpec("ERR-1004", 400, "Invalid field value", "InvalidValue")
    VALIDATION = ErrorSpec("ERR-1005", 422, "Request validation failed", "ValidationFailed")
    INVALID_MARKET = ErrorSpec("ERR-1006", 422, "Invalid market", "InvalidMarket")
    BODY_TOO_LARGE = ErrorSpec("ERR-1009", 413, "Request body too large", "PayloadTooLarge")
    NDC_CONTENT_TYPE = ErrorSpec(
        "ERR-1010", 415, "Content-Type must be application/xml or text/xml", "UnsupportedMediaType"
    )
    IDEMPOTENCY_MISMATCH = ErrorSpec(
        "ERR-1011", 422, "Idempotency-Key reused with a different request", "IdempotencyMismatch"
    )
    IDEMPOTENCY_IN_PROGRESS = ErrorSpec(
        "ERR-1012", 409, "A request with this Idempotency-Key is in progress", "Conflict"
    )
    AVAILABILITY_FAILED = ErrorSpec(
        "ERR-2002", 500, "Availability could not be processed", "AvailabilityFailed"
    )
    OFFER_NOT_FOUND = ErrorSpec("ERR-3000", 404, "Offer not found", "OfferNotFound")
    OFFER_EXPIRED = ErrorSpec("ERR-3001", 404, "Offer expired", "OfferExpired")
    OFFER_ITEMS_NOT_FOUND = ErrorSpec(
        "ERR-3002", 400, "Offer items not found on the offer", "OfferItemNotFound"
    )
    INVALID_SELECTION = ErrorSpec(
        "ERR-3003", 400, "Offer items do not form a valid selection", "InvalidSelection"
    )
    OFFER_FROM_RESHOP = ErrorSpec(
        "ERR-3004", 400, "Offer came from reshop; price it with quote order", "WrongPricingFlow"
    )
    OFFER_FROM_SHOPPING = ErrorSpec(
        "ERR-3005",
        400,
        "Offer came from offer search; price it with price offer",
        "WrongPricingFlow",
    )
    ORDER_NOT_FOUND = ErrorSpec("ERR-4000", 404, "Order not found", "OrderNotFound")
    ORDER_NOT_CREATED = ErrorSpec(
        "ERR-4001", 400, "Order could not be created from the selected offer", "OrderNotCreated"
    )
    CHANGE_NOT_APPLIED = ErrorSpec(
        "ERR-4002", 400, "Requested change could not be applied or quoted", "ChangeNotApplied"
    )
    JOURNEY_NOT_ON_ORDER = ErrorSpec(
        "ERR-4006", 400, "Referenced journey not found on the order", "JourneyNotFound"
    )
    PAYMENT_METHOD = ErrorSpec(
        "ERR-6000", 422, "Payment method not supported", "PaymentMethodNotSupported"
    )
    CARD_BRAND = ErrorSpec("ERR-6001", 422, "Card brand not supported", "CardBrandNotSupported")
    PAYMENT_REJECTED = ErrorSpec("ERR-6002", 400, "Payment rejected", "PaymentRejected")
    PAYMENT_TIMEOUT = ErrorSpec("ERR-6005", 503, "Payment processing timed out", "PaymentTimeout")
    UNAUTHENTICATED = ErrorSpec("ERR-8000", 401, "Authentication required", "Unauthenticated")
    FORBIDDEN = ErrorSpec("ERR-8001", 403, "Access denied", "Forbidden")
    AUTH_UNAVAILABLE = ErrorSpec(
        "ERR-8002", 503, "Authentication service unavailable", "AuthUnavailable"
    )
    TOO_MANY_REQUESTS = ErrorSpec("ERR-8003", 429, "Too many requests", "TooManyRequests")
    SERVICE_UNAVAILABLE = ErrorSpec(
        "ERR-9000", 503, "A required service is unavailable", "ServiceUnavailable"
    )
    UNEXPECTED_UPSTREAM = ErrorSpec("ERR-9001", 500, "Unexpected upstream response", "Upstream")
    OFFER_CACHE_UNAVAILABLE = ErrorSpec(
        "ERR-9002", 503, "Offer cache unavailable", "OfferCacheUnavailable"
    )
    INTERNAL = ErrorSpec("ERR-9003", 500, "Request could not be processed", "InternalError")


class Reason(StrEnum):
    """Why a change was refused: `error.reason` beside ERR-4002, which SPEC.md §4.10
    gives every refusal of reshop, quote and change order; and the two reasons of a card
    payment's outcome (OUTCOME_PENDING, PAYMENT_NOT_COMPLETED) beside the codes SPEC.md
    §7 has for them. The code stays SPEC's; the reason is ours, stable, and lets a
    client act without reading the description."""

    OFFER_UNKNOWN = "OFFER_UNKNOWN"  # no such offer for this seller and order
    OFFER_EXPIRED = "OFFER_EXPIRED"  # the offer or quote has expired: reshop again
    OFFER_NOT_QUOTED = "OFFER_NOT_QUOTED"  # a reshop offer accepted before quote order
    QUOTE_STALE = "QUOTE_STALE"  # the order changed since the quote: reshop and quote again
    FLIGHT_CHANGED = "FLIGHT_CHANGED"  # a flight no longer operates or has no seats left
    JOURNEY_DEPARTED = "JOURNEY_DEPARTED"  # the journey has departed; it cannot change
    ORDER_CANCELLED = "ORDER_CANCELLED"  # the order is cancelled: it takes no changes
    ORDER_STATUS = "ORDER_STATUS"  # the order's status (hold, closed) does not allow it
    AMOUNT_DUE = "AMOUNT_DUE"  # money is due: send a payment with the change
    ORDER_BUSY = "ORDER_BUSY"  # another request changed the order meanwhile: retry
    FARE_RULES = "FARE_RULES"  # the bundle's rules do not allow this change
    NOT_ON_ORDER = "NOT_ON_ORDER"  # an item or journey named is not (or no longer) live
    NOTHING_TO_CANCEL = "NOTHING_TO_CANCEL"  # every journey is cancelled already
    ALL_PASSENGERS = "ALL_PASSENGERS"  # an itinerary change names every passenger or none
    CABIN_NOT_SOLD = "CABIN_NOT_SOLD"  # no bundle of the cabin may be sold with this key
    COMBINATION = "COMBINATION"  # entries that cannot go together in one request
    NOT_SUPPORTED = "NOT_SUPPORTED"  # a change type this service does not offer
    ANCILLARY_REFUSED = "ANCILLARY_REFUSED"  # a seat or service cannot be sold as asked
    # ERR-9000, ERR-6005 or ERR-1012: a card payment of the request was under way when it
    # was cut short; the payment reconciler decides whether it went through. Retry with
    # the same Idempotency-Key to learn the outcome (or look for the order without one).
    OUTCOME_PENDING = "OUTCOME_PENDING"
    # ERR-4001 or ERR-4002, the settled answer of such a request: the payment did not
    # complete, nothing was booked or changed, and anything taken was given back.
    PAYMENT_NOT_COMPLETED = "PAYMENT_NOT_COMPLETED"


def order_status_reason(status: str) -> Reason:
    """The reason for refusing a change because of the order's status."""
    return Reason.ORDER_CANCELLED if status == "CANCELLED" else Reason.ORDER_STATUS


REGISTRY: dict[str, ErrorSpec] = {
    spec.code: spec for spec in vars(Err).values() if isinstance(spec, ErrorSpec)
}

# Codes whose body always has the auth shape, on every path (DESIGN.md §11).
AUTH_SHAPE_CODES = frozenset({"ERR-8000", "ERR-8001", "ERR-8002"})


class ApiError(APIException):
    """An error a client can act on. Subclasses APIException so DRF hands it to our handler
    from anywhere in the request cycle, authentication included."""

    def __init__(
        self,
        spec: ErrorSpec,
        description: str = "",
        *,
        path: str | None = None,
        fields: dict[str, str] | None = None,
        headers: dict[str, str] | None = None,
        errors: Sequence["ApiError"] = (),
        reason: Reason | None = None,
    ) -> None:
        self.spec = spec
        # Our own finer cause within the code (Reason), rendered only when set.
        self.reason = reason
        self.description = description or spec.title
        self.path = path
        self.fields = fields
        self.headers = headers or {}
        # Every error of the request when there were several (this one first): NDC
        # renders one Error element each; JSON has them in `fields` (several_errors).
        self.errors = tuple(errors)
        self.status_code = spec.status
        super().__init__(detail=self.description)

    @property
    def code(self) -> str:
        return self.spec.code

    def body(self) -> dict[str, Any]:
        """The `error` object of SPEC.md §7; optional members absent when empty."""
        error: dict[str, Any] = {
            "code": self.spec.code,
            "title": self.spec.title,
            "description": self.description,
        }
        if self.reason:
            error["reason"] = str(self.reason)
        if self.path:
            error["path"] = self.path
        if self.fields:
            error["fields"] = self.fields
        return error

    def __str__(self) -> str:
        return f"{self.spec.code} {self.description}"


# DESIGN.md §11 "Error detail size": `fields` lists at most this many.
MAX_FIELDS = 20


def several_errors(errors: Sequence[ApiError]) -> ApiError:
    """One error for every field error of a request (all at once, not one per
    try). The first decides the code, status, path and description (so a request with
    one mistake gets the error it always got); `fields` maps each path to its messages
    (SPEC.md §7), at most MAX_FIELDS, the description saying how many more there were;
    `errors` keeps each whole, for NDC's one `Error` element per error (DESIGN.md §9)."""
    flat = [e for err in errors for e in (err.errors or (err,))]
    first = flat[0]
    if len(flat) == 1:
        return first
    messages: dict[str, list[str]] = {}
    for err in flat:
        for path, message in (err.fields or {err.path or "": err.description}).items():
            if path and message not in messages.setdefault(path, []):
                messages[path].append(message)
    paths = list(messages)
    description = f"{first.description} ({len(flat)} errors in all"
    if len(paths) > MAX_FIELDS:
        description += f"; {len(paths) - MAX_FIELDS} more fields than `fields` lists"
    return ApiError(
        first.spec,
        description + ")",
        path=first.path,
        fields={p: "; ".join(messages[p]) for p in paths[:MAX_FIELDS]} or None,
        headers=first.headers,
        errors=flat,
        reason=first.reason,
    )


T = TypeVar("T")


class ErrorCollector:
    """The field errors of one request's checks, gathered so that all are reported at
    once: run each independent check in `check()`, then `raise_any()`. Only a client's
    error about a field (4xx, with a path) is gathered; anything else stops the request
    where it happens, as it would without the collector."""

    def __init__(self) -> None:
        self.errors: list[ApiError] = []

    @contextmanager
    def check(self) -> Iterator[None]:
        try:
            yield
        except ApiError as err:
            if err.spec.status >= 500 or not (err.path or err.errors):
                raise
            self.errors.append(err)

    def add(self, err: ApiError) -> None:
        self.errors.append(err)

    def value(self, read: Callable[[], T], default: T) -> T:
        """What `read()` gives, or `default` when it raised an error `check` gathers."""
        with self.check():
            return read()
        return default

    def raise_any(self) -> None:
        if self.errors:
            raise several_errors(self.errors)
