"""Fares reference data as the hot path reads it: from this process's memory, refreshed
from the database at most every REFERENCE_SECONDS (airline/api/memo.py). The shopping
profile showed these lookups at a fifth of a search; edits reach every worker within
the interval."""

import threading
import time
from collections.abc import Iterable

from airline.api.memo import Refreshing
from airline.fares import ancillaries
from airline.fares.selectors import booking_class_ladders, bundles_for_sale, fares_for_markets
from airline.fares.terms import BundleTerms, FareTerms

REFERENCE_SECONDS = 60

_bundles = Refreshing(bundles_for_sale, REFERENCE_SECONDS)
_ladders = Refreshing(booking_class_ladders, REFERENCE_SECONDS)
_fares: dict[tuple[str, str], list[FareTerms]] = {}
_fares_since = time.monotonic()
_fares_lock = threading.Lock()


def bundles(codes: Iterable[str] | None = None) -> list[BundleTerms]:
    """Bundles in display order, narrowed to `codes` when given."""
    wanted = set(codes) if codes is not None else None
    return [b for b in _bundles.get() if wanted is None or b.code in wanted]


def ladders() -> dict[str, tuple[str, ...]]:
    return _ladders.get()


def fares(markets: Iterable[tuple[str, str]]) -> dict[tuple[str, str, str], FareTerms]:
    """Every class's fare in these markets; markets not in memory cost one query together."""
    global _fares_since
    markets = set(markets)
    with _fares_lock:
        if time.monotonic() - _fares_since > REFERENCE_SECONDS:
            _fares.clear()
            _fares_since = time.monotonic()
        missing = markets - set(_fares)
        if missing:
            for market in missing:
                _fares[market] = []
            for key, fare in fares_for_markets(missing).items():
                _fares[key[:2]].append(fare)
        return {fare.key: fare for market in markets for fare in _fares[market]}


def forget() -> None:
    """Drop everything held in memory (tests; a process's own edits)."""
    _bundles.forget()
    _ladders.forget()
    ancillaries.forget()
    with _fares_lock:
        _fares.clear()
