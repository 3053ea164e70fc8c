"""An index patched with a change (NetworkIndex.with_changes) is the index a full build of
the changed schedule makes: the same legs, flights, departure and connection lists, served
markets and journeys, over seeded random schedules of multi-leg flights with connections
and random retimes, reroutes, cancellations, deletions and new flights. No database: the
indexes are built from generated legs."""

import random
from dataclasses import replace
from datetime import UTC, date, datetime, timedelta
from itertools import pairwise

import pytest

from airline.network.itineraries import DatedLeg, NetworkIndex

STATIONS = ["PVD", "CHS", "CLT", "MSY", "TPA", "ORF", "BOS", "ATL"]
ZONES = {code: "America/New_York" for code in STATIONS} | {"MSY": "America/Chicago"}
FIRST = date(2027, 3, 10)  # spans the US change to summer time (March 14)
DATES = [FIRST + timedelta(days=n) for n in range(7)]


class Schedule:
    """Generated dated legs, changed at random like a schedule load would."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.legs: dict[int, DatedLeg] = {}
        self.next_id = 1
        self.next_number = 100
        for _ in range(rng.randint(15, 30)):
            self.add_flight()

    def add_flight(self) -> list[DatedLeg]:
        rng = self.rng
        number, self.next_number = self.next_number, self.next_number + 1
        stations = rng.sample(STATIONS, rng.choice([2, 2, 3, 4]))
        hour = rng.randint(5, 20)
        added = []
        for day in rng.sample(DATES, rng.randint(1, len(DATES))):
            departs = datetime(day.year, day.month, day.day, hour, tzinfo=UTC)
            for sequence, (origin, destination) in enumerate(pairwise(stations), start=1):
                arrives = departs + timedelta(minutes=rng.randint(50, 200))
                added.append(
                    self._leg(number, day, sequence, origin, destination, departs, arrives)
                )
                departs = arrives + timedelta(minutes=rng.randint(30, 120))
        return added

    def _leg(self, number, day, sequence, origin, destination, departs, arrives) -> DatedLeg:
        leg = DatedLeg(
            self.next_id, "MX", number, day, sequence, origin, destination,
            departs, arrives, "320", 1, "",
        )  # fmt: skip
        self.legs[leg.id] = leg
        self.next_id += 1
        return leg

    def change(self) -> tuple[list[DatedLeg], set[int]]:
        """One random change: (legs written as they now are, leg ids removed)."""
        rng = self.rng
        written: list[DatedLeg] = []
        removed: set[int] = set()
        for _ in range(rng.randint(1, 6)):
            kind = rng.choice(["retime", "reroute", "remove", "add", "same", "equipment"])
            if kind == "add" or not self.legs:
                written += self.add_flight()
                continue
            leg = self.legs[rng.choice(sorted(self.legs))]
            if kind == "remove":
                del self.legs[leg.id]
                removed.add(leg.id)
                continue
            if kind == "retime":
                shift = timedelta(minutes=rng.choice([-300, -90, -30, 15, 45, 240]))
                leg = replace(
                    leg, departs_at=leg.departs_at + shift, arrives_at=leg.arrives_at + shift
                )
            elif kind == "reroute":
                destination = rng.choice([s for s in STATIONS if s != leg.origin])
                leg = replace(leg, destination=destination)
            elif kind == "equipment":
                leg = replace(leg, aircraft_type="E75", configuration_id=2)
            self.legs[leg.id] = leg
            written.append(leg)
        # As the change log and the legs read back say it: each leg once, as it now is.
        ids = {leg.id for leg in written} | removed
        return [self.legs[i] for i in sorted(ids) if i in self.legs], ids - set(self.legs)


def lists(structure: dict) -> dict:
    """(departure times, legs) lists by key, as comparable values: the order of legs that
    leave at the same minute is not part of an index."""
    shown = {}
    for key, (times, legs) in structure.items():
        assert times == [leg.departs_at for leg in legs]
        assert times == sorted(times)
        shown[key] = sorted((leg.departs_at, leg.id, leg) for leg in legs)
    return shown


def assert_same(patched: NetworkIndex, built: NetworkIndex, *, journeys: bool = True) -> None:
    assert patched.version == built.version
    assert patched.leg_count == built.leg_count
    assert patched._legs == built._legs
    assert patched._flights == built._flights
    assert {k: v.id for k, v in patched._next_leg.items()} == {
        k: v.id for k, v in built._next_leg.items()
    }
    assert lists(patched._departures) == lists(built._departures)
    assert lists(patched._towards) == lists(built._towards)
    assert patched.served_markets == built.served_markets
    if not journeys:
        return
    for origin in STATIONS:
        for destination in STATIONS:
            for day in DATES:
                assert [j.key for j in patched.journeys(origin, destination, day)] == [
                    j.key for j in built.journeys(origin, destination, day)
                ], (origin, destination, day)


@pytest.mark.parametrize("seed", range(12))
def test_a_patched_index_is_the_index_a_full_build_makes(seed):
    rng = random.Random(seed)
    schedule = Schedule(rng)
    index = NetworkIndex(1, list(schedule.legs.values()), ZONES)
    journeys_seen = 0
    for version in range(2, 22):
        before = {leg_id: leg for leg_id, leg in index._legs.items()}
        served_before = index.served_markets
        written, removed = schedule.change()

        patched = index.with_changes(
            version=version,
            legs=written,
            removed=removed,
            time_zones=ZONES,
            aircraft_codes={},
            has_schedule=True,
        )

        assert_same(patched, NetworkIndex(version, list(schedule.legs.values()), ZONES))
        # The old index is untouched: requests may still be reading it.
        assert index._legs == before
        assert index.served_markets == served_before
        assert_same(
            index, NetworkIndex(index.version, list(before.values()), ZONES), journeys=False
        )
        journeys_seen += sum(
            len(patched.journeys(o, d, day)) for o in STATIONS for d in STATIONS for day in DATES
        )
        index = patched
    assert journeys_seen > 0  # the schedules make journeys, so the comparisons compare


def test_a_patch_shares_what_it_does_not_touch():
    rng = random.Random(7)
    schedule = Schedule(rng)
    index = NetworkIndex(1, list(schedule.legs.values()), ZONES)
    leg = next(iter(schedule.legs.values()))
    retimed = replace(
        leg,
        departs_at=leg.departs_at + timedelta(minutes=5),
        arrives_at=leg.arrives_at + timedelta(minutes=5),
    )

    patched = index.with_changes(
        version=2,
        legs=[retimed],
        removed=(),
        time_zones=ZONES,
        aircraft_codes={},
        has_schedule=True,
    )

    untouched = [o for o in index._departures if o not in {s for s in STATIONS if s == leg.origin}]
    assert untouched
    assert all(patched._departures[o] is index._departures[o] for o in untouched)
    assert patched.served_markets is index.served_markets  # no segment pair came or went
    assert patched.leg(leg.id) == retimed
    assert index.leg(leg.id) == leg
