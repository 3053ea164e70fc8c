"""PostgreSQL's CPU statement by statement, for the profile (benchmarks/profile.py).

An execute wrapper on Django's default connection reads the CPU clock of the PostgreSQL
backend that serves it (the kernel's schedstat of that process) before and after each
statement, and adds the difference to the statement's label: its verb and the tables it
writes, or else those it reads from. What the backend spends outside any statement the wrapper sees
(BEGIN, COMMIT, the connection's health check, reading the next message) is the
request's whole backend CPU less the statements'. Reading the clock costs the client a
few microseconds a statement: the profile traces requests of their own, not the timed
or profiled ones. A statement the service sends in a pipeline is answered at once while
tracing (benchmarks.common.executed_at_once), so that its CPU is its own.
"""

import re
from collections import defaultdict
from collections.abc import Iterator
from contextlib import contextmanager

from benchmarks.common import executed_at_once, process_cpu_ns

BETWEEN = "BEGIN, COMMIT and between statements"
_WRITES = re.compile(r'\b(INSERT INTO|UPDATE|DELETE FROM) "(\w+)"')
_READS = re.compile(r'\bFROM "(\w+)"')


def statement_label(sql: str) -> str:
    """What a statement does, in a few words: `INSERT orders_passenger`, `SELECT
    network_flightleg ... FOR UPDATE`, every table a statement of data-modifying CTEs
    writes (`WITH: UPDATE orders_order + INSERT orders_payment ...`), or every table a
    SELECT names after FROM (the EXISTS of an order's often empty parts: several)."""
    text = sql.lstrip()
    if "set_config(" in text:
        return "SELECT set_config (lock timeout)"
    writes = [f"{verb.split()[0]} {table}" for verb, table in _WRITES.findall(text)]
    if writes:
        return ("WITH: " if text.startswith("WITH") else "") + " + ".join(dict.fromkeys(writes))
    verb = text.split(None, 1)[0].upper() if text else "?"
    reads = " + ".join(dict.fromkeys(_READS.findall(text)))
    label = f"{verb} {reads}" if reads else verb
    return label + (" ... FOR UPDATE" if "FOR UPDATE" in text else "")


@contextmanager
def backend_cpu_by_statement() -> Iterator[dict[str, float]]:
    """Within the block, each statement of the default connection adds its backend's
    CPU seconds to the yielded dict under its label."""
    from django.db import connection

    spent: dict[str, float] = defaultdict(float)

    def timed(execute, sql, params, many, context):
        backend = connection.connection.info.backend_pid
        started = process_cpu_ns(backend)
        try:
            return executed_at_once(execute, sql, params, many, context)
        finally:
            spent[statement_label(sql)] += (process_cpu_ns(backend) - started) / 1e9

    with connection.execute_wrapper(timed):
        yield spent
