"""WSGI entry point for gunicorn: `gunicorn airline.wsgi`.

gunicorn.conf.py sets `preload_app`, so this module runs once, in the master, before the
port is bound and the workers are forked: a connection the node accepts finds a worker
that has Django, every URL pattern, every view module and the schedule index loaded
already. Without it each worker imported all of that after the port was open, and a load
balancer's first probes waited 1-5 s; each worker then built its own index (2-16 s on the
full demo schedule) and, until it had one, every search waited for the build.
"""

import os

from django.core.wsgi import get_wsgi_application

from airline.telemetry import error_reports_start, tracing_instrument

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "airline.settings")

# Both do nothing unless configured; tracing's instrumentation must come before the
# handler reads the middleware list (airline/telemetry.py).
error_reports_start()
tracing_instrument()
application = get_wsgi_application()


def _load_before_fork() -> None:
    """What a worker's first request would otherwise import: every view module behind the
    URL patterns; and the schedule index, when the database is reachable and has a
    schedule: every worker forked from here, at start or recycled by max_requests, starts
    with it and catches up through the change log (airline/network/itineraries.py). Every
    connection opened is closed, since a forked worker must not share its parent's
    sockets."""
    from django.db import connections
    from django.urls import get_resolver

    from airline.collector import collector_settled
    from airline.network.itineraries import preload_network_index

    get_resolver().url_patterns  # noqa: B018  (imports the URLconf and every view)
    preload_network_index()
    connections.close_all()
    # Objects loaded before the fork (the index: hundreds of thousands) are shared with the
    # workers until written: frozen (airline/collector.py), the cyclic collector never
    # walks them nor writes to their pages.
    collector_settled()


_load_before_fork()
