"""Ancillary products as pricing reads them, and their price for one passenger in one
bundle (DESIGN.md §7): what the bundle includes costs nothing, a lap infant is sold
nothing (no seat, no bag of its own), taxable products carry the US transportation tax.
"""

from dataclasses import dataclass
from decimal import Decimal

from django.conf import settings

from airline.api.memo import Refreshing
from airline.fares.models import Ancillary
from airline.fares.money import ZERO, money
from airline.fares.terms import BundleTerms

REFERENCE_SECONDS = 60


@dataclass(frozen=True, slots=True)
class Product:
    code: str
    name: str
    category: str  # AncillaryCategory
    ssr_code: str
    fee_code: str
    scope: str  # AncillaryScope
    price: Decimal
    taxable: bool
    requires: str | None
    seat_zone: str
    pieces: int

    @property
    def is_seat(self) -> bool:
        return self.category == "SEAT"


@dataclass(frozen=True, slots=True)
class Charge:
    """One passenger's price of one product: amount before tax, and the tax on it."""

    amount: Decimal
    tax: Decimal

    @property
    def total(self) -> Decimal:
        return self.amount + self.tax


def _load() -> tuple[Product, ...]:
    rows = Ancillary.objects.filter(is_active=True).select_related("requires")
    return tuple(
        Product(
            code=a.code,
            name=a.name,
            category=a.category,
            ssr_code=a.ssr_code,
            fee_code=a.fee_code,
            scope=a.scope,
            price=a.price,
            taxable=a.taxable,
            requires=a.requires.code if a.requires else None,
            seat_zone=a.seat_zone,
            pieces=a.pieces,
        )
        for a in rows.order_by("rank", "code")
    )


_products = Refreshing(_load, REFERENCE_SECONDS)


def products(categories: list[str] | None = None) -> tuple[Product, ...]:
    """Active products in display order; only `categories` when the key limits them."""
    return tuple(p for p in _products.get() if not categories or p.category in categories)


def product(code: str) -> Product | None:
    """The active product with this code."""
    return next((p for p in _products.get() if p.code == code), None)


def seat_product(zone: str) -> Product | None:
    return next((p for p in _products.get() if p.is_seat and p.seat_zone == zone), None)


def forget() -> None:
    _products.forget()


def is_included(product: Product, bundle: BundleTerms) -> bool:
    """Whether the bundle already gives this product."""
    if product.is_seat:
        return bundle.seat_zone_is_free(product.seat_zone)
    if product.pieces:
        return product.pieces <= bundle.checked_bags_included
    if product.code == "COB":
        return bundle.carry_on_included
    return False


def charge_for(product: Product, bundle: BundleTerms, ptc: str) -> Charge | None:
    """What one passenger pays for the product in this bundle; None when it is not sold
    to this passenger type (a lap infant)."""
    if ptc == "INF":
        return None
    if is_included(product, bundle):
        return Charge(ZERO, ZERO)
    tax = (
        money(product.price * Decimal(settings.US_TAXES["US"]["rate"])) if product.taxable else ZERO
    )
    return Charge(money(product.price), tax)
