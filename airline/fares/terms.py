"""What pricing and the other apps need of a bundle and a fare, without the ORM.

Built once per request (or per cache fill) from the models, then used by pure code:
pricing (airline/fares/pricing.py), seat maps and services (is this zone or bag free?),
cancellations (how much credit?) and the offer's Fare object (SPEC.md §2.2).
"""

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from typing import TYPE_CHECKING, Any

import orjson

from airline.fares.money import money
from airline.network.fleet import Zone
from airline.network.models import CabinCode

if TYPE_CHECKING:
    from airline.fares.models import Bundle, Fare

# Service codes of DESIGN.md §7 that a bundle can include.
CARRY_ON = "COB"
CHECKED_BAGS = ("CB1", "CB2", "CB3")  # cumulative: CB2 is the second bag


@dataclass(frozen=True, slots=True)
class FareTerms:
    """A published fare: one passenger, one way, one segment market, one booking class."""

    origin: str
    destination: str
    rbd: str
    base_amount: Decimal
    fare_basis: str

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.origin, self.destination, self.rbd)


@dataclass(frozen=True, slots=True)
class BundleTerms:
    """A fare family. The JSON display parts are SPEC.md §2.2 lists shared by every offer
    that shows this bundle: read them, never mutate them."""

    code: str
    name: str
    cabin: str
    supplement: Decimal  # USD per passenger per segment, part of the base
    fare_basis_suffix: str
    rank: int = 0
    description: str = ""
    carry_on_included: bool = False
    checked_bags_included: int = 0
    seat_selection: str = "none"  # models.SeatSelection
    changeable: bool = False
    change_fee: Decimal = Decimal("0.00")
    refund_method: str = "credit_scale"  # models.RefundMethod
    name_change_fee: Decimal = Decimal("0.00")  # per passenger, once ticketed
    benefits: tuple[Mapping[str, Any], ...] = field(default=(), compare=False)
    baggage_disclosures: tuple[Mapping[str, Any], ...] = field(default=(), compare=False)
    penalties: tuple[Mapping[str, Any], ...] = field(default=(), compare=False)
    seat_profiles: tuple[Mapping[str, Any], ...] = field(default=(), compare=False)
    # The four display lists above, serialized once: a search shows each bundle in dozens
    # of offers, and these lists are most of each offer's bytes (benchmarks/shopping.py).
    display_json: Mapping[str, bytes] = field(default_factory=dict, compare=False)

    def seat_zone_is_free(self, zone: str) -> bool:
        """Whether a seat of this zone (network.fleet.Zone) costs nothing in this bundle."""
        if self.seat_selection == "premium":
            return True
        return self.seat_selection == "standard" and zone == Zone.STANDARD

    def includes_service(self, code: str) -> bool:
        """Whether a service (COB, CB1..CB3) is part of the bundle, so priced at zero."""
        if code == CARRY_ON:
            return self.carry_on_included
        if code in CHECKED_BAGS:
            return CHECKED_BAGS.index(code) < self.checked_bags_included
        return False

    def cancellation_percent(self, days_before_departure: int) -> int:
        """The share of the ticket value a voluntary cancellation gives back (as credit or
        refund, per `refund_method`), read from the Cancellation penalty's restrictions so
        that an admin edit of the scale is what applies. 0 when no step covers the day
        (after departure, or no cancellation terms at all)."""
        for penalty in self.penalties:
            if penalty.get("typeCode") != "Cancellation":
                continue
            for step in penalty.get("restrictions", ()):
                low = step.get("minDaysBeforeDeparture", 0)
                high = step.get("maxDaysBeforeDeparture")
                if low <= days_before_departure and (high is None or days_before_departure <= high):
                    return int(step.get("creditPercent", 0))
        return 0

    def fare_wire(
        self,
        *,
        rbd: str,
        fare_basis_code: str,
        pax_ref_ids: Sequence[str] = (),
        prerendered: bool = False,
    ) -> dict[str, Any]:
        """SPEC.md §2.2's Fare object for a segment sold in this bundle and class. With
        `prerendered`, the display lists are orjson Fragments of `display_json`: the
        same JSON, for a response that is only serialized."""
        wire: dict[str, Any] = {
            "fareBasisCode": fare_basis_code,
            "cabinTypeCode": self.cabin,
            "cabinName": CabinCode(self.cabin).label,
            "rbd": rbd,
            "priceClassRefId": self.code,
        }
        if pax_ref_ids:
            wire["paxRefIds"] = list(pax_ref_ids)
        wire["bundleName"] = self.name
        if self.description:
            wire["description"] = self.description
        if prerendered and self.display_json:
            wire.update({name: orjson.Fragment(raw) for name, raw in self.display_json.items()})
            return wire
        wire["benefits"] = list(self.benefits)
        wire["baggageDisclosures"] = list(self.baggage_disclosures)
        wire["penalties"] = list(self.penalties)
        wire["seatProfiles"] = list(self.seat_profiles)
        return wire


def fare_terms(fare: "Fare") -> FareTerms:
    return FareTerms(
        origin=fare.origin,
        destination=fare.destination,
        rbd=fare.rbd,
        base_amount=money(fare.base_amount),
        fare_basis=fare.fare_basis,
    )


def bundle_terms(bundle: "Bundle") -> BundleTerms:
    """The terms of a Bundle row (no query)."""
    return BundleTerms(
        code=bundle.code,
        name=bundle.name,
        cabin=bundle.cabin,
        supplement=money(bundle.supplement),
        fare_basis_suffix=bundle.fare_basis_suffix,
        rank=bundle.rank,
        description=bundle.description,
        carry_on_included=bundle.carry_on_included,
        checked_bags_included=bundle.checked_bags_included,
        seat_selection=bundle.seat_selection,
        changeable=bundle.changeable,
        change_fee=money(bundle.change_fee),
        refund_method=bundle.refund_method,
        name_change_fee=money(bundle.name_change_fee),
        benefits=tuple(bundle.benefits),
        baggage_disclosures=tuple(bundle.baggage_disclosures),
        penalties=tuple(bundle.penalties),
        seat_profiles=tuple(bundle.seat_profiles),
        display_json={
            "benefits": orjson.dumps(bundle.benefits),
            "baggageDisclosures": orjson.dumps(bundle.baggage_disclosures),
            "penalties": orjson.dumps(bundle.penalties),
            "seatProfiles": orjson.dumps(bundle.seat_profiles),
        },
    )
