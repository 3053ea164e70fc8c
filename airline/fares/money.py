"""Money: Decimal amounts rounded in one place, and SPEC.md §1's Price object.

Every amount a Price holds is already rounded to cents, so adding and multiplying them by
passenger counts is exact: totals never drift from the sum of their parts (DESIGN.md §4).
"""

from collections.abc import Iterable
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

CENT = Decimal("0.01")
ZERO = Decimal("0.00")

# SPEC.md §1: the types a Price's fees may have.
FEE_TYPES = frozenset(
    {"Tax", "Surcharge", "ServiceFee", "PenaltyFee", "SeatFee", "BaggageFee", "PaymentFee"}
)


def money(value: Decimal | int | str) -> Decimal:
    """The one rounding of the service: to cents, half up. Floats are refused: they
    cannot hold most cent amounts exactly."""
    if isinstance(value, float):
        raise TypeError("money takes Decimal, int or str, never float")
    return Decimal(value).quantize(CENT, rounding=ROUND_HALF_UP)


def _check_cents(amount: Decimal) -> None:
    if not isinstance(amount, Decimal) or amount != amount.quantize(CENT):
        raise ValueError(f"{amount!r} is not a Decimal amount in cents; round it with money()")


def money_wire(amount: Decimal, currency: str = "USD") -> dict[str, Any]:
    """SPEC.md §1's MonetaryAmount: the amount in cents and its currency."""
    return {"amount": amount.quantize(CENT), "currency": currency}


@dataclass(frozen=True, slots=True)
class Tax:
    code: str
    description: str
    amount: Decimal

    def __post_init__(self) -> None:
        _check_cents(self.amount)

    def to_wire(self, currency: str = "USD") -> dict[str, Any]:
        return _charge_wire({}, self.code, self.description, self.amount, currency)


@dataclass(frozen=True, slots=True)
class Fee:
    type: str  # one of FEE_TYPES
    code: str
    description: str
    amount: Decimal

    def __post_init__(self) -> None:
        if self.type not in FEE_TYPES:
            raise ValueError(f"fee type {self.type!r} is not one of SPEC.md §1's")
        _check_cents(self.amount)

    def to_wire(self, currency: str = "USD") -> dict[str, Any]:
        return _charge_wire({"type": self.type}, self.code, self.description, self.amount, currency)


def _charge_wire(
    wire: dict[str, Any], code: str, description: str, amount: Decimal, currency: str
) -> dict[str, Any]:
    """A tax's or fee's wire: `wire`, then its code and description when it has them, then
    its amount (SPEC.md §1's key order)."""
    if code:
        wire["code"] = code
    if description:
        wire["description"] = description
    wire["amount"] = money_wire(amount, currency)
    return wire


@dataclass(frozen=True, slots=True)
class Price:
    """SPEC.md §1's Price. `total` is derived, so total = base + taxes + fees by
    construction rather than by discipline."""

    base: Decimal
    taxes: tuple[Tax, ...] = ()
    fees: tuple[Fee, ...] = ()

    def __post_init__(self) -> None:
        _check_cents(self.base)

    @classmethod
    def zero(cls) -> "Price":
        return cls(base=ZERO)

    @property
    def total(self) -> Decimal:
        return (
            self.base
            + sum((t.amount for t in self.taxes), ZERO)
            + sum((f.amount for f in self.fees), ZERO)
        )

    def times(self, count: int) -> "Price":
        """This price for `count` passengers (exact: every amount is in cents)."""
        return Price(
            base=self.base * count,
            taxes=tuple(Tax(t.code, t.description, t.amount * count) for t in self.taxes),
            fees=tuple(Fee(f.type, f.code, f.description, f.amount * count) for f in self.fees),
        )

    def __add__(self, other: "Price") -> "Price":
        return price_sum((self, other))

    @classmethod
    def from_wire(cls, wire: dict[str, Any]) -> "Price":
        """A Price back from its wire form (a stored offer's), amounts read exactly."""
        return cls(
            base=_amount_of(wire["base"]),
            taxes=tuple(
                Tax(t.get("code", ""), t.get("description", ""), _amount_of(t["amount"]))
                for t in wire["taxes"]
            ),
            fees=tuple(
                Fee(f["type"], f.get("code", ""), f.get("description", ""), _amount_of(f["amount"]))
                for f in wire["fees"]
            ),
        )

    def to_wire(self, currency: str = "USD") -> dict[str, Any]:
        """SPEC.md §1's Price object; amounts are 2-place Decimals, which the JSON
        renderer writes as numbers."""
        return {
            "total": money_wire(self.total, currency),
            "base": money_wire(self.base, currency),
            "taxes": [t.to_wire(currency) for t in self.taxes],
            "fees": [f.to_wire(currency) for f in self.fees],
        }


def _amount_of(wire: dict[str, Any]) -> Decimal:
    # JSON numbers come back as floats; their repr is the shortest exact decimal, which
    # for a cent amount is the amount itself.
    value = wire["amount"]
    return money(repr(value) if isinstance(value, float) else value)


def price_sum(prices: Iterable[Price]) -> Price:
    """The sum of prices with taxes merged by code and fees by (type, code), in the order
    they first appear, so an offer's total lists each tax once."""
    base = ZERO
    taxes: dict[str, Tax] = {}
    fees: dict[tuple[str, str], Fee] = {}
    for price in prices:
        base += price.base
        for tax in price.taxes:
            seen = taxes.get(tax.code)
            taxes[tax.code] = (
                tax if seen is None else Tax(seen.code, seen.description, seen.amount + tax.amount)
            )
        for fee in price.fees:
            key = (fee.type, fee.code)
            same = fees.get(key)
            fees[key] = (
                fee
                if same is None
                else Fee(same.type, same.code, same.description, same.amount + fee.amount)
            )
    return Price(base=base, taxes=tuple(taxes.values()), fees=tuple(fees.values()))
