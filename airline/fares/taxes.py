"""US taxes and fees on domestic air transportation, as carriers file them (DESIGN.md §7).

The amounts change by law every year or two, so they live in the `US_TAXES` setting
(airline/settings.py), not in code. Each entry has exactly one way of charging:

- `rate`: a share of the base (fare plus bundle supplement): US, the 7.5% ticket tax.
- `per_segment`: an amount per flight segment in the tax law's sense (26 U.S.C. 4261: a
  domestic segment is one takeoff and one landing), i.e. per *leg* of ours: a direct
  one-stop flight, one segment in SPEC.md's sense, pays ZP twice.
- `per_enplanement`: an amount each time the passenger boards. Staying on board at the
  stop of a direct flight is not an enplanement, so a segment enplanes once however many
  legs it has; a connection enplanes again. Optional caps per one-way trip:
  `max_per_one_way` (an amount: AY as DESIGN.md §7 files it) and
  `max_enplanements_per_one_way` (a count: XF, the passenger facility charge, which 14 CFR
  part 158 limits to two airports per one-way trip).

`price_option` prices one direction of travel (one legIndex), so "per one-way trip" is
per call.
"""

from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Any

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

from airline.fares.money import ZERO, Tax, money

_BASES = ("rate", "per_segment", "per_enplanement")
_KEYS = frozenset({"description", *_BASES, "max_per_one_way", "max_enplanements_per_one_way"})


@dataclass(frozen=True, slots=True)
class TaxRule:
    """One tax of the setting, parsed (see the module docstring for its meaning)."""

    code: str
    description: str
    rate: Decimal | None = None
    per_leg: Decimal | None = None  # the setting's `per_segment`
    per_enplanement: Decimal | None = None
    max_per_one_way: Decimal | None = None
    max_enplanements_per_one_way: int | None = None

    def amount(self, *, base: Decimal, legs: int, enplanements: int) -> Decimal:
        """What one passenger pays on a one-way trip with this base and these counts."""
        if self.rate is not None:
            return money(base * self.rate)
        if self.per_leg is not None:
            return money(self.per_leg * legs)
        assert self.per_enplanement is not None  # parse_tax_rules lets no rule lack all three
        if self.max_enplanements_per_one_way is not None:
            enplanements = min(enplanements, self.max_enplanements_per_one_way)
        amount = self.per_enplanement * enplanements
        if self.max_per_one_way is not None:
            amount = min(amount, self.max_per_one_way)
        return money(amount)


def taxes_for_one_way(
    rules: tuple[TaxRule, ...], *, base: Decimal, legs: int, enplanements: int
) -> tuple[Tax, ...]:
    """One passenger's taxes on a one-way trip, in the setting's order; a tax that comes
    to zero is left out rather than shown as 0.00."""
    taxes = []
    for rule in rules:
        amount = rule.amount(base=base, legs=legs, enplanements=enplanements)
        if amount != ZERO:
            taxes.append(Tax(rule.code, rule.description, amount))
    return tuple(taxes)


_cached: tuple[TaxRule, ...] | None = None


def tax_rules() -> tuple[TaxRule, ...]:
    """The parsed `US_TAXES` setting, parsed once per process (pricing is a hot path)."""
    global _cached
    if _cached is None:
        _cached = parse_tax_rules(settings.US_TAXES)
    return _cached


def forget_tax_rules(*, setting: str, **kwargs: Any) -> None:
    """`setting_changed` receiver (connected in apps.py): re-read after override_settings."""
    global _cached
    if setting == "US_TAXES":
        _cached = None


def parse_tax_rules(config: Mapping[str, Mapping[str, Any]]) -> tuple[TaxRule, ...]:
    """Check and convert the setting; a mistake stops the process rather than mispricing."""
    rules = []
    for code, entry in config.items():
        unknown = set(entry) - _KEYS
        bases = [key for key in _BASES if key in entry]
        if unknown or len(bases) != 1:
            raise ImproperlyConfigured(
                f"US_TAXES[{code!r}] needs exactly one of {', '.join(_BASES)}"
                + (f" and has unknown keys {sorted(unknown)}" if unknown else "")
            )
        caps = {"max_per_one_way", "max_enplanements_per_one_way"} & set(entry)
        if caps and bases[0] != "per_enplanement":
            raise ImproperlyConfigured(f"US_TAXES[{code!r}]: caps apply to per_enplanement only")
        max_count = entry.get("max_enplanements_per_one_way")
        if max_count is not None and (not isinstance(max_count, int) or max_count < 0):
            raise ImproperlyConfigured(
                f"US_TAXES[{code!r}]: max_enplanements_per_one_way must be a whole number"
            )
        rules.append(
            TaxRule(
                code=code,
                description=str(entry.get("description", "")),
                rate=_decimal(code, entry, "rate"),
                per_leg=_decimal(code, entry, "per_segment"),
                per_enplanement=_decimal(code, entry, "per_enplanement"),
                max_per_one_way=_decimal(code, entry, "max_per_one_way"),
                max_enplanements_per_one_way=max_count,
            )
        )
    return tuple(rules)


def _decimal(code: str, entry: Mapping[str, Any], key: str) -> Decimal | None:
    if key not in entry:
        return None
    value = entry[key]
    try:
        # str() first: a float in the setting would otherwise bring its binary error.
        amount = Decimal(str(value))
    except (InvalidOperation, ValueError):
        amount = None
    if amount is None or not amount.is_finite() or amount < 0 or isinstance(value, bool):
        raise ImproperlyConfigured(f"US_TAXES[{code!r}][{key!r}] must be a non-negative amount")
    return amount
