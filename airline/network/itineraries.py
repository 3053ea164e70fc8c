"""Journeys the schedule offers between two stations on a local date (DESIGN.md §6).

A journey is one segment (nonstop, or direct: one flight number over several legs) or a
connection of two segments of different flights at the same station, with at least the
minimum connecting time and at most the maximum, never revisiting a station.

Each worker process keeps the dated legs in memory (read-only; a new index is swapped in
when the network version moves on, patched with the legs the change log names), so
building journeys costs no query. Every node and worker does the same on its own: the
shared state is the database.

It is one module because the index and the holder that swaps it share one in-memory
state and one rule (a built index is never changed in place: a patch or a rebuild
makes a new one), which a reader checks in one place.
"""

import bisect
import gc
import itertools
import logging
import os
import sys
import threading
import time
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from functools import cached_property
from zoneinfo import ZoneInfo

from django.conf import settings
from django.db import DatabaseError, connection
from django.db.models import QuerySet

from airline.api.errors import ApiError, Err
from airline.network.models import (
    AircraftType,
    FlightLeg,
    NetworkChange,
    NetworkVersion,
    ScheduleLoad,
    Station,
)

MINIMUM_CONNECTING_TIME = timedelta(minutes=45)
MAXIMUM_CONNECTING_TIME = timedelta(hours=6)
VERSION_CHECK_SECONDS = 1.0  # tests (no poller): how often a request checks the version
POLL_SECONDS = 0.1  # production: how often a worker's poller reads the version (a PK read)
FRESH_WAIT_SECONDS = 0.5  # production: how long a sale waits for its worker's patch, at most
PATCH_MAX_LEGS = 20_000  # legs changed since the index's version beyond which it is rebuilt
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


FlightKey = tuple[str, int, date]  # carrier, flight number, flight date


def _flight_key(leg: DatedLeg) -> FlightKey:
    return (leg.carrier, leg.flight_number, leg.flight_date)


class _CopyOnWrite:
    """The (departure times, legs) lists of an index, keyed, for `with_changes`: a list is
    copied the first time it is written and every other one is the old index's own, so
    the old index, which requests may still be reading, never changes."""

    def __init__(self, lists: dict[object, tuple[list[datetime], list[DatedLeg]]]) -> None:
        self._lists = dict(lists)
        self._copied: set[object] = set()

    def _writable(self, key: object) -> tuple[list[datetime], list[DatedLeg]]:
        if key not in self._copied:
            times, legs = self._lists.get(key, ((), ()))
            self._lists[key] = (list(times), list(legs))
            self._copied.add(key)
        return self._lists[key]

    def remove(self, key: object, leg: DatedLeg) -> None:
        times, legs = self._writable(key)
        at = bisect.bisect_left(times, leg.departs_at)
        while at < len(legs) and times[at] == leg.departs_at:
            if legs[at].id == leg.id:
                del times[at], legs[at]
                return
            at += 1

    def add(self, key: object, leg: DatedLeg) -> None:
        times, legs = self._writable(key)
        at = bisect.bisect_right(times, leg.departs_at)
        times.insert(at, leg.departs_at)
        legs.insert(at, leg)

    def result(self) -> dict[object, tuple[list[datetime], list[DatedLeg]]]:
        """The lists, without the keys left empty (a full build has none)."""
        return {key: lists for key, lists in self._lists.items() if lists[0]}


class OverLegs:
    """The times of something that flies `legs`, in order: a segment as scheduled, or as
    it flies now (orders/servicing/airline_changes.py)."""

    legs: tuple

    @property
    def departs_at(self) -> datetime:
        return self.legs[0].departs_at

    @property
    def arrives_at(self) -> datetime:
        return self.legs[-1].arrives_at


