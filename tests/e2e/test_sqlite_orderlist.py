"""OrderList on the embedded default (SQLite). Its page is one hand-written SQL statement
that claims to run on both backends (orders.reading.selectors.orders_search), so its whole HTTP
test module runs again here, on a fresh SQLite database in a child pytest."""

import subprocess
import sys

import pytest

from tests.e2e.servers import REPO, base_env

pytestmark = pytest.mark.e2e


def test_every_orderlist_test_passes_on_sqlite(tmp_path):
    env = base_env(
        DJANGO_SETTINGS_MODULE="tests.settings",
        DATABASE_URL=f"sqlite:///{tmp_path / 'list.sqlite3'}",
        CACHE_KEY_PREFIX="sqlite-orderlist",  # not this run's key space
    )
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:xdist", "tests/orders/test_list.py"],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )

    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert " passed" in done.stdout
    assert "vendor=sqlite" in done.stdout
