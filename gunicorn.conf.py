"""gunicorn settings (read from the working directory by default)."""


def post_worker_init(worker):
    """Start building this worker's itinerary index at once, so /health turns ok without
    waiting for a first request to ask (SPEC.md §4.3)."""
    from airline.network.itineraries import warm_network_index

    warm_network_index()
