"""Journeys the schedule offers between two stations on a local date (DESIGN.md §6).

A journey is one segment (nonstop, or direct: one flight number over several legs) or a
connection of two segments of different flights at the same station, with at least the
minimum connecting time and at most the maximum, never revisiting a station.

Each worker process keeps the dated legs in memory (read-only; rebuilt from the database,
in the background, when the network version moves on), so building journeys costs no
query. Every node and worker does the same on its own: the shared state is the database.
"""

import bisect
import gc
import itertools
import logging
import sys
import threading
import time
from collections import defaultdict
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from functools import cached_property
from zoneinfo import ZoneInfo

from django.conf import settings
from django.db import DatabaseError, connection

from airline.network.models import AircraftType, FlightLeg, NetworkVersion, ScheduleLoad, Station

MINIMUM_CONNECTING_TIME = timedelta(minutes=45)
MAXIMUM_CONNECTING_TIME = timedelta(hours=6)
VERSION_CHECK_SECONDS = 1.0  # how stale a worker's view of the schedule version may be
BUILD_SWITCH_INTERVAL = 0.001  # seconds; the GIL hand-over while an index is built (5 ms otherwise)

logger = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class DatedLeg:
    id: int
    carrier: str
    flight_number: int
    flight_date: date
    leg_sequence: int
    origin: str
    destination: str
    departs_at: datetime  # UTC
    arrives_at: datetime  # UTC
    aircraft_type: str
    configuration_id: int
    govt_approval_disclosure: str


@dataclass(frozen=True)
class Segment:
    """One flight number from its board point to its off point: one or more legs."""

    legs: tuple[DatedLeg, ...]

    @property
    def origin(self) -> str:
        return self.legs[0].origin

    @property
    def destination(self) -> str:
        return self.legs[-1].destination

    @property
    def departs_at(self) -> datetime:
        return self.legs[0].departs_at

    @property
    def arrives_at(self) -> datetime:
        return self.legs[-1].arrives_at

    @property
    def carrier(self) -> str:
        return self.legs[0].carrier

    @property
    def flight_number(self) -> int:
        return self.legs[0].flight_number

    @property
    def stations(self) -> tuple[str, ...]:
        return (self.origin, *(leg.destination for leg in self.legs))


@dataclass(frozen=True)
class Journey:
    segments: tuple[Segment, ...]

    @property
    def origin(self) -> str:
        return self.segments[0].origin

    @property
    def destination(self) -> str:
        return self.segments[-1].destination

    @property
    def departs_at(self) -> datetime:
        return self.segments[0].departs_at

    @property
    def arrives_at(self) -> datetime:
        return self.segments[-1].arrives_at

    @property
    def duration(self) -> timedelta:
        return self.arrives_at - self.departs_at

    @property
    def stops(self) -> int:
        """Intermediate stops: total legs - 1 (DESIGN.md §11)."""
        return sum(len(s.legs) for s in self.segments) - 1

    @cached_property
    def key(self) -> str:
        """Identifies the journey: its legs, in order."""
        return "-".join(str(leg.id) for s in self.segments for leg in s.legs)


