"""Write flows for partners, sellers, API keys and tokens."""

import re
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import transaction
from rest_framework_simplejwt.tokens import AccessToken

from sellers.authcache import auth_changed
from sellers.keys import generate_key, hash_key
from sellers.models import ApiKey, Partner, Seller

AGENCY_CODE = re.compile(r"^[A-Z0-9]{1,10}$")
CODE = re.compile(r"^[A-Z0-9]{2,16}$")

# Claims of our access tokens: which key and which seller (SPEC.md §5: one seller each).
KEY_CLAIM = "key"
SELLER_CLAIM = "seller"


@dataclass(frozen=True)
class IssuedApiKey:
    """A key just created, with its raw value: the only time the raw value exists."""

    key: ApiKey
    raw: str


@dataclass(frozen=True)
class IssuedToken:
    access_token: str
    expires_in: int


def partner_ensure(*, code: str, name: str) -> Partner:
    """The partner with this code, created if missing (idempotent, for seeding)."""
    _check_code(code)
    partner, _ = Partner.objects.get_or_create(code=code, defaults={"name": name})
    return partner


@transaction.atomic
def seller_ensure(*, partner: Partner, code: str, name: str, is_default: bool = False) -> Seller:
    """The partner's seller with this code, created if missing; `is_default` makes it the
    partner's one default seller."""
    _check_code(code)
    # Lock the partner: two concurrent default changes would otherwise both clear and set.
    Partner.objects.select_for_update().get(pk=partner.pk)
    seller = Seller.objects.filter(code=code).first()
    if seller is not None and seller.partner_id != partner.pk:
        raise ValidationError(f"Seller {code} belongs to another partner")
    if seller is None:
        seller = Seller.objects.create(partner=partner, code=code, name=name)
    if is_default and not seller.is_default:
        seller_make_default(seller=seller)
    return seller


@transaction.atomic
def seller_make_default(*, seller: Seller) -> None:
    """Make `seller` its partner's default, in one step that keeps exactly one default."""
    Partner.objects.select_for_update().get(pk=seller.partner_id)
    Seller.objects.filter(partner_id=seller.partner_id, is_default=True).exclude(
        pk=seller.pk
    ).update(is_default=False)
    seller.is_default = True
    seller.save(update_fields=["is_default"])


def api_key_create(
    *,
    partner: Partner,
    seller: Seller | None = None,
    name: str = "",
    access_level: str = ApiKey.Access.FULL,
    agency_code: str = "",
    allowed_bundles: Iterable[str] = (),
    allowed_ancillary_categories: Iterable[str] = (),
    requests_per_minute: int | None = None,
) -> IssuedApiKey:
    """Create a partner key (no seller) or a seller key; the raw key is returned once."""
    prefix, raw = generate_key()
    key = ApiKey(
        partner=partner,
        seller=seller,
        name=name,
        prefix=prefix,
        secret_hash=hash_key(raw),
        access_level=access_level,
        agency_code=agency_code,
        allowed_bundles=list(allowed_bundles),
        allowed_ancillary_categories=list(allowed_ancillary_categories),
        requests_per_minute=(
            settings.API_KEY_DEFAULT_RATE_PER_MINUTE
            if requests_per_minute is None
            else requests_per_minute
        ),
    )
    check_api_key(key)
    key.save()
    return IssuedApiKey(key=key, raw=raw)


def check_api_key(key: ApiKey) -> None:
    """Normalize and validate a key's editable properties; raises ValidationError."""
    key.agency_code = (key.agency_code or "").strip().upper()
    errors: dict[str, str] = {}
    if key.seller is not None and key.seller.partner_id != key.partner_id:
        errors["seller"] = "A seller key's seller must belong to the key's partner."
    if key.agency_code and not AGENCY_CODE.match(key.agency_code):
        errors["agency_code"] = "Agency code: 1 to 10 letters or digits."
    if key.access_level not in ApiKey.Access.values:
        errors["access_level"] = "Access level must be full or read."
    if not key.requests_per_minute or key.requests_per_minute < 1:
        errors["requests_per_minute"] = "Requests per minute must be at least 1."
    for field in ("allowed_bundles", "allowed_ancillary_categories"):
        codes = getattr(key, field)
        if not isinstance(codes, list) or not all(isinstance(c, str) and c.strip() for c in codes):
            errors[field] = "A list of codes (empty means all)."
        else:
            setattr(key, field, sorted({c.strip().upper() for c in codes}))
    if errors:
        raise ValidationError(errors)


def api_key_update(*, key: ApiKey, fields: Iterable[str]) -> None:
    """Save edits to a key's properties (access, agency code, products, rate, name)."""
    editable = {
        "name",
        "access_level",
        "agency_code",
        "allowed_bundles",
        "allowed_ancillary_categories",
        "requests_per_minute",
    }
    changed = [f for f in fields if f in editable]
    check_api_key(key)
    if changed:
        key.save(update_fields=changed)


def api_key_revoke(*, key: ApiKey, at: datetime) -> bool:
    """Revoke a key; its tokens stop working on their next request. False if it already
    was revoked."""
    revoked = ApiKey.objects.filter(pk=key.pk, is_active=True).update(
        is_active=False, revoked_at=at
    )
    auth_changed()  # a bulk update skips save(): tell the token caches ourselves
    key.refresh_from_db(fields=["is_active", "revoked_at"])
    return bool(revoked)


def token_issue(*, key: ApiKey, seller: Seller, now: datetime) -> IssuedToken:
    """A signed bearer token acting as `seller` through `key` (SPEC.md §4.1)."""
    lifetime = settings.API_TOKEN_LIFETIME_SECONDS
    token = AccessToken()
    token[KEY_CLAIM] = key.prefix
    token[SELLER_CLAIM] = str(seller.pk)
    token.set_iat(at_time=now)
    token.set_exp(from_time=now, lifetime=timedelta(seconds=lifetime))
    return IssuedToken(access_token=str(token), expires_in=lifetime)


def _check_code(code: str) -> None:
    if not CODE.match(code):
        raise ValidationError(f"Code {code!r}: 2 to 16 uppercase letters or digits")
