"""gunicorn's config for the framework floor (benchmarks/floor_urls.py): the service's
own gunicorn.conf.py, its worker class, preloading and hooks, with the floor's worker
numbering added to its post_fork (benchmarks/floor.py).

    DJANGO_SETTINGS_MODULE=benchmarks.floor_settings \\
        gunicorn -c python:benchmarks.floor_framework airline.wsgi

reads FLOOR_SCRIPTS and FLOOR_CLIENTS as benchmarks/floor.py does; the database is the
service's own (DATABASE_URL).
"""

import runpy
from pathlib import Path

from benchmarks import floor

_service = runpy.run_path(str(Path(__file__).resolve().parent.parent / "gunicorn.conf.py"))
globals().update({name: value for name, value in _service.items() if not name.startswith("_")})


def post_fork(server, worker) -> None:
    _service["post_fork"](server, worker)
    floor.post_fork(server, worker)
