"""One key's request volume is shared by every worker process (DESIGN.md §5): two separate
gunicorn processes on PostgreSQL and Redis, hit concurrently, admit exactly the limit."""

from collections import Counter, defaultdict
from concurrent.futures import ThreadPoolExecutor

import pytest
import requests

from tests.e2e.servers import gunicorn, server_env_on_test_database
from tests.sellers.factories import ApiKeyFactory, PartnerFactory, SellerFactory

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True, serialized_rollback=True)]

LIMIT = 20
REQUESTS = 64


def test_two_processes_admit_exactly_the_limit_per_minute(tmp_path):
    partner = PartnerFactory()
    SellerFactory(partner=partner, is_default=True)
    raw = ApiKeyFactory(partner=partner, requests_per_minute=LIMIT).raw
    env = server_env_on_test_database()

    with gunicorn(env, tmp_path / "a.log") as first, gunicorn(env, tmp_path / "b.log") as second:
        token_response = requests.post(
            first.url + "/auth/token", headers={"x-api-key": raw}, timeout=5
        )
        headers = {"Authorization": f"Bearer {token_response.json()['access_token']}"}
        urls = [(first, second)[i % 2].url + "/json/v1/whoami" for i in range(REQUESTS)]
        with ThreadPoolExecutor(max_workers=16) as pool:
            responses = [
                token_response,
                *pool.map(lambda url: requests.get(url, headers=headers, timeout=10), urls),
            ]

    # Requests are grouped by the minute window they were counted in (a run may straddle
    # two); within a window the atomic counter admits exactly the first LIMIT.
    windows: dict[str, Counter] = defaultdict(Counter)
    for response in responses:
        windows[response.headers["X-RateLimit-Reset"]][response.status_code] += 1
    for statuses in windows.values():
        total = sum(statuses.values())
        assert statuses[200] == min(LIMIT, total), windows
        assert statuses[429] == total - statuses[200], windows
    assert sum(s[429] for s in windows.values()) >= REQUESTS + 1 - 2 * LIMIT
    refused = next(r for r in responses if r.status_code == 429)
    assert refused.json()["error"]["code"] == "ERR-8003"
    assert 1 <= int(refused.headers["Retry-After"]) <= 60
