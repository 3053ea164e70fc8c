"""The hold's floor: the captured holds' SQL served over HTTP by gunicorn with nothing else.

A WSGI application of a few lines, served by the benchmarks' gunicorn (the same two
sync workers, the same clients sending the same hold bodies), that answers each POST by
running one captured hold's replay script (benchmarks/replay.py) through psycopg, as
`Replayer.run_python` does, and a two-word JSON answer (any other method: 200, for the
readiness probe). No Django, no authentication, no validation, no pricing, no order
view: what HTTP, gunicorn and the driver cost around the hold's statements on this
machine. Its rate against the pgbench replay bounds what
any service written on this stack can reach, and what is left between that bound and
the target is all the service's own work may cost.

    gunicorn -c python:benchmarks.floor benchmarks.floor:application

reads FLOOR_SCRIPTS (the replay's directory of `hold-*.sql`), FLOOR_DATABASE and
FLOOR_CLIENTS (the replay's client count, which its unique values are spread over).
Each worker numbers its transactions from 1 as a pgbench client does, its client number
being its gunicorn age (set in post_fork, below), so two workers never write the same
unique value, nor the same as a pgbench replay run in between (each replay's rows are
deleted after it: Replayer.room).

The framework floor (benchmarks/floor_urls.py) sends the same scripts, numbered the same
way, through `hold_next` from inside the service's framework.
"""

import json
import os
from pathlib import Path

import psycopg

from benchmarks.replay import counters, script_commands, send_script, unprepared

_state: dict = {}


def post_fork(server, worker) -> None:
    """gunicorn's hook (this module is also the server's config): the worker's client
    number for the replay's unique values."""
    _state["client"] = worker.age % int(os.environ["FLOOR_CLIENTS"])


def hold_next(execute) -> int:
    """The next captured hold in this worker's turn, its script sent through `execute`
    (replay.send_script), its values this worker's own: its transaction number. The
    scripts are read at the worker's first hold."""
    if "scripts" not in _state:
        _state["clients"] = int(os.environ["FLOOR_CLIENTS"])
        _state["scripts"] = script_commands(Path(os.environ["FLOOR_SCRIPTS"]))
        _state["seq"] = 0
    _state["seq"] = seq = _state["seq"] + 1
    values = counters(seq, _state["clients"], _state["client"])
    send_script(execute, _state["scripts"][seq % len(_state["scripts"])], values)
    return seq


def _connection() -> psycopg.Connection:
    """This worker's connection, made at its first hold."""
    if "connection" not in _state:
        _state["connection"] = psycopg.connect(
            f"postgres://postgres@127.0.0.1:5432/{os.environ['FLOOR_DATABASE']}", autocommit=True
        )
    return _state["connection"]


def application(environ, start_response):
    if environ["REQUEST_METHOD"] != "POST":  # a readiness probe (GET /health)
        start_response("200 OK", [("Content-Type", "application/json")])
        return [b'{"status": "ok"}']
    environ["wsgi.input"].read()  # the hold's body, read as the service reads it
    conn = _connection()
    try:
        seq = hold_next(unprepared(conn))
    except psycopg.Error as exc:
        conn.execute("ROLLBACK")  # a warning only, should the error have ended it
        start_response("500 Internal Server Error", [("Content-Type", "text/plain")])
        return [str(exc).encode()]
    body = json.dumps({"held": seq}).encode()
    start_response(
        "201 Created", [("Content-Type", "application/json"), ("Content-Length", str(len(body)))]
    )
    return [body]