class NetworkIndex:
    """The dated legs of one schedule version, indexed for journey building."""

    def __init__(
        self,
        version: int,
        legs: list[DatedLeg],
        time_zones: dict[str, str],
        aircraft_codes: dict[str, str] | None = None,
    ) -> None:
        self.version = version
        self.has_schedule = True  # build_index says whether any schedule was ever loaded
        self.time_zones = {code: ZoneInfo(name) for code, name in time_zones.items()}
        self.aircraft_codes = aircraft_codes or {}
        self._legs = {leg.id: leg for leg in legs}
        departures: dict[str, list[DatedLeg]] = defaultdict(list)
        flights: dict[tuple, list[DatedLeg]] = defaultdict(list)
        for leg in legs:
            departures[leg.origin].append(leg)
            flights[(leg.carrier, leg.flight_number, leg.flight_date)].append(leg)
        self._departures = {}
        for origin, origin_legs in departures.items():
            origin_legs.sort(key=lambda leg: leg.departs_at)
            self._departures[origin] = ([leg.departs_at for leg in origin_legs], origin_legs)
        self._next_leg: dict[int, DatedLeg] = {}
        for flight_legs in flights.values():
            flight_legs.sort(key=lambda leg: leg.leg_sequence)
            for before, after in itertools.pairwise(flight_legs):
                self._next_leg[before.id] = after
        # Legs leaving a station from which a destination is reachable on the same
        # flight, by departure: a connection looks only at these, not at every leg
        # leaving a hub within six hours.
        towards: dict[tuple[str, str], list[DatedLeg]] = defaultdict(list)
        for _, origin_legs in self._departures.values():
            for leg in origin_legs:
                for segment in self._segments_from(leg):
                    towards[(leg.origin, segment.destination)].append(leg)
        self._towards = {
            key: ([leg.departs_at for leg in legs], legs) for key, legs in towards.items()
        }
        self.served_markets = self._markets()

    @property
    def leg_count(self) -> int:
        return len(self._legs)

    def station_zone(self, code: str) -> ZoneInfo:
        return self.time_zones[code]

    def is_valid_market(self, origin: str, destination: str) -> bool:
        """DESIGN.md §6: both stations known and the pair served by the schedule."""
        return (origin, destination) in self.served_markets

    def carrier_aircraft_code(self, iata_code: str) -> str:
        """The carrier's own code for an aircraft type (SPEC.md §2.2 Leg)."""
        return self.aircraft_codes.get(iata_code) or iata_code

    def leg(self, leg_id: int) -> DatedLeg | None:
        """The dated leg with this id, if this schedule version has it."""
        return self._legs.get(leg_id)

    def journey_of(self, segments: list[list[int]]) -> Journey | None:
        """The journey over these legs (ids, per segment), or None if any leg is no
        longer scheduled (a stored offer outlived a schedule change)."""
        try:
            return Journey(tuple(Segment(tuple(self._legs[i] for i in legs)) for legs in segments))
        except KeyError:
            return None

    def journeys(self, origin: str, destination: str, local_date: date) -> list[Journey]:
        """Every journey from `origin` departing on `local_date` (origin's time) to
        `destination`, earliest departure first, then shortest."""
        zone = self.time_zones.get(origin)
        if zone is None or destination not in self.time_zones or origin == destination:
            return []
        if not date.min + timedelta(days=2) <= local_date <= date.max - timedelta(days=2):
            return []  # no flights at the ends of the calendar, where day bounds overflow
        day_start = datetime.combine(local_date, datetime.min.time(), tzinfo=zone).astimezone(UTC)
        day_end = datetime.combine(
            local_date + timedelta(days=1), datetime.min.time(), tzinfo=zone
        ).astimezone(UTC)
        found: list[Journey] = []
        for first_leg in self._departing(origin, day_start, day_end):
            for segment in self._segments_from(first_leg):
                if segment.destination == destination:
                    found.append(Journey((segment,)))
                else:
                    found.extend(self._connections(segment, destination))
        found.sort(key=lambda j: (j.departs_at, j.duration, j.key))
        return found

    def _connections(self, first: Segment, destination: str) -> list[Journey]:
        visited = set(first.stations)
        journeys = []
        earliest = first.arrives_at + MINIMUM_CONNECTING_TIME
        latest = first.arrives_at + MAXIMUM_CONNECTING_TIME
        times, legs = self._towards.get((first.destination, destination), ((), ()))
        start, end = bisect.bisect_left(times, earliest), bisect.bisect_right(times, latest)
        for leg in legs[start:end]:
            if (leg.carrier, leg.flight_number) == (first.carrier, first.flight_number):
                continue  # staying on board is the direct segment, not a connection
            for second in self._segments_from(leg):
                if second.destination == destination and not visited & set(second.stations[1:]):
                    journeys.append(Journey((first, second)))
        return journeys

    def _departing(self, station: str, start: datetime, end: datetime) -> list[DatedLeg]:
        times, legs = self._departures.get(station, ((), ()))
        return legs[bisect.bisect_left(times, start) : bisect.bisect_left(times, end)]

    def _segments_from(self, first_leg: DatedLeg):
        """Segments boarding at `first_leg`: alighting after it, or after a later leg."""
        legs = [first_leg]
        seen = {first_leg.origin, first_leg.destination}
        while True:
            yield Segment(tuple(legs))
            after = self._next_leg.get(legs[-1].id)
            if after is None or after.destination in seen:
                return
            legs.append(after)
            seen.add(after.destination)

    def _markets(self) -> frozenset[tuple[str, str]]:
        """Station pairs the schedule serves on some date: by a segment, or by two
        segments through a third station (whether a given date has a connection that
        meets the connecting times is answered by `journeys`)."""
        direct: dict[str, set[str]] = defaultdict(set)
        for origin, destination in self._towards:  # every pair one flight number serves
            direct[origin].add(destination)
        markets = set(self._towards)
        for origin, middles in direct.items():
            for middle in middles:
                markets.update((origin, d) for d in direct.get(middle, ()) if d != origin)
        return frozenset(markets)


