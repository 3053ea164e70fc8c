"""Who is calling: a bearer token (or a direct key in x-api-key) resolved to a key and the
one seller it acts as (SPEC.md §5, DESIGN.md §5 and §11)."""

from dataclasses import dataclass
from datetime import datetime
from uuid import UUID

import redis.exceptions
from django.conf import settings
from django.db import DatabaseError
from rest_framework.authentication import BaseAuthentication
from rest_framework_simplejwt.exceptions import TokenError
from rest_framework_simplejwt.tokens import AccessToken
from rest_framework_simplejwt.utils import aware_utcnow, datetime_from_epoch

from airline.api.errors import ApiError, Err
from sellers.authcache import remembered, remembered_fresh, remembered_under
from sellers.models import ApiKey, Seller
from sellers.selectors import (
    api_key_get_by_prefix,
    api_key_get_by_raw,
    api_key_is_usable,
    seller_for_key,
)
from sellers.services import KEY_CLAIM, SELLER_CLAIM

STORE_ERRORS = (DatabaseError, redis.exceptions.ConnectionError, redis.exceptions.TimeoutError)


@dataclass(frozen=True)
class Principal:
    """`request.user` of the API: the key used and the seller acted for (None only on the
    auth endpoints, where the seller is chosen in the request)."""

    key: ApiKey
    seller: Seller | None
    is_authenticated = True


class ApiKeyAuthentication(BaseAuthentication):
    """`x-api-key` alone: the auth endpoints (SPEC.md §4.1, §4.2)."""

    def authenticate(self, request):
        raw = request.headers.get("x-api-key")
        if not raw:
            raise ApiError(Err.UNAUTHENTICATED, "Send your API key in the x-api-key header")
        return Principal(key=key_from_header(raw), seller=None), None

    def authenticate_header(self, request) -> str:
        return 'ApiKey realm="api"'


class SellerAuthentication(BaseAuthentication):
    """`Authorization: Bearer <token>`; failing that, a key sent directly in `x-api-key`
    acts as its default seller (SPEC.md §5 item 2)."""

    def authenticate(self, request):
        header = request.headers.get("Authorization")
        if header:
            return principal_from_header(header, request), None
        raw = request.headers.get("x-api-key")
        if raw:
            key = key_from_header(raw)
            return Principal(key=key, seller=seller_or_forbidden(key, None)), None
        return None

    def authenticate_header(self, request) -> str:
        return 'Bearer realm="api"'


class BearerAuthentication(BaseAuthentication):
    """`Authorization: Bearer <token>` only: NDC/XML (SPEC.md §4.14), where x-api-key is
    not required and has no effect, so a key sent alone is no credential (ERR-8000)."""

    def authenticate(self, request):
        header = request.headers.get("Authorization")
        return (principal_from_header(header, request), None) if header else None

    def authenticate_header(self, request) -> str:
        return 'Bearer realm="api"'


def principal_from_header(header: str, request=None) -> Principal:
    """The principal of an `Authorization` header, which must be `Bearer <token>`;
    `request` (DRF's) lets it come unconfirmed (principal_from_token)."""
    scheme, _, token = header.partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise ApiError(Err.UNAUTHENTICATED, "Authorization must be 'Bearer <token>'")
    return principal_from_token(token.strip(), request)


def key_from_header(raw: str) -> ApiKey:
    """The usable key behind a raw `x-api-key` value: ERR-8000 if unknown, ERR-8001 if
    revoked, ERR-8002 if the key store cannot be reached."""
    try:
        key = api_key_get_by_raw(raw=raw)
    except STORE_ERRORS as exc:
        raise auth_store_unavailable() from exc
    if key is None:
        raise ApiError(Err.UNAUTHENTICATED, "Unknown API key")
    if not api_key_is_usable(key):
        raise ApiError(Err.FORBIDDEN, "This API key has been revoked")
    return key


def principal_from_token(token: str, request=None) -> Principal:
    """The principal a valid token acts as. Given the DRF `request` of a view whose
    throttle counts the request in Redis (`confirms_auth_stamp`), a principal resolved
    lately comes back without reading the auth stamp (sellers/authcache.py), marked
    pending on the request: the count reads the stamp in its own round trip and
    `auth_confirm` settles the principal before anything but a permission check acts
    on it, and a permission check settles it before refusing."""
    prefix, seller_id = _token_claims(token)
    key = (prefix, seller_id)
    if request is not None and _stamp_read_by_count(request):
        known = remembered_fresh(key)
        if known is not None:
            stamp, principal = known
            request._request.auth_pending = _Pending(key, stamp, prefix, seller_id)
            return principal  # type: ignore[return-value]
    try:
        return remembered(key, lambda: _resolve(prefix, seller_id))
    except STORE_ERRORS as exc:
        raise auth_store_unavailable() from exc


