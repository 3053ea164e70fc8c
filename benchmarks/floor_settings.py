"""The service's settings with one URL of its own: the framework floor's
(benchmarks/floor_urls.py), served by the service's own WSGI entry point and gunicorn
config (benchmarks/floor_framework.py)."""

from airline.settings import *  # noqa: F403 (every setting of the service, unchanged)

ROOT_URLCONF = "benchmarks.floor_urls"
