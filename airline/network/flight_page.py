"""The back office's flight-date page (docs/operators/back-office.md): the load of one
flight-date leg per cabin and booking class, who is booked on it, and a seat map of what is sold.

Reads only, in a fixed number of queries whatever the number of bookings (seven: the
inventory, the configuration and its cabins, the segments on the leg with their orders,
their passengers, their seats, their tickets)."""

from dataclasses import dataclass, field

from airline.network import fleet
from airline.network.models import CabinCode, FlightLeg, LegInventory
from airline.network.readers import Traveller, travellers_on_leg
from airline.network.services import cabin_specs


@dataclass(frozen=True)
class ClassLoad:
    rbd: str
    rank: int
    authorized: int  # this class and those below it may sell together (nested)
    sold_here: int  # seats sold in this class itself
    available: int  # what this class can still sell, as the nesting allows


@dataclass(frozen=True)
class CabinLoad:
    cabin: str
    name: str
    capacity: int
    sold: int
    classes: list[ClassLoad]

    @property
    def load_factor(self) -> str:
        return f"{self.sold * 100 / self.capacity:.0f}%" if self.capacity else "-"


@dataclass(frozen=True)
class SeatCell:
    designator: str  # "12A"; "" for an aisle
    state: str = "aisle"  # free, sold, blocked, aisle
    who: str = ""  # the passenger in a sold seat, with the booking


@dataclass(frozen=True)
class SeatRow:
    number: int
    cells: list[SeatCell]


@dataclass(frozen=True)
class CabinMap:
    cabin: str
    name: str
    rows: list[SeatRow]


@dataclass
class FlightPage:
    cabins: list[CabinLoad] = field(default_factory=list)
    travellers: list[Traveller] = field(default_factory=list)
    seat_map: list[CabinMap] = field(default_factory=list)
    seats_sold: int = 0  # seats assigned to a passenger


def flight_page(*, leg: FlightLeg) -> FlightPage:
    """Everything the flight-date page shows beyond the leg's own fields."""
    travellers = travellers_on_leg(leg)
    who = {t.seat: f"{t.name} ({t.record_locator})" for t in travellers if t.seat}
    seat_map = _seat_map(leg, who)
    return FlightPage(
        cabins=_cabin_loads(list(leg.inventory.order_by("cabin", "rank"))),
        travellers=travellers,
        seat_map=seat_map,
        seats_sold=len(who),
    )


def _cabin_loads(rows: list[LegInventory]) -> list[CabinLoad]:
    by_cabin: dict[str, list[LegInventory]] = {}
    for row in rows:
        by_cabin.setdefault(row.cabin, []).append(row)
    loads = []
    for cabin in fleet.CABIN_ORDER:
        ladder = by_cabin.get(cabin)
        if not ladder:
            continue
        classes, headroom = [], None
        for i, row in enumerate(ladder):
            below = ladder[i + 1].sold if i + 1 < len(ladder) else 0
            # Nested: a class sells no more than any class above it still may.
            left = row.authorized - row.sold
            headroom = left if headroom is None else min(headroom, left)
            classes.append(
                ClassLoad(row.rbd, row.rank, row.authorized, row.sold - below, max(headroom, 0))
            )
        loads.append(
            CabinLoad(cabin, CabinCode(cabin).label, ladder[0].authorized, ladder[0].sold, classes)
        )
    return loads


def _seat_map(leg: FlightLeg, who: dict[str, str]) -> list[CabinMap]:
    """Each cabin's rows, seats left to right with the aisles where the layout has them."""
    configuration = leg.configuration
    specs = sorted(cabin_specs(configuration), key=lambda c: c.first_row)
    seats = {s.designator: s for s in fleet.seats_of(specs, configuration.blocked_seats)}
    maps = []
    for spec in specs:
        rows = []
        for number in range(spec.first_row, spec.last_row + 1):
            if number in spec.skipped_rows:
                continue
            cells = []
            for g, group in enumerate(spec.seat_letters.split()):
                if g:
                    cells.append(SeatCell(""))
                for letter in group:
                    designator = f"{number}{letter}"
                    if designator in who:
                        cells.append(SeatCell(designator, "sold", who[designator]))
                    elif seats[designator].blocked:
                        cells.append(SeatCell(designator, "blocked"))
                    else:
                        cells.append(SeatCell(designator, "free"))
            rows.append(SeatRow(number, cells))
        maps.append(CabinMap(spec.cabin, spec.name, rows))
    return maps
