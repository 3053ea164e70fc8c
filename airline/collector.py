"""The cyclic garbage collector of a serving process (a gunicorn worker, and the
benchmarks that time pages as one would).

What a process loaded before serving (Django, every view, the schedule index: hundreds
of thousands of objects) is frozen after one collection, so the collector never walks it
(100 ms pauses) nor writes to its pages (which would copy them into every forked
worker). And young collections are spaced out (GC_YOUNG_THRESHOLD allocations between
them, not CPython's 700): a 100-row admin page allocates a few hundred thousand objects,
so at 700 it meets a full collection most requests, and the page's p95 is the
collector's (`python -m benchmarks.admin`; docs/benchmarks/figures/admin.md).
A cycle of garbage lives a little longer: a few MB a worker at most."""

import gc

from django.conf import settings


def collector_settled() -> None:
    """Collect, freeze what is loaded, and space young collections from now on. Call
    once, when loading is done: the only gc.freeze() of the service."""
    gc.collect()
    gc.freeze()
    _, middle, old = gc.get_threshold()
    gc.set_threshold(settings.GC_YOUNG_THRESHOLD, middle, old)
