"""What a real gunicorn node tells a stranger (issue 28 item 7): no `Server` header naming
the server, and a foreign Host header answered 400 in the API's shape with one WARNING
line in the node's log and no traceback."""

import json
import socket

import pytest
import requests

from tests.e2e.servers import gunicorn, server_env_on_test_database

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True, serialized_rollback=True)]


def raw_get(url: str, path: str, host: str) -> bytes:
    """A GET with exactly this Host header, the whole answer as sent (HTTP/1.0: not chunked)."""
    address = url.removeprefix("http://").split(":")
    with socket.create_connection((address[0], int(address[1])), timeout=10) as sock:
        sock.sendall(f"GET {path} HTTP/1.0\r\nHost: {host}\r\n\r\n".encode())
        chunks = []
        while chunk := sock.recv(65536):
            chunks.append(chunk)
    return b"".join(chunks)


def test_a_node_names_no_server_and_answers_a_foreign_host_quietly(tmp_path):
    with gunicorn(server_env_on_test_database(), tmp_path / "server.log") as server:
        answers = [
            requests.get(server.url + "/health", timeout=10),
            requests.get(server.url + "/json/v1/orders", timeout=10),
            requests.get(server.url + "/admin/login/", timeout=10),
            requests.get(server.url + "/static/admin/css/base.css", timeout=10),
        ]
        foreign = raw_get(server.url, "/json/v1/orders", "scanner.example.net")
        log = server.output()

    for answer in answers:
        assert "Server" not in answer.headers, (answer.url, answer.headers["Server"])
    head, _, body = foreign.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.0 400 ")
    assert b"\r\nserver:" not in head.lower()
    assert json.loads(body)["error"]["code"] == "ERR-1004"
    lines = [json.loads(line) for line in log.splitlines() if line.startswith("{")]
    warnings = [line for line in lines if line["logger"] == "airline.security"]
    assert [(w["level"], w["host"]) for w in warnings] == [("WARNING", "scanner.example.net")]
    assert not [line for line in lines if line["level"] in ("ERROR", "CRITICAL") or "exc" in line]
    assert "Traceback" not in log
