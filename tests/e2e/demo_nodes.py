"""Two app nodes on the full demo schedule: `manage.py seed_demo` (330 days, 58,410
flight-date legs) committed to the test database, a key of its partner DEMO, and two
gunicorn masters of two workers each, ready. For `transaction=True` tests (the nodes see
only committed data), e.g. tests/e2e/test_live_changes.py."""

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import date, datetime
from pathlib import Path

import requests

from airline.network.models import ScheduleLoad
from sellers.models import Seller
from tests.e2e.servers import Server, gunicorn, manage, server_env_on_test_database
from tests.e2e.servers import wait_until_ready as _wait_until_ready

# A worker builds its index of the whole schedule before it says ready: ~2 s on a quiet
# machine, 10-16 s on a busy one (issue 24 item 5), and four of them start at once.
READY_SECONDS = 180


@dataclass(frozen=True)
class Demo:
    env: dict[str, str]
    first_day: date  # the schedule's first date (seed_demo's "today", UTC)
    raw_key: str  # partner DEMO, no rate limit to speak of
    sellers: dict[str, str]  # code -> sellerId

    def headers(self, node: Server, seller: str) -> dict[str, str]:
        """Bearer headers of the key acting as `seller` (DEMO1 or DEMO2)."""
        response = requests.post(
            node.url + "/auth/token",
            json={"sellerId": self.sellers[seller]},
            headers={"x-api-key": self.raw_key},
            timeout=10,
        )
        assert response.status_code == 200, response.text
        return {"Authorization": f"Bearer {response.json()['access_token']}"}


def node_env(**overrides: str) -> dict[str, str]:
    """A node as production runs one (indexes rebuilt off the request path, the access
    log on), on the test database, allowed to deliver webhooks to a local receiver."""
    return {
        **server_env_on_test_database(),
        "NETWORK_REBUILD_IN_BACKGROUND": "1",
        "NETWORK_WARM_ON_HEALTH_CHECK": "1",
        "LOG_LEVEL": "INFO",  # the access log: each request's server time
        "WEBHOOK_ALLOW_LOOPBACK": "1",
        **overrides,
    }


def full_demo(env: dict[str, str]) -> Demo:
    """seed_demo through the command, as `make run` does, then an API key of DEMO."""
    manage(env, "seed_demo")
    created = manage(env, "create_api_key", "--partner", "DEMO", "--rate", str(10**8))
    load = ScheduleLoad.objects.get()
    first_day = datetime.strptime(load.file_name, "demo-%Y%m%d.ssim").date()  # noqa: DTZ007
    sellers = {s.code: str(s.pk) for s in Seller.objects.filter(partner__code="DEMO")}
    return Demo(env, first_day, created.strip().splitlines()[-1], sellers)


@contextmanager
def two_nodes(env: dict[str, str], logs: Path, workers: int = 2) -> Iterator[tuple[Server, Server]]:
    """Nodes A and B (access logs logs/a.log and logs/b.log), both ready."""
    with (
        gunicorn(env, logs / "a.log", workers=workers) as a,
        gunicorn(env, logs / "b.log", workers=workers) as b,
    ):
        for node in (a, b):
            health = _wait_until_ready(node, timeout=READY_SECONDS)
            assert health.status_code == 200, (health.text, node.output()[-3000:])
        yield a, b
