"""Settings for the test suite: the service's own settings on the local PostgreSQL and
Redis (override with DATABASE_URL / REDIS_URL). Only defaults are set here."""

import os

os.environ.setdefault("AIRLINE_ENV", "test")
os.environ.setdefault("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/airline")
os.environ.setdefault("REDIS_URL", "redis://127.0.0.1:6379/1")
os.environ.setdefault("CACHE_KEY_PREFIX", "test")

from airline.settings import *  # noqa: F403

# One key space per pytest-xdist worker, so one worker's clean-up never wipes another's
# (tests/cachekeys.py).
CACHES["default"]["KEY_FUNCTION"] = "tests.cachekeys.make_key"  # noqa: F405

# The standby's alias, as a test mirror of the primary (Django's TEST MIRROR): the same
# test database over a connection of its own, which does not see what a test's open
# transaction wrote, as a standby has not replayed a commit yet. Reads go to it only in
# tests that turn READ_FROM_STANDBY on (tests/orders/test_standby_reads.py).
DATABASES.setdefault(  # noqa: F405
    "replica",
    {**DATABASES["default"], "TEST": {"MIRROR": "default"}},  # noqa: F405
)
