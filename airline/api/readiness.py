"""Per-process readiness for GET /health (SPEC.md §4.3).

Apps register a check at start-up (the schedule loader: "schedule loaded and itinerary
caches warm"); /health answers 503 {status: loading} until every check passes. Checks are
per process because each gunicorn worker warms its own read-only caches.
"""

from collections.abc import Callable

_checks: dict[str, Callable[[], bool]] = {}


def register_readiness_check(name: str, check: Callable[[], bool]) -> None:
    _checks[name] = check


def unregister_readiness_check(name: str) -> None:
    _checks.pop(name, None)


def registered_checks() -> dict[str, Callable[[], bool]]:
    return dict(_checks)


def pending_checks() -> list[str]:
    """Names of the checks that do not pass yet; empty when the process is ready."""
    return [name for name, check in _checks.items() if not check()]
