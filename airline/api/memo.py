"""A value loaded at most once per interval per process: for reference data (bundles,
booking-class ladders, fares) that every request reads and an admin rarely edits.
An edit reaches every worker within the interval."""

import threading
import time
from collections.abc import Callable
from typing import Generic, TypeVar

T = TypeVar("T")


class Refreshing(Generic[T]):
    def __init__(self, load: Callable[[], T], seconds: float) -> None:
        self._load = load
        self._seconds = seconds
        self._value: T | None = None
        self._loaded_at = float("-inf")
        self._lock = threading.Lock()

    def get(self) -> T:
        if time.monotonic() - self._loaded_at > self._seconds:
            with self._lock:
                if time.monotonic() - self._loaded_at > self._seconds:
                    self._value = self._load()
                    self._loaded_at = time.monotonic()
        return self._value  # type: ignore[return-value]

    def forget(self) -> None:
        """Load afresh on the next get (tests, and after this process's own edits)."""
        self._loaded_at = float("-inf")