@dataclass(frozen=True)
class Segment(OverLegs):
    """One flight number from its board point to its off point: one or more legs."""

    legs: tuple[DatedLeg, ...]

    @property
    def origin(self) -> str:
        return self.legs[0].origin

    @property
    def destination(self) -> str:
        return self.legs[-1].destination

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
        self._flights: dict[FlightKey, tuple[DatedLeg, ...]] = {}
        for key, flight_legs in flights.items():
            flight_legs.sort(key=lambda leg: leg.leg_sequence)
            self._flights[key] = tuple(flight_legs)
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

    def with_changes(
        self,
        *,
        version: int,
        legs: Iterable[DatedLeg],
        removed: Iterable[int],
        time_zones: dict[str, str],
        aircraft_codes: dict[str, str],
        has_schedule: bool,
    ) -> "NetworkIndex":
        """A new index: this one with `legs` as they now are and `removed` (deleted or
        cancelled) gone, at `version`. This one is left untouched (requests may be reading
        it) and shares every structure the change does not reach; the cost is that of the
        flights touched: each touched flight-date's legs leave and re-enter the departure
        lists of their origins and the `_towards` lists of the segments they board (a
        flight's segments follow its legs, so a changed leg changes its neighbours'),
        and the served markets are worked out again only if the set of segment pairs moved.
        """
        legs = list(legs)
        touched = {leg.id for leg in legs} | set(removed)
        flight_keys = {_flight_key(self._legs[i]) for i in touched if i in self._legs}
        flight_keys |= {_flight_key(leg) for leg in legs}
        before = {key: self._flights.get(key, ()) for key in flight_keys}
        after: dict[FlightKey, list[DatedLeg]] = {
            key: [leg for leg in flight if leg.id not in touched] for key, flight in before.items()
        }
        for leg in legs:
            after[_flight_key(leg)].append(leg)

        new = NetworkIndex.__new__(NetworkIndex)
        new.version = version
        new.has_schedule = has_schedule
        new.time_zones = {code: ZoneInfo(name) for code, name in time_zones.items()}
        new.aircraft_codes = aircraft_codes
        new._legs = dict(self._legs)  # the shallow copies: pointers, not legs
        new._flights = dict(self._flights)
        new._next_leg = dict(self._next_leg)
        departures = _CopyOnWrite(self._departures)
        towards = _CopyOnWrite(self._towards)

        for flight in before.values():
            for leg in flight:
                new._legs.pop(leg.id, None)
                new._next_leg.pop(leg.id, None)
                departures.remove(leg.origin, leg)
                for segment in self._segments_from(leg):
                    towards.remove((leg.origin, segment.destination), leg)
        for key, flight in after.items():
            flight.sort(key=lambda leg: leg.leg_sequence)
            if flight:
                new._flights[key] = tuple(flight)
            else:
                new._flights.pop(key, None)
            for leg, following in itertools.pairwise(flight):
                new._next_leg[leg.id] = following
            for leg in flight:
                new._legs[leg.id] = leg
        for flight in after.values():
            for leg in flight:
                departures.add(leg.origin, leg)
                for segment in new._segments_from(leg):
                    towards.add((leg.origin, segment.destination), leg)
        new._departures = departures.result()
        new._towards = towards.result()
        if new._towards.keys() == self._towards.keys():
            new.served_markets = self.served_markets
        else:
            new.served_markets = new._markets()
        return new

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


class NetworkIndexLoading(ApiError):
    """This process has no schedule index yet (a worker that could not inherit one): the
    request is refused at once, 503 ERR-9000 in its channel's shape, rather than kept
    waiting for a build of seconds; a load balancer retries it on a ready node."""

    def __init__(self) -> None:
        super().__init__(
            Err.SERVICE_UNAVAILABLE,
            "The schedule is loading on this server; retry shortly",
            headers={"Retry-After": "1"},
        )


