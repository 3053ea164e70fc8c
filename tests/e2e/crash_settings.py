"""The service's settings with the test URLs (tests/api/urls.py: probe views, among them
one that crashes), for a real server whose unhandled error a test watches being reported."""

from airline.settings import *  # noqa: F403

ROOT_URLCONF = "tests.api.urls"