@dataclass(frozen=True)
class _Pending:
    """A principal taken from sellers/authcache.py before the stamp was read."""

    key: tuple
    stamp: object
    prefix: str
    seller_id: UUID


def _stamp_read_by_count(request) -> bool:
    """Whether a throttle that settles pending principals (`confirms_auth_stamp`) will
    count this request: the view's throttles as DRF's check_throttles takes them, so
    that a view choosing its throttles per request never leaves a principal pending."""
    view = (getattr(request, "parser_context", None) or {}).get("view")
    if not settings.REDIS_ENABLED or view is None:
        return False
    return any(getattr(throttle, "confirms_auth_stamp", False) for throttle in view.get_throttles())


_UNREAD = object()


def auth_pending(request) -> bool:
    """Whether `request`'s principal still waits for `auth_confirm`."""
    return getattr(getattr(request, "_request", request), "auth_pending", None) is not None


def auth_confirm(request, stamp: object = _UNREAD) -> bool:
    """Settle a pending principal (principal_from_token) against the auth stamp:
    `stamp` as read raw by the caller, else read here. Under another stamp it is
    resolved again, and request.user replaced (ERR-8000/8001/8002 as on any
    authentication). True when request.user was replaced."""
    underlying = getattr(request, "_request", request)
    pending = getattr(underlying, "auth_pending", None)
    if pending is None:
        return False
    underlying.auth_pending = None
    if stamp is not _UNREAD and (stamp or b"none") == pending.stamp:
        return False

    def resolve() -> Principal:
        return _resolve(pending.prefix, pending.seller_id)

    try:
        if stamp is _UNREAD:
            principal = remembered(pending.key, resolve)
        else:
            principal = remembered_under(pending.key, stamp, resolve)
    except STORE_ERRORS as exc:
        raise auth_store_unavailable() from exc
    if principal is request.user:
        return False
    request.user = principal
    return True


# Tokens whose signature and claims were checked, each with the instant it stops being
# valid: checking a signature costs more than the rest of authentication. A token is a
# signed, immutable string, so all that changes for it over time is its expiry, which a
# reuse checks as simplejwt does (real time, LEEWAY). Whether its key and seller are
# still usable is checked on every request either way (`remembered` below).
_verified: dict[str, tuple[str, UUID, datetime]] = {}
VERIFIED_MAX_ENTRIES = 50_000


def _token_claims(token: str) -> tuple[str, UUID]:
    """(key prefix, seller id) of a valid bearer token; ERR-8000 when it is not."""
    known = _verified.get(token)
    if known is not None and aware_utcnow() < known[2]:
        return known[0], known[1]
    try:
        claims = AccessToken(token)
        prefix, seller_id = str(claims[KEY_CLAIM]), UUID(str(claims[SELLER_CLAIM]))
        valid_until = datetime_from_epoch(claims["exp"]) + claims.get_token_backend().get_leeway()
    except (TokenError, KeyError, ValueError, TypeError, OverflowError):
        # OverflowError: a signed token whose `exp` no date can hold (1e30).
        raise ApiError(Err.UNAUTHENTICATED, "The bearer token is invalid or has expired") from None
    if len(_verified) > VERIFIED_MAX_ENTRIES:
        _verified.clear()
    _verified[token] = (prefix, seller_id, valid_until)
    return prefix, seller_id


def _resolve(prefix: str, seller_id: UUID) -> Principal:
    """The key and seller a token names, checked (sellers/authcache.py reuses the result)."""
    try:
        key = api_key_get_by_prefix(prefix=prefix)
    except STORE_ERRORS as exc:
        raise auth_store_unavailable() from exc
    # DESIGN.md §5: a revoked key's tokens fail at once, as unauthenticated.
    if key is None or not api_key_is_usable(key):
        raise ApiError(
            Err.UNAUTHENTICATED, "The bearer token is no longer valid; request a new one"
        )
    return Principal(key=key, seller=seller_or_forbidden(key, seller_id))


def seller_or_forbidden(key: ApiKey, seller_id: UUID | None) -> Seller:
    try:
        seller = seller_for_key(key=key, seller_id=seller_id)
    except STORE_ERRORS as exc:
        raise auth_store_unavailable() from exc
    if seller is None:
        raise ApiError(Err.FORBIDDEN, "This API key cannot act for the requested seller")
    return seller


def auth_store_unavailable() -> ApiError:
    return ApiError(
        Err.AUTH_UNAVAILABLE,
        "The authentication store is unavailable; retry later",
        headers={"Retry-After": "5"},  # about what a failover of PostgreSQL takes
    )