class _IndexHolder:
    """The process's current index. The first one is built on demand (nothing can be
    answered without it); later ones, when the network version moves on, are built by a
    background thread while requests keep using the current one, then swapped in with
    one assignment. One build at a time; `_flags` is never held while building, so
    /health never waits on a build (SPEC.md §4.3)."""

    def __init__(self) -> None:
        self._index: NetworkIndex | None = None
        self._build_lock = threading.Lock()
        self._flags = threading.Lock()
        self._building = False
        self._checked_at = 0.0

    def get(self) -> NetworkIndex:
        index = self._index
        if index is None:
            return self._build()
        if time.monotonic() - self._checked_at < VERSION_CHECK_SECONDS:
            return index
        self._checked_at = time.monotonic()
        if schedule_version() == index.version:
            return index
        if not settings.NETWORK_REBUILD_IN_BACKGROUND:
            return self._build()
        self.build_in_background()
        return index  # until the new one is swapped in

    @property
    def has_schedule(self) -> bool:
        """An index of a loaded schedule is in memory."""
        return self._index is not None and self._index.has_schedule

    def build_in_background(self) -> None:
        """Start a build unless one is running; returns at once."""
        with self._flags:
            if self._building:
                return
            self._building = True
        threading.Thread(target=self._build_then_close, name="network-index", daemon=True).start()

    def _build_then_close(self) -> None:
        try:
            self._build()
        except DatabaseError:
            # Not ready, or the database is down: the current index stays, /health keeps
            # its answer, and the next version check starts another build.
            logger.exception("network index build failed")
        finally:
            with self._flags:
                self._building = False
            connection.close()  # this thread's own connection

    def _build(self) -> NetworkIndex:
        with self._build_lock:
            # Read under the lock: a build that waited for another one sees the version
            # that one built and does not repeat it.
            version = schedule_version()
            if self._index is None or self._index.version != version:
                started = time.monotonic()
                with _yielding_to_requests():
                    index = build_index(version)
                    # The index is hundreds of thousands of long-lived objects; left to
                    # the cyclic collector, every full collection walks them all (~100 ms
                    # pauses, the p95 of every endpoint: benchmarks/orders.py). Frozen,
                    # they are skipped; reference counting still frees them when the
                    # index is replaced.
                    gc.freeze()
                self._index = index  # the swap: requests pick it up on their next read
                self._checked_at = time.monotonic()
                logger.info(
                    "network index version %s built: %s legs in %.2f s",
                    version,
                    index.leg_count,
                    time.monotonic() - started,
                )
            return self._index

    def reset(self) -> None:
        with self._build_lock:
            self._index = None
            self._checked_at = 0.0


@contextmanager
def _yielding_to_requests() -> Iterator[None]:
    """While the index is built beside the requests this worker serves from the previous
    one (issue 18: no search stalled over 200 ms):
    - no cyclic collection: each one the build's allocations trigger, and a
      `gc.collect()` before freezing, would walk the objects built so far in one hold of
      the GIL, 50-100 ms on end. What the build leaves behind is freed by reference
      counting; the requests' own cycles wait for the collector for the seconds of a build;
    - the GIL changes hands every BUILD_SWITCH_INTERVAL instead of every 5 ms, so a request
      back from a query or Redis gets it sooner (a search makes a dozen such trips).
    Both are process-wide, and restored after."""
    collecting, interval = gc.isenabled(), sys.getswitchinterval()
    gc.disable()
    sys.setswitchinterval(BUILD_SWITCH_INTERVAL)
    try:
        yield
    finally:
        sys.setswitchinterval(interval)
        if collecting:
            gc.enable()


_holder = _IndexHolder()


def network_index() -> NetworkIndex:
    """This process's index of the current schedule: built now only when the process has
    none yet; a newer version is built in the background (NETWORK_REBUILD_IN_BACKGROUND)
    and served once it is complete, so for a few seconds after a change a worker answers
    from the previous version. Pricing and booking re-read the legs from the database
    (inventory.leg_availability, inventory.legs_lock), so a stale index never sells a
    flight that is gone."""
    return _holder.get()


def warm_network_index() -> None:
    """Build this process's index in a background thread (gunicorn's post_worker_init)."""
    _holder.build_in_background()


def reset_network_index() -> None:
    _holder.reset()


def network_is_ready() -> bool:
    """Readiness for /health: a schedule is loaded and this process's index is warm.
    Not warm yet: start warming in the background and say so, at once."""
    if _holder.has_schedule:
        return True
    if settings.NETWORK_WARM_ON_HEALTH_CHECK:
        _holder.build_in_background()
    return False


def schedule_version() -> int:
    """The network's version (NetworkVersion: moved by every schedule load and every edit
    of a station, aircraft type or seat configuration); one primary-key read, at most
    once per VERSION_CHECK_SECONDS per process."""
    return NetworkVersion.current()


def build_index(version: int) -> NetworkIndex:
    rows = FlightLeg.objects.filter(is_cancelled=False).values_list(
        "id",
        "carrier",
        "flight_number",
        "flight_date",
        "leg_sequence",
        "origin_id",
        "destination_id",
        "departs_at",
        "arrives_at",
        "aircraft_type__iata_code",
        "configuration_id",
        "govt_approval_disclosure",
    )
    legs = [DatedLeg(*row) for row in rows.iterator(chunk_size=5000)]
    zones = dict(Station.objects.values_list("code", "time_zone"))
    aircraft = dict(AircraftType.objects.values_list("iata_code", "carrier_code"))
    index = NetworkIndex(version, legs, zones, aircraft)
    index.has_schedule = ScheduleLoad.objects.exists()
    return index


def is_valid_market(origin: str, destination: str) -> bool:
    """DESIGN.md §6, on this process's current schedule."""
    return network_index().is_valid_market(origin, destination)
