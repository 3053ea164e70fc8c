"""A worker stalled past its deadline answers the client itself, 503 ERR-9000 with
Retry-After in JSON (or NDC XML), before gunicorn's `timeout` kills it and the client
gets nothing, or gunicorn's HTML. Real gunicorn with the shipped settings
(gunicorn.conf.py: its worker class, its timeout from GUNICORN_TIMEOUT), each API
request first stalled in PostgreSQL (pg_sleep) by the test-only
TEST_REQUEST_STALL_SECONDS, for longer than gunicorn's timeout."""

import time

import pytest
import requests
from lxml import etree

from tests.e2e.servers import gunicorn, server_env_on_test_database, worker_pids

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True, serialized_rollback=True)]

GUNICORN_TIMEOUT = 6  # seconds
STALL = 12  # past gunicorn's timeout
DEADLINE = 2


def stalled_env(deadline: int) -> dict[str, str]:
    return {
        **server_env_on_test_database(),
        "GUNICORN_TIMEOUT": str(GUNICORN_TIMEOUT),
        "REQUEST_DEADLINE_SECONDS": str(deadline),
        "TEST_REQUEST_STALL_SECONDS": str(STALL),
    }


def test_a_stalled_request_is_answered_json_and_xml_before_gunicorn_kills_it(tmp_path):
    with gunicorn(stalled_env(DEADLINE), tmp_path / "server.log") as server:
        workers = worker_pids(server.pid)
        started = time.monotonic()
        answer = requests.get(server.url + "/json/v1/orders", timeout=30)
        took = time.monotonic() - started
        ndc = requests.post(
            server.url + "/ndc/v1/OrderRetrieve",
            data=b"<x/>",
            headers={"Content-Type": "application/xml"},
            timeout=30,
        )
        same_workers = worker_pids(server.pid) == workers
        log = server.output()

    assert answer.status_code == 503, answer.text
    assert answer.headers["Content-Type"].startswith("application/json")
    assert answer.headers["Retry-After"]
    assert answer.json()["error"]["code"] == "ERR-9000"
    assert took < GUNICORN_TIMEOUT
    assert ndc.status_code == 503, ndc.text
    assert ndc.headers["Content-Type"].startswith("application/xml")
    assert etree.fromstring(ndc.content).xpath("string(//*[local-name()='Code'])") == "ERR-9000"
    # The worker answered and lives on: gunicorn killed no one.
    assert same_workers
    assert "WORKER TIMEOUT" not in log
    assert "request cut short at its deadline" in log


def test_without_the_deadline_gunicorn_kills_the_worker_and_the_client_gets_no_json(tmp_path):
    """What the deadline prevents, shown: the same stall with no deadline of ours."""
    with gunicorn(stalled_env(0), tmp_path / "server.log") as server:
        try:
            answer = requests.get(server.url + "/json/v1/orders", timeout=30)
        except requests.ConnectionError:
            answer = None
        log = server.output()

    assert "WORKER TIMEOUT" in log
    assert answer is None or not answer.headers.get("Content-Type", "").startswith(
        "application/json"
    )
