"""Read queries for partners, sellers and keys."""

from uuid import UUID

from sellers.keys import key_matches, split_key
from sellers.models import ApiKey, Seller


def api_key_get_by_raw(*, raw: str) -> ApiKey | None:
    """The key a client sent in `x-api-key`, or None if it is unknown or malformed."""
    prefix = split_key(raw)
    if prefix is None:
        return None
    key = ApiKey.objects.select_related("partner", "seller").filter(prefix=prefix).first()
    if key is None or not key_matches(raw, key.secret_hash):
        return None
    return key


def api_key_get_by_prefix(*, prefix: str) -> ApiKey | None:
    """The key a signed token names (the token's signature already vouches for it)."""
    return ApiKey.objects.select_related("partner", "seller").filter(prefix=prefix).first()


def api_key_is_usable(key: ApiKey) -> bool:
    """A revoked key, or a key of a deactivated partner, authenticates nothing."""
    return key.is_active and key.partner.is_active


def sellers_for_key(*, key: ApiKey) -> list[tuple[Seller, bool]]:
    """(seller, isDefault) for every seller the key may act for, default first.

    A seller key lists just its own seller, as the default (DESIGN.md §11)."""
    if key.seller_id is not None:
        return [(key.seller, True)] if key.seller.is_active else []
    sellers = Seller.objects.filter(partner_id=key.partner_id, is_active=True).order_by(
        "-is_default", "code"
    )
    return [(seller, seller.is_default) for seller in sellers]


def seller_for_key(*, key: ApiKey, seller_id: UUID | None = None) -> Seller | None:
    """The seller a key acts for: the named one if within its reach, else its default.
    None when the key cannot act for that seller (SPEC.md §5 seller-selection table)."""
    if key.seller_id is not None:
        if seller_id is not None and seller_id != key.seller_id:
            return None
        return key.seller if key.seller.is_active else None
    sellers = Seller.objects.filter(partner_id=key.partner_id, is_active=True)
    if seller_id is None:
        return sellers.filter(is_default=True).first()
    return sellers.filter(pk=seller_id).first()
