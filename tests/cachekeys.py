"""Cache keys of the test suite: one key space per pytest-xdist worker.

The worker's name is read when a key is made, not when settings are imported: settings
are imported before pytest-xdist names the worker (every worker saw "main"), and then
one worker's clean-up deleted the others' offers. Keys keep Django's own layout, so a
server started by a test (tests/e2e/servers.py) shares them by its KEY_PREFIX alone."""

import os

from django.conf import settings


def worker_prefix() -> str:
    """This worker's key prefix, as a server started by its tests must be told it."""
    worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
    return f"{settings.CACHES['default']['KEY_PREFIX']}-{worker}"


def make_key(key: str, key_prefix: str, version: int) -> str:
    worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
    return f"{key_prefix}-{worker}:{version}:{key}"
