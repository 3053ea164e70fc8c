"""Seats of a seat configuration, derived from its cabin layouts (pure functions).

A configuration is stored compactly (rows, seat letters with aisles, exit and
extra-legroom rows, blocked seats); seat maps and capacities are computed from it.
"""

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from airline.network.models import CabinCode

PREMIUM_CABINS = frozenset({CabinCode.FIRST, CabinCode.BUSINESS, CabinCode.PREMIUM_ECONOMY})

# SSIM files name cabins by class letters; these are the usual ones (SSIM Appendix C).
SSIM_CLASS_TO_CABIN = {
    **dict.fromkeys("FAP", CabinCode.FIRST),
    **dict.fromkeys("JCDIZ", CabinCode.BUSINESS),
    **dict.fromkeys("WE", CabinCode.PREMIUM_ECONOMY),
}
CABIN_ORDER = (CabinCode.FIRST, CabinCode.BUSINESS, CabinCode.PREMIUM_ECONOMY, CabinCode.ECONOMY)


class Zone:
    STANDARD = "standard"
    EXTRA_LEGROOM = "extra_legroom"
    EXIT_ROW = "exit_row"
    PREMIUM = "premium"


@dataclass(frozen=True, slots=True)
class CabinSpec:
    """The data of one CabinLayout, independent of the ORM."""

    cabin: str
    name: str
    first_row: int
    last_row: int
    seat_letters: str
    skipped_rows: tuple[int, ...] = ()
    exit_rows: tuple[int, ...] = ()
    extra_legroom_rows: tuple[int, ...] = ()


@dataclass(frozen=True, slots=True)
class SeatSpec:
    designator: str  # "12A"
    row: int
    column: str
    cabin: str
    zone: str
    characteristics: tuple[str, ...]  # WINDOW / AISLE / MIDDLE, EXIT, LEGROOM, PREMIUM
    blocked: bool


def cabin_for_ssim_class(letter: str) -> str:
    return SSIM_CLASS_TO_CABIN.get(letter.upper(), CabinCode.ECONOMY)


def seats_of(cabins: Iterable[CabinSpec], blocked: Iterable[str] = ()) -> list[SeatSpec]:
    """Every seat of a configuration, front to back, left to right."""
    blocked_set = {b.upper() for b in blocked}
    seats = []
    for cabin in sorted(cabins, key=lambda c: c.first_row):
        groups = cabin.seat_letters.split()
        for row in range(cabin.first_row, cabin.last_row + 1):
            if row in cabin.skipped_rows:
                continue
            zone = _zone(cabin, row)
            for g, group in enumerate(groups):
                for i, letter in enumerate(group):
                    traits = [_position(g, len(groups), i, len(group))]
                    if row in cabin.exit_rows:
                        traits.append("EXIT")
                    if row in cabin.extra_legroom_rows or row in cabin.exit_rows:
                        traits.append("LEGROOM")
                    if cabin.cabin in PREMIUM_CABINS:
                        traits.append("PREMIUM")
                    designator = f"{row}{letter}"
                    seats.append(
                        SeatSpec(
                            designator,
                            row,
                            letter,
                            cabin.cabin,
                            zone,
                            tuple(traits),
                            designator in blocked_set,
                        )
                    )
    return seats


def capacities(cabins: Iterable[CabinSpec], blocked: Iterable[str] = ()) -> dict[str, int]:
    """Sellable seats per cabin: every seat that is not blocked."""
    result: dict[str, int] = {}
    for seat in seats_of(cabins, blocked):
        if not seat.blocked:
            result[seat.cabin] = result.get(seat.cabin, 0) + 1
    return result


def generic_cabins(counts: Mapping[str, int]) -> list[CabinSpec]:
    """A plausible layout for a configuration known only by its SSIM seat counts
    (e.g. W18Y112 in a third-party file): premium cabins four abreast, economy six
    abreast, the last row partly filled as needed; blocked seats make the count exact."""
    by_cabin: dict[str, int] = {}
    for letter, count in counts.items():
        cabin = cabin_for_ssim_class(letter)
        by_cabin[cabin] = by_cabin.get(cabin, 0) + count
    specs, row = [], 1
    for cabin in CABIN_ORDER:
        count = by_cabin.get(cabin, 0)
        if not count:
            continue
        letters = "ABC DEF" if cabin == CabinCode.ECONOMY else "AC DF"
        per_row = len(letters.replace(" ", ""))
        rows = -(-count // per_row)
        specs.append(CabinSpec(cabin, CabinCode(cabin).label, row, row + rows - 1, letters))
        row += rows
    return specs


def generic_blocked_seats(specs: Iterable[CabinSpec], counts: Mapping[str, int]) -> list[str]:
    """Seats of the last row of each cabin that the generic layout has beyond the count."""
    wanted: dict[str, int] = {}
    for letter, count in counts.items():
        cabin = cabin_for_ssim_class(letter)
        wanted[cabin] = wanted.get(cabin, 0) + count
    blocked = []
    for spec in specs:
        surplus = capacities([spec])[spec.cabin] - wanted[spec.cabin]
        last_row_letters = spec.seat_letters.replace(" ", "")
        blocked += [f"{spec.last_row}{letter}" for letter in last_row_letters[::-1][:surplus]]
    return blocked


def _zone(cabin: CabinSpec, row: int) -> str:
    if cabin.cabin in PREMIUM_CABINS:
        return Zone.PREMIUM
    if row in cabin.exit_rows:
        return Zone.EXIT_ROW
    if row in cabin.extra_legroom_rows:
        return Zone.EXTRA_LEGROOM
    return Zone.STANDARD


def _position(group: int, groups: int, index: int, size: int) -> str:
    if (group == 0 and index == 0) or (group == groups - 1 and index == size - 1):
        return "WINDOW"
    if index == 0 or index == size - 1:
        return "AISLE"
    return "MIDDLE"
