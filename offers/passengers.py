"""Passenger rules shared by search, pricing and booking (SPEC.md §4.4, §8; DESIGN.md §8,
§11): paxIds unique, synthesized as {PTC}-{ordinal} when absent, at least one adult, no
more infants than adults."""

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from airline.api.errors import ApiError, Err
from airline.fares.pricing import PassengerMix


@dataclass(frozen=True)
class Pax:
    pax_id: str
    ptc: str  # ADT, CHD, INF

    def wire(self) -> dict[str, str]:
        return {"paxId": self.pax_id, "ptc": self.ptc}


def passengers_check(
    passengers: Iterable[Mapping[str, str]], *, id_field: str = "paxId"
) -> list[Pax]:
    """Validated passengers in declaration order, with paxIds filled in. `id_field` is
    the request's name for the id (create order calls it passengerId)."""
    ordinals: Counter[str] = Counter()
    result = []
    for passenger in passengers:
        ordinals[passenger["type"]] += 1
        result.append(
            Pax(
                passenger.get(id_field) or f"{passenger['type']}-{ordinals[passenger['type']]}",
                passenger["type"],
            )
        )
    ids = [p.pax_id for p in result]
    if len(set(ids)) != len(ids):
        duplicate = next(i for i in ids if ids.count(i) > 1)
        raise ApiError(
            Err.VALIDATION, f"{id_field} {duplicate} is used twice", path=f"passengers.{id_field}"
        )
    if ordinals["ADT"] == 0:
        raise ApiError(
            Err.VALIDATION, "At least one adult (ADT) must travel", path="passengers.type"
        )
    if ordinals["INF"] > ordinals["ADT"]:
        raise ApiError(
            Err.VALIDATION, "Infants (INF) may not outnumber adults (ADT)", path="passengers.type"
        )
    return result


def mix_of(passengers: Iterable[Pax]) -> PassengerMix:
    counts = Counter(p.ptc for p in passengers)
    return PassengerMix(adults=counts["ADT"], children=counts["CHD"], infants=counts["INF"])
