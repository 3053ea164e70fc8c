"""Passenger rules shared by search, pricing and booking (SPEC.md §4.4, §8; DESIGN.md §8,
§11): paxIds unique, synthesized as {PTC}-{ordinal} when absent, at least one adult, at
most nine who take a seat, no more infants than adults."""

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from airline.api.errors import ApiError, Err
from airline.fares.pricing import PassengerMix

# DESIGN.md §11 "Party size": the industry's cap per booking, of passengers who take a
# seat; lap infants have their own rule (not more than adults).
MAX_SEATED = 9
# What a request may list at all: the cap plus as many lap infants. Request serializers
# refuse a longer list before any per-passenger work.
MAX_LISTED = 2 * MAX_SEATED


@dataclass(frozen=True)
class Pax:
    pax_id: str
    ptc: str  # ADT, CHD, INF
    # On an adult: the paxId of the infant on their lap, when the request says so
    # (`infantRefId`); seat maps before booking then know who may sit in an exit row.
    infant_ref: str = ""

    def wire(self) -> dict[str, str]:
        wire = {"paxId": self.pax_id, "ptc": self.ptc}
        if self.infant_ref:
            wire["infantRefId"] = self.infant_ref
        return wire


def check_pax(passengers: Iterable[Mapping[str, str]], *, id_field: str = "paxId") -> list[Pax]:
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
                passenger.get("infantRefId") or "",
            )
        )
    return _check_carriers(check_party(result, id_field=id_field, counts=ordinals))


def _check_carriers(party: list[Pax]) -> list[Pax]:
    """`infantRefId` (DESIGN.md §11 "Infants", before booking). An infant nobody names
    is given to an adult who carries none (offers.ancillaries.offer_trip)."""
    check_infant_carriers(
        [(pax.pax_id, pax.ptc, pax.infant_ref) for pax in party],
        path="passengers.infantRefId",
        every_infant=False,
    )
    return party


def check_infant_carriers(
    party: Sequence[tuple[str, str, str]], *, path: str, every_infant: bool
) -> dict[str, str]:
    """Who carries each infant, from each passenger's (id, type, the infant it names or
    ""): only an adult names an infant, an infant of this party, and each infant is
    named by one adult at most; with `every_infant` (create order) every infant is
    named. ERR-1005 at `path` otherwise. Shopping and booking share this one rule."""
    types = {pax_id: ptc for pax_id, ptc, _ in party}
    carried: dict[str, str] = {}
    for pax_id, ptc, infant in party:
        if not infant:
            continue
        if ptc != "ADT":
            raise ApiError(
                Err.VALIDATION, f"{pax_id} is {ptc}; only an adult carries an infant", path=path
            )
        if types.get(infant) != "INF":
            raise ApiError(
                Err.VALIDATION, f"{infant} is not an infant (INF) of this party", path=path
            )
        if infant in carried:
            raise ApiError(
                Err.VALIDATION,
                f"Infant {infant} is carried by both {carried[infant]} and {pax_id}",
                path=path,
            )
        carried[infant] = pax_id
    alone = [pax_id for pax_id, ptc, _ in party if ptc == "INF" and pax_id not in carried]
    if every_infant and alone:
        raise ApiError(
            Err.VALIDATION,
            f"Infant {alone[0]} needs an adult who names it in {path.rsplit('.', 1)[-1]}",
            path=path,
        )
    return carried


def check_party(
    party: list[Pax], *, id_field: str = "paxId", counts: Counter[str] | None = None
) -> list[Pax]:
    """The party rules on passengers whose ids are known: ids unique, an adult, at most
    MAX_SEATED who take a seat, no more infants than adults. `counts` per type when the
    caller has them."""
    ordinals = counts if counts is not None else Counter(p.ptc for p in party)
    seen: set[str] = set()
    for pax in party:  # linear: a set, not a count per id
        if pax.pax_id in seen:
            raise ApiError(
                Err.VALIDATION,
                f"{id_field} {pax.pax_id} is used twice",
                path=f"passengers.{id_field}",
            )
        seen.add(pax.pax_id)
    if ordinals["ADT"] == 0:
        raise ApiError(
            Err.VALIDATION, "At least one adult (ADT) must travel", path="passengers.type"
        )
    if ordinals["ADT"] + ordinals["CHD"] > MAX_SEATED:
        raise ApiError(
            Err.VALIDATION,
            f"At most {MAX_SEATED} passengers who take a seat (ADT and CHD) per booking; "
            "infants on a lap are not counted",
            path="passengers",
        )
    if ordinals["INF"] > ordinals["ADT"]:
        raise ApiError(
            Err.VALIDATION, "Infants (INF) may not outnumber adults (ADT)", path="passengers.type"
        )
    return party


def mix_of(passengers: Iterable[Pax]) -> PassengerMix:
    counts = Counter(p.ptc for p in passengers)
    return PassengerMix(adults=counts["ADT"], children=counts["CHD"], infants=counts["INF"])
