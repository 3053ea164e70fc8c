"""A stopping node refuses new connections at once and still answers the requests in hand
(airline/gunicorn_worker.py; issue 24's /health through a restart): before, a connection
made while a worker finished its last request waited in the dying socket's backlog and
was reset when the node was gone."""

import os
import signal
import socket
import threading
import time

import pytest
import requests
from django.db import connection, connections, transaction

from sellers.keys import generate_key
from sellers.models import ApiKey
from tests.e2e.servers import gunicorn, server_env_on_test_database, worker_pids

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True, serialized_rollback=True)]

POLL_SECONDS = 10  # bound on waiting for other processes; gunicorn's graceful timeout is 30


def poll(check) -> bool:
    """Poll `check` until true or POLL_SECONDS pass (other processes acting, not timing)."""
    deadline = time.monotonic() + POLL_SECONDS
    while not check():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)
    return True


def connect_refused(address: tuple[str, int]) -> bool:
    try:
        socket.create_connection(address, timeout=1).close()
    except ConnectionRefusedError:
        return True
    return False


def test_a_stopping_node_refuses_new_connections_and_answers_the_one_in_hand(tmp_path):
    answers = []
    with gunicorn(server_env_on_test_database(), tmp_path / "node.log", workers=2) as node:
        address = ("127.0.0.1", int(node.url.rsplit(":", 1)[1]))
        with transaction.atomic():
            # A request in hand: a worker waits in the database for the table this holds.
            with connection.cursor() as cursor:
                cursor.execute(f"LOCK TABLE {ApiKey._meta.db_table} IN ACCESS EXCLUSIVE MODE")
            in_hand = threading.Thread(target=lambda: answers.append(token_of_unknown_key(node)))
            in_hand.start()
            assert poll(lambda: waiting_on_a_lock() == 1)

            os.kill(node.pid, signal.SIGTERM)

            # Refused while that request is in hand, not queued until the node is gone.
            assert poll(lambda: connect_refused(address)), "new connections were still accepted"
            assert worker_pids(node.pid), "the workers left without the request in hand"
        in_hand.join(timeout=POLL_SECONDS)
        log = node.output

    [answer] = answers  # answered in full once the table was free
    assert answer.status_code == 401, answer.text
    assert answer.json()["error"]["code"].startswith("ERR-")
    assert "Traceback" not in log(), log()
    assert "Exception in worker" not in log(), log()


def token_of_unknown_key(node) -> requests.Response:
    """Well formed, so looked up in the database (ERR-8000 once found unknown)."""
    _, raw = generate_key()
    return requests.post(node.url + "/auth/token", headers={"x-api-key": raw}, timeout=30)


def waiting_on_a_lock() -> int:
    """Other sessions of this database waiting for a lock (the node's worker)."""
    with connections["default"].cursor() as cursor:
        cursor.execute("select pg_stat_clear_snapshot()")  # else read once a transaction
        cursor.execute(
            "select count(*) from pg_stat_activity where datname = current_database()"
            " and wait_event_type = 'Lock'"
        )
        return cursor.fetchone()[0]
