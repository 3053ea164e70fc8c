"""The service's clock. Code asks `clock.now()`; tests set it (tests/conftest.py `clock`)
instead of sleeping, so time-dependent rules are tested at exact instants."""

from collections.abc import Callable
from datetime import UTC, datetime

_source: Callable[[], datetime] = lambda: datetime.now(tz=UTC)  # noqa: E731


def now() -> datetime:
    """The current time, timezone-aware UTC."""
    return _source()


def set_source(source: Callable[[], datetime]) -> Callable[[], datetime]:
    """Replace the time source; returns the previous one so it can be restored."""
    global _source
    previous, _source = _source, source
    return previous


def format_utc(moment: datetime, *, milliseconds: bool = False) -> str:
    """`2026-11-22T10:00:00Z` (or `...00.123Z`): the wire form of every UTC timestamp
    (DESIGN.md §11)."""
    spec = "milliseconds" if milliseconds else "seconds"
    return moment.astimezone(UTC).isoformat(timespec=spec).replace("+00:00", "Z")
