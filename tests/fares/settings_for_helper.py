"""TEMPORARY (delete once airline.fares is in INSTALLED_APPS): the test settings plus the
fares app, on a test database and cache key space of its own so that this run does not
collide with another test run on the same PostgreSQL and Redis."""

import os

os.environ.setdefault("CACHE_KEY_PREFIX", "test-fares-helper")

from tests.settings import *  # noqa: E402, F403
from tests.settings import DATABASES, INSTALLED_APPS  # noqa: E402

if "airline.fares" not in INSTALLED_APPS:
    INSTALLED_APPS = [*INSTALLED_APPS, "airline.fares"]
DATABASES["default"]["TEST"] = {"NAME": "test_airline_fares_helper"}