class _IndexHolder:
    """The process's current index, and how it follows the network version.

    Production (NETWORK_REBUILD_IN_BACKGROUND): a gunicorn worker starts with the index
    its master built before forking (airline/wsgi.py); a daemon thread, the poller, reads
    the version every POLL_SECONDS on its own connection and, when it moved, patches the
    index with the legs the change log names (NetworkIndex.with_changes), or rebuilds it
    in full when the log cannot say (a `full` row, a gap, too many legs). A request never
    builds: with no index it gets NetworkIndexLoading. Tests (the setting off) follow
    the same way in the request, at most once per VERSION_CHECK_SECONDS: their data sits
    in the test's transaction, which the poller's connection cannot see.

    Either way a new index is swapped in with one assignment; requests keep the object
    they read. One refresh at a time (`_refresh_lock`); `_index` is read without it, so
    /health and searches never wait on a build. A price, booking or reshop asks for the
    index of the database's version (`current`): it may wait on `_swapped`, which every
    swap and the start of every full build signal."""

    def __init__(self) -> None:
        self._index: NetworkIndex | None = None
        self._refresh_lock = threading.Lock()
        self._poller_lock = threading.Lock()
        self._poller: threading.Thread | None = None
        self._poller_pid = 0
        self._stop = threading.Event()
        self._wake = threading.Event()
        self._swapped = threading.Condition(threading.Lock())
        self._building = False  # a full build is under way (`refresh`)
        self._checked_at = 0.0

    @property
    def index(self) -> NetworkIndex | None:
        return self._index

    def get(self) -> NetworkIndex:
        index = self._index
        if settings.NETWORK_REBUILD_IN_BACKGROUND:
            self.follow_in_background()
            if index is None:
                raise NetworkIndexLoading
            return index
        if index is not None and time.monotonic() - self._checked_at < VERSION_CHECK_SECONDS:
            return index
        return self.refresh()

    def current(self) -> NetworkIndex:
        """The index of the database's network version, or NetworkIndexLoading
        (network_index(current=True)). Tests: refreshed here, in the request's
        transaction."""
        if not settings.NETWORK_REBUILD_IN_BACKGROUND:
            return self.refresh()
        self.follow_in_background()
        index = self._index
        if index is None:
            raise NetworkIndexLoading
        version = schedule_version()
        if index.version >= version:
            return index
        self._wake.set()  # the poller patches now rather than at its next poll
        with self._swapped:
            self._swapped.wait_for(
                lambda: self._holds(version) or self._building, timeout=FRESH_WAIT_SECONDS
            )
        index = self._index
        if index is None or index.version < version:
            raise NetworkIndexLoading
        return index

    def _holds(self, version: int) -> bool:
        index = self._index
        return index is not None and index.version >= version

    @property
    def has_schedule(self) -> bool:
        """An index of a loaded schedule is in memory."""
        return self._index is not None and self._index.has_schedule

    def refresh(self) -> NetworkIndex:
        """Bring the index to the network version now, in this thread: a patch from the
        change log where it can, else a full build. Reads the version first, then the
        log up to it, then the legs, so an index never claims a version whose changes it
        has not read (later changes it may have read are in later log rows, read again)."""
        with self._refresh_lock:
            index = self._index
            version = schedule_version()
            if index is None or index.version != version:
                started = time.monotonic()
                patched = None
                try:
                    patched = _patched(index, version) if index is not None else None
                except DatabaseError:
                    raise
                except Exception:
                    # A patch that fails is a bug; the full build below is still right.
                    logger.exception("network index patch failed; building in full")
                new = patched or self._build(version)
                self._swap(new)
                logger.info(
                    "network index version %s %s: %s legs in %.3f s",
                    version,
                    "patched" if patched else "built",
                    new.leg_count,
                    time.monotonic() - started,
                )
            self._checked_at = time.monotonic()
            return self._index

    def _build(self, version: int) -> NetworkIndex:
        # A sale waiting for this version gives up now: a full build is no short wait.
        with self._swapped:
            self._building = True
            self._swapped.notify_all()
        try:
            with _yielding_to_requests():
                return build_index(version)
        finally:
            self._building = False

    def _swap(self, new: NetworkIndex | None) -> None:
        with self._swapped:
            old, self._index = self._index, new  # the swap: requests see it on their next read
            self._swapped.notify_all()
        if old is None or new is None or old.version != new.version:
            _notify(new.version if new is not None else None)

    def follow_in_background(self) -> None:
        """Start this process's poller unless it runs (a forked worker has none of its
        parent's threads: the pid says whose it is); returns at once."""
        pid = os.getpid()
        if self._poller_pid == pid and self._poller is not None and self._poller.is_alive():
            return
        with self._poller_lock:
            if self._poller_pid == pid and self._poller is not None and self._poller.is_alive():
                return
            self._stop, self._wake = threading.Event(), threading.Event()
            self._poller = threading.Thread(
                target=self._follow,
                args=(self._stop, self._wake),
                name="network-index",
                daemon=True,
            )
            self._poller_pid = pid
            self._poller.start()

    def _follow(self, stop: threading.Event, wake: threading.Event) -> None:
        """The poller: polls at once (a worker forked from a master whose index is older
        than the database's starts patching as it starts), then every POLL_SECONDS, or
        as soon as a request finds the index older than the database (`wake`)."""
        failing = False
        try:
            while not stop.is_set():
                try:
                    self.refresh()
                    failing = False
                except Exception:
                    # The database is down or not migrated yet (or a bug): the current
                    # index (if any) keeps serving, /health keeps its answer, and the next
                    # poll retries on a new connection. Logged once per run of failures.
                    if not failing:
                        logger.exception("network index refresh failed")
                    failing = True
                    connection.close()
                # Cleared before the next poll, which reads the version: a request that
                # woke the poller after this has its version read by that poll.
                wake.wait(POLL_SECONDS)
                wake.clear()
        finally:
            connection.close()  # this thread's own connection

    def stop_following(self) -> None:
        with self._poller_lock:
            self._stop.set()
            self._wake.set()
            poller, self._poller = self._poller, None
        if poller is not None and poller is not threading.current_thread():
            poller.join(timeout=30)

    def reset(self) -> None:
        self.stop_following()
        with self._refresh_lock:
            self._swap(None)
            self._checked_at = 0.0


