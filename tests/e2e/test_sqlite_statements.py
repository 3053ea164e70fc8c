"""The hand-written SQL on the embedded default (SQLite). OrderList's page is one
statement that claims to run on both backends (orders.reading.selectors.orders_search), an
order's parts are read by statements built from the models (orders.reading.part_rows),
and an order's seat maps start from three statements of plain values
(orders.reading.trips), and a booking's rows are written by INSERTs of their own whose
values skip the ORM's steps where those would hand them back unchanged
(orders.core.rows): each one's whole test module runs again here, on a fresh SQLite
database in a child pytest."""

import subprocess
import sys

import pytest

from tests.e2e.servers import REPO, base_env

pytestmark = pytest.mark.e2e


@pytest.mark.parametrize(
    "module",
    ["test_list.py", "test_order_parts.py", "test_order_ancillaries.py", "test_rows_insert.py"],
)
def test_every_test_passes_on_sqlite(tmp_path, module):
    env = base_env(
        DJANGO_SETTINGS_MODULE="tests.settings",
        DATABASE_URL=f"sqlite:///{tmp_path / 'orders.sqlite3'}",
        CACHE_KEY_PREFIX=f"sqlite-{module}",  # not this run's key space
    )
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:xdist", f"tests/orders/{module}"],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )

    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert " passed" in done.stdout
    assert "vendor=sqlite" in done.stdout
