"""The background worker (issue 13 point 7; DESIGN.md §10): jobs at their intervals, a
failing job logged and retried, a clean stop; and the point of it, a lapsed hold's seats
back on sale within one sweep without anyone reading the order."""

import signal
import subprocess
import sys
import threading
import time

import pytest

from airline.network.models import LegInventory
from airline.worker import Job, jobs, run_forever, run_once
from orders.models import Order, OrderStatus
from tests.e2e.servers import REPO, server_env_on_test_database
from tests.orders.conftest import book, booking_body


class FakeTime:
    """The worker's monotonic clock and its wait, with nothing waiting for real."""

    def __init__(self) -> None:
        self.now = 1000.0
        self.waits: list[float] = []

    def clock(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.waits.append(seconds)
        self.now += seconds


def test_each_job_runs_at_its_own_interval():
    fake, stop, ran = FakeTime(), threading.Event(), []

    def job(name):
        def run():
            ran.append((name, fake.now - 1000))
            if fake.now - 1000 >= 60:
                stop.set()
            return {}

        return run

    run_forever(
        [Job("sweep", 5, job("sweep")), Job("reconcile", 30, job("reconcile"))],
        stop=stop,
        clock=fake.clock,
        sleep=fake.sleep,
    )

    assert [t for name, t in ran if name == "sweep"] == [5.0 * n for n in range(13)]
    assert [t for name, t in ran if name == "reconcile"] == [0.0, 30.0]
    assert max(fake.waits) <= 5


def test_a_failing_job_is_logged_and_tried_again_and_the_others_go_on(caplog):
    fake, stop = FakeTime(), threading.Event()
    calls = {"broken": 0, "fine": 0}

    def broken():
        calls["broken"] += 1
        raise RuntimeError("database gone")

    def fine():
        calls["fine"] += 1
        if calls["fine"] == 4:
            stop.set()
        return {"done": 1}

    run_forever(
        [Job("broken", 10, broken), Job("fine", 10, fine)],
        stop=stop,
        clock=fake.clock,
        sleep=fake.sleep,
    )

    assert calls == {"broken": 4, "fine": 4}
    failures = [r for r in caplog.records if r.getMessage() == "job failed"]
    assert len(failures) == 4
    assert failures[0].fields == {"job": "broken"}
    assert failures[0].exc_info[0] is RuntimeError


@pytest.mark.django_db
def test_one_sweep_gives_a_lapsed_holds_seats_back_without_anyone_reading_it(
    api, auth, priced, clock
):
    before = sorted(LegInventory.objects.values_list("leg_id", "rbd", "sold"))
    hold = book(api, auth, booking_body(priced)).json()["data"]["order"]
    assert sorted(LegInventory.objects.values_list("leg_id", "rbd", "sold")) != before

    run_once(jobs())  # not yet due: nothing happens
    assert Order.objects.get(order_id=hold["orderId"]).status == OrderStatus.ONHOLD
    clock.advance(hours=25)
    run_once(jobs())

    assert Order.objects.get(order_id=hold["orderId"]).status == OrderStatus.CANCELLED
    assert sorted(LegInventory.objects.values_list("leg_id", "rbd", "sold")) == before


@pytest.mark.django_db(transaction=True, serialized_rollback=True)
def test_run_worker_starts_and_stops_cleanly_on_sigterm():
    worker = subprocess.Popen(
        [sys.executable, "manage.py", "run_worker"],
        cwd=REPO,
        env=server_env_on_test_database(),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        first = worker.stdout.readline()  # blocks until the worker says it runs
        assert first.startswith("Worker running: "), first
        assert "expire_holds every" in first, first
        assert "deliver_webhooks every" in first, first
        started = time.monotonic()
        worker.send_signal(signal.SIGTERM)
        assert worker.wait(timeout=20) == 0
        assert time.monotonic() - started < 20
    finally:
        if worker.poll() is None:
            worker.kill()


def test_a_stop_given_from_a_signal_handler_ends_a_wait_at_once():
    from airline.worker import StopSignal

    stop = StopSignal()
    assert not stop.wait(0)

    stop.set()  # what the SIGTERM handler calls

    started = time.monotonic()
    assert stop.wait(3600) is True  # returns at once, not after the hour
    assert time.monotonic() - started < 60
    assert stop.is_set()