def _patched(index: NetworkIndex, version: int) -> NetworkIndex | None:
    """`index` patched up to `version` from the change log, or None where the log cannot
    say what changed: a gap (pruned rows, or a database flushed under a test), a `full`
    row, more legs than a rebuild costs."""
    if version < index.version:
        return None
    changes = list(
        NetworkChange.objects.filter(version__gt=index.version, version__lte=version)
        .order_by("version")
        .values_list("version", "full", "leg_ids")
    )
    if [v for v, _, _ in changes] != list(range(index.version + 1, version + 1)):
        return None
    if any(full for _, full, _ in changes):
        return None
    leg_ids = {leg_id for _, _, ids in changes for leg_id in ids}
    if len(leg_ids) > PATCH_MAX_LEGS:
        return None
    ordered = sorted(leg_ids)
    legs = []
    for start in range(0, len(ordered), 5000):
        legs += _dated_legs(
            FlightLeg.objects.filter(id__in=ordered[start : start + 5000], is_cancelled=False)
        )
    return index.with_changes(
        version=version,
        legs=legs,
        removed=leg_ids - {leg.id for leg in legs},
        time_zones=dict(Station.objects.values_list("code", "time_zone")),
        aircraft_codes=dict(AircraftType.objects.values_list("iata_code", "carrier_code")),
        has_schedule=ScheduleLoad.objects.exists(),
    )


