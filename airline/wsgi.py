"""WSGI entry point for gunicorn: `gunicorn airline.wsgi`.

gunicorn.conf.py sets `preload_app`, so this module runs once, in the master, before the
port is bound and the workers are forked: a connection the node accepts finds a worker
that has Django, every URL pattern and every view module loaded already, and /health
answers at once (503 `loading` while the worker builds its schedule index, SPEC.md §4.3).
Without it each worker imported all of that after the port was open, and a load
balancer's first probes waited 1-5 s.
"""

import gc
import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "airline.settings")

application = get_wsgi_application()


def _load_before_fork() -> None:
    """What a worker's first request would otherwise import: every view module behind the
    URL patterns. No connection is opened here; any that were are closed, since a forked
    worker must not share its parent's sockets."""
    from django.db import connections
    from django.urls import get_resolver

    get_resolver().url_patterns  # noqa: B018  (imports the URLconf and every view)
    connections.close_all()
    # Objects loaded before the fork are shared with the workers until written; frozen,
    # the cyclic collector never touches them (which would copy their pages).
    gc.collect()
    gc.freeze()


_load_before_fork()
