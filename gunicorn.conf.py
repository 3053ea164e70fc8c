"""gunicorn settings (read from the working directory by default)."""

import gc

# A request allocates tens of thousands of short-lived containers (an OrderList page of
# 1000 summaries is ~15,000). With CPython's default threshold of 700 allocations the
# collector runs several times inside each such request, traversing the page's live
# objects again and again, and now and then a full collection lands on one request. At
# 50,000 it runs once every few requests, when their objects are already freed. In
# process, OrderList page of 1000: p95 65 -> 34 ms, median 30 -> 26 ms.
GC_THRESHOLDS = (50_000, 20, 10)


def post_worker_init(worker):
    """Start building this worker's itinerary index at once, so /health turns ok without
    waiting for a first request to ask (SPEC.md §4.3)."""
    from airline.network.itineraries import warm_network_index

    gc.set_threshold(*GC_THRESHOLDS)
    warm_network_index()