@contextmanager
def _yielding_to_requests() -> Iterator[None]:
    """While the index is built beside the requests this worker serves from the previous
    one, so that no search stalls behind the build:
    - no cyclic collection: each one the build's allocations trigger would walk the
      objects built so far in one hold of the GIL, 50-100 ms on end. What the build
      leaves behind is freed by reference counting; the requests' own cycles wait for the
      collector for the seconds of a build, and are collected once it is re-enabled.
      Nothing is frozen here: gc.freeze() would also freeze for good every
      cycle the requests left meanwhile. The new index's objects stay with the collector;
      CPython runs a full collection only when objects added since the last one reach a
      quarter of the long-lived ones, so a large index makes full collections rarer in
      proportion. Only the master freezes, after a collection, before it forks (wsgi.py):
      the index workers start with, which later patches share.
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
_change_callbacks: list[Callable[[int | None], None]] = []


def on_network_change(callback: Callable[[int | None], None]) -> None:
    """Call `callback(version)` whenever this process's index moves to a new network
    version (None: it was dropped), in the thread that swapped it in, after the swap.
    The one signal per-process caches of network data follow (seat layouts, station
    zones): what a cache read at version N is good for until the index leaves N."""
    if callback not in _change_callbacks:
        _change_callbacks.append(callback)


def _notify(version: int | None) -> None:
    for callback in list(_change_callbacks):
        try:
            callback(version)
        except Exception:
            logger.exception("network change callback %r failed", callback)


def network_index(*, current: bool = False, seen: int | None = None) -> NetworkIndex:
    """This process's index of the schedule.

    As it has it (what searches read; what a search offers is priced again before it is
    sold): no query in production. There it is never built here: a worker starts with
    its master's and its poller patches each change in a moment after it commits; a
    process that has none raises NetworkIndexLoading (503 ERR-9000) and starts building
    in the background.

    `current`: the index of the network version the database has now, for pricing,
    booking, reshop and seat sales, so none answers from a schedule older than the
    database's (a worker forked from a master whose index is older, one whose poller has
    not patched the latest load in yet); one primary-key read when it is current. An
    older index is waited for, at most FRESH_WAIT_SECONDS, while this worker's poller
    (woken at once) patches it in; if the poller is building in full instead, the wait
    runs out, or the process has no index: NetworkIndexLoading at once. A request never
    builds an index itself: a full build is long CPU work under the GIL in a worker that
    serves one request at a time, so that worker's other requests and /health answers
    would queue behind it, every worker of every node would build at once after a load,
    and the request would hold its connection meanwhile. The poller builds beside the
    requests, yielding the GIL (`_yielding_to_requests`); a refused client retries, on a
    worker whose index is current. Tests (NETWORK_REBUILD_IN_BACKGROUND off): brought to
    the version here, in the request's transaction, on every call.

    `seen`: the network version this request has already read from the database (a
    booking that found its flights on the current index, then checks its seats): an index
    of that version or later is current for it without reading the version again.

    Either way pricing and booking re-read the legs from the database
    (inventory.leg_availability, inventory.legs_lock), so an index never sells a flight
    that is gone."""
    if current and seen is not None:
        index = _holder.index
        if index is not None and index.version >= seen:
            return index
    return _holder.current() if current else _holder.get()


def network_version_served() -> int | None:
    """The network version of this process's index (None: it has none); no query."""
    index = _holder.index
    return index.version if index is not None else None


def follow_network_changes() -> None:
    """Start this process's poller (gunicorn's post_worker_init) and return at once: its
    first poll, made as it starts, compares the index the process has (a worker's: its
    master's, from before the fork) with the database's version and patches it in, or
    builds it if the process has none; then it follows the version."""
    _holder.follow_in_background()


def refresh_network_index() -> NetworkIndex:
    """One poll, now, in this thread: what the poller does every POLL_SECONDS."""
    return _holder.refresh()


def preload_network_index() -> None:
    """Build this process's index now if the database is reachable and has a schedule
    (gunicorn's master, before it forks: airline/wsgi.py); else leave it to the workers."""
    try:
        if ScheduleLoad.objects.exists():
            _holder.refresh()
    except DatabaseError:
        logger.warning("network index not built before fork: database unavailable")


def reset_network_index() -> None:
    _holder.reset()


def network_is_ready() -> bool:
    """Readiness for /health: a schedule is loaded and this process's index is warm.
    Not warm yet: make sure the poller is building it, and say so, at once."""
    if _holder.has_schedule:
        return True
    if settings.NETWORK_WARM_ON_HEALTH_CHECK:
        _holder.follow_in_background()
    return False


def schedule_version() -> int:
    """The network's version (NetworkVersion: moved by every schedule load and every edit
    of a station, aircraft type or seat configuration); one primary-key read, by each
    worker's poller every POLL_SECONDS and by each price, booking and reshop
    (network_index(current=True)); tests: per request, every VERSION_CHECK_SECONDS."""
    return NetworkVersion.current()


def build_index(version: int) -> NetworkIndex:
    legs = _dated_legs(FlightLeg.objects.filter(is_cancelled=False))
    zones = dict(Station.objects.values_list("code", "time_zone"))
    aircraft = dict(AircraftType.objects.values_list("iata_code", "carrier_code"))
    index = NetworkIndex(version, legs, zones, aircraft)
    index.has_schedule = ScheduleLoad.objects.exists()
    return index


def _dated_legs(legs: QuerySet[FlightLeg]) -> list[DatedLeg]:
    rows = legs.values_list(
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
    return [DatedLeg(*row) for row in rows.iterator(chunk_size=5000)]


def is_valid_market(origin: str, destination: str) -> bool:
    """DESIGN.md §6, on this process's current schedule."""
    return network_index().is_valid_market(origin, destination)
