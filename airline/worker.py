"""The background worker (DESIGN.md §10): a plain loop over a table of jobs, each run at
its own interval (a job marked `again_while_busy` runs again at once while it finds
work, so a queue keeps up with its load). `manage.py run_worker` runs it forever;
`--once` runs every job once, for cron and tests. An app adds a job with
`job_register` in its AppConfig.ready.

A job that fails (an exception, the database gone) is logged and tried again at its next
interval: it never stops the worker. Database connections are closed between jobs when
stale, so a restarted PostgreSQL does not leave the worker dead. SIGTERM and SIGINT stop
it after the job under way.
"""

import contextlib
import logging
import os
import select
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from django.db import close_old_connections, connection

from airline.sql import lock_waits_unbounded
from airline.telemetry import tracing_span

logger = logging.getLogger("airline.worker")


@dataclass(frozen=True)
class Job:
    """One kind of background work: `run` does a round of it and says what it did (None
    or an empty dict when there was nothing to do)."""

    name: str
    interval: float  # seconds between the starts of two rounds
    run: Callable[[], dict | None]
    # Run again at once (after any other job that is due) while a round did something:
    # for a queue that must keep up with its load, such as webhook delivery; the
    # interval is then only how often an idle queue is looked at.
    again_while_busy: bool = False


# Each app adds its jobs in its AppConfig.ready (job_register), so that this kernel
# module never imports the apps built on it (architecture.md "Layers"): the table runs
# in INSTALLED_APPS order. A job is registered as a function that builds it, so that its
# interval is read from settings when the worker starts.
_JOBS: list[Callable[[], Job]] = []


def job_register(make: Callable[[], Job]) -> None:
    """Add the job `make()` builds to the worker's table (once: the same function
    registered again is not added twice)."""
    if all(make is not known for known in _JOBS):
        _JOBS.append(make)


def jobs() -> list[Job]:
    """Every job of the worker, with its interval from settings."""
    return [make() for make in _JOBS]


class StopSignal:
    """A stop that a signal handler may give: the handler only writes a byte to a pipe
    (safe inside a handler), and a wait on it ends at once. threading.Event is not safe
    there: set() takes the lock that the interrupted wait() may hold."""

    def __init__(self) -> None:
        self._read, self._write = os.pipe()
        os.set_blocking(self._write, False)
        self._stopped = False

    def set(self, *_signal_args) -> None:
        self._stopped = True
        # A full pipe means a stop is already waiting to be read.
        with contextlib.suppress(BlockingIOError):
            os.write(self._write, b"x")

    def is_set(self) -> bool:
        return self._stopped

    def wait(self, timeout: float) -> bool:
        select.select([self._read], [], [], timeout)
        return self._stopped


def run_once(jobs: Sequence[Job]) -> None:
    """Every job once, in order."""
    for job in jobs:
        _run(job)


def run_forever(
    jobs: Sequence[Job],
    *,
    stop: "StopSignal | threading.Event",
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], object] | None = None,
) -> None:
    """Run each job at its interval until `stop` is set. `clock` and `sleep` are the
    monotonic clock and the wait (by default `stop.wait`, so a stop cuts a wait short);
    tests pass their own so that no test waits on wall-clock time."""
    wait = sleep or stop.wait
    due = {job.name: clock() for job in jobs}  # every job runs at start
    while not stop.is_set():
        job = min(jobs, key=lambda j: due[j.name])
        delay = due[job.name] - clock()
        if delay > 0:
            wait(delay)
            continue  # the stop may have come, or a clock moved: look again
        busy = _run(job)
        due[job.name] = clock() + (0 if busy and job.again_while_busy else job.interval)
    logger.info("worker stopped")


def _run(job: Job) -> bool:
    """Runs the job; says whether it did anything."""
    _close_stale_connections()
    started = time.perf_counter()
    try:
        # No client waits for a job: it waits for the locks a schedule load holds rather
        # than fail and find them held again at its next round. One trace per round, when
        # tracing is on: its SQL and its calls (webhooks, the gateway) under one span.
        with tracing_span(f"job {job.name}"), lock_waits_unbounded():
            done = job.run()
    except Exception:
        logger.exception("job failed", extra={"fields": {"job": job.name}})
        return False
    finally:
        _close_stale_connections()
    if not (done and any(done.values())):
        return False
    seconds = round(time.perf_counter() - started, 3)
    logger.info("job done", extra={"fields": {"job": job.name, "seconds": seconds, **done}})
    return True


def _close_stale_connections() -> None:
    # Between jobs the worker is never inside a transaction; a caller that is (a test's)
    # keeps its connection: closing it would end that transaction.
    if not connection.in_atomic_block:
        close_old_connections()
