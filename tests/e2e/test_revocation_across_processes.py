"""A key revoked in one process stops its tokens at once in every other process, even one
that has just resolved and remembered the token (DESIGN.md §5; sellers/authcache.py)."""

import pytest
import requests

from airline.api import clock
from sellers.services import api_key_revoke
from tests.e2e.servers import gunicorn, server_env_on_test_database
from tests.sellers.factories import ApiKeyFactory, PartnerFactory, SellerFactory

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True, serialized_rollback=True)]


def test_a_revocation_reaches_a_server_that_remembers_the_token(tmp_path):
    partner = PartnerFactory()
    SellerFactory(partner=partner, is_default=True)
    issued = ApiKeyFactory(partner=partner)

    with gunicorn(server_env_on_test_database(), tmp_path / "server.log") as server:
        token = requests.post(
            server.url + "/auth/token", headers={"x-api-key": issued.raw}, timeout=5
        ).json()
        headers = {"Authorization": f"Bearer {token['access_token']}"}
        before = [
            requests.get(server.url + "/json/v1/whoami", headers=headers, timeout=5).status_code
            for _ in range(3)
        ]

        api_key_revoke(key=issued.key, at=clock.now())  # this process, committed
        after = requests.get(server.url + "/json/v1/whoami", headers=headers, timeout=5)

    assert before == [200, 200, 200]
    assert after.status_code == 401
    assert after.json()["error"]["code"] == "ERR-8000"
