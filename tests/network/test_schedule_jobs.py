"""Large schedule uploads loaded by the worker (issue 24): the back office queues a file
that writes more flight-date legs than a request should, the worker loads it with the
same service as `load_schedule`, and the job's page shows how far it has got; a worker
that dies mid-load leaves a job the next one takes up."""

import threading
from datetime import UTC, datetime, time, timedelta

import pytest
from django.db import connection, connections  # noqa: F401 (the skipif condition reads it)
from django.test import Client

from airline.network import jobs, services
from airline.network.jobs import schedule_job_queue, schedule_jobs_run
from airline.network.models import FlightLeg, ScheduleJob, ScheduleLoad
from tests.network.ssim_builder import Leg, ssim_file
from tests.network.test_admin_schedule_upload import (
    RETIMED_101,
    confirm,
    pvd_chs,
    schedule_state,
    upload,
)
from tests.orders import conftest as booking
from tests.orders.test_admin_roles import staff_in

pytestmark = pytest.mark.django_db
network, travel_day = booking.network, booking.travel_day
WAIT = 30  # seconds: a bound on each wait for the worker's thread, never a pause


@pytest.fixture
def operations(client):
    return staff_in(client, "Operations")


def test_an_upload_that_writes_many_legs_is_queued_for_the_worker_then_loaded(
    operations, network, travel_day, settings
):
    settings.SCHEDULE_INLINE_LEGS = 100  # the file below writes 61 + 61 + 244 legs
    before = schedule_state()
    page = upload(operations, pvd_chs(network, flight_101=RETIMED_101, add_103=True))

    queued = confirm(operations, page)

    job = ScheduleJob.objects.get()
    assert queued.redirect_chain[-1][0] == f"/admin/network/schedulejob/{job.pk}/change/"
    html = queued.content.decode()
    assert "the worker is loading it" in html
    assert '<meta http-equiv="refresh" content="2">' in html  # until it is done
    assert (job.status, job.file_name, job.queued_by) == ("QUEUED", "w27.ssim", operations.user)
    assert schedule_state() == before  # nothing loaded by the request

    assert schedule_jobs_run() == {"schedule_files_loaded": 1}

    job.refresh_from_db()
    load = ScheduleLoad.objects.first()
    assert (job.status, job.load, job.text) == ("LOADED", load, "")
    assert (load.legs_created, load.legs_updated, load.legs_removed) == (61, 61, 244)
    leg = FlightLeg.objects.get(flight_number=101, flight_date=travel_day)
    assert leg.departs_at.astimezone(UTC).time() == time(13, 30)  # 08:30 EST
    page = operations.get(f"/admin/network/schedulejob/{job.pk}/change/").content.decode()
    assert f"Loaded w27.ssim (version {load.pk}): 61 flight-date legs created" in page
    assert 'http-equiv="refresh"' not in page
    listed = operations.get("/admin/network/schedulejob/").content.decode()
    assert "w27.ssim" in listed
    assert schedule_jobs_run() == {}  # nothing left


def test_a_small_upload_still_loads_inline(operations, network, settings):
    settings.SCHEDULE_INLINE_LEGS = 1000
    page = upload(operations, pvd_chs(network, flight_101=RETIMED_101))

    done = confirm(operations, page)

    assert ScheduleJob.objects.count() == 0
    assert done.redirect_chain[-1][0].startswith("/admin/network/scheduleload/")


def test_a_file_the_loader_refuses_fails_its_job_and_changes_nothing(network):
    before = schedule_state()
    start = network
    unseatable = Leg(
        103, "PVD", "CHS", time(18, 0), time(20, 5), start, start, aircraft="777", configuration="X"
    )
    text = ssim_file([unseatable])
    job = schedule_job_queue(
        text=text, file_name="bad.ssim", sha256="f" * 64, queued_by=None, now=_now()
    )

    assert schedule_jobs_run() == {"schedule_files_refused": 1}

    job.refresh_from_db()
    assert job.status == "FAILED"
    assert "no seat configuration" in job.message
    assert job.text == ""
    assert schedule_state() == before


def test_a_job_left_running_by_a_dead_worker_is_taken_up_again_then_given_up(network):
    text = pvd_chs(network, flight_101=RETIMED_101)
    now = _now()
    stale = now - jobs.LEASE - timedelta(seconds=1)
    left = schedule_job_queue(
        text=text, file_name="a.ssim", sha256="a" * 64, queued_by=None, now=now
    )
    ScheduleJob.objects.filter(pk=left.pk).update(status="RUNNING", heartbeat_at=stale, attempts=1)
    alive = schedule_job_queue(
        text=text, file_name="b.ssim", sha256="b" * 64, queued_by=None, now=now
    )
    ScheduleJob.objects.filter(pk=alive.pk).update(status="RUNNING", heartbeat_at=now, attempts=1)

    assert schedule_jobs_run(now=lambda: now) == {"schedule_files_loaded": 1}

    left.refresh_from_db()
    assert (left.status, left.attempts) == ("LOADED", 2)
    alive.refresh_from_db()
    assert alive.status == "RUNNING"  # its worker is still at it: not taken

    ScheduleJob.objects.filter(pk=alive.pk).update(heartbeat_at=stale, attempts=jobs.MAX_ATTEMPTS)
    assert schedule_jobs_run(now=lambda: now) == {}
    alive.refresh_from_db()
    assert alive.status == "FAILED"
    assert "stopped 3 times" in alive.message


@pytest.mark.django_db(transaction=True, serialized_rollback=True)
@pytest.mark.skipif("connection.vendor != 'postgresql'")
def test_the_job_page_shows_the_load_s_progress_while_the_worker_is_at_it(
    network, monkeypatch, admin_user
):
    monkeypatch.setattr(jobs, "HEARTBEAT_SECONDS", 0.01)
    locking, go = threading.Event(), threading.Event()
    lock_then_wait = services.flights_changing

    def held(leg_ids):
        lock_then_wait(leg_ids)
        locking.set()
        assert go.wait(WAIT)

    monkeypatch.setattr(services, "flights_changing", held)
    text = pvd_chs(network, flight_101=RETIMED_101)
    job = schedule_job_queue(
        text=text, file_name="w.ssim", sha256="c" * 64, queued_by=None, now=_now()
    )
    done: list = []

    def work():
        try:
            done.append(schedule_jobs_run())
        finally:
            connections.close_all()

    worker = threading.Thread(target=work)
    worker.start()
    try:
        assert locking.wait(WAIT)
        shown = _until(job.pk, lambda row: row.stage.startswith("locking"))
        assert shown.status == "RUNNING"
        assert shown.total == 61 + 4 * 61  # MX101 retimed; 501 x2, 701, 702 dropped
        assert shown.heartbeat_at is not None
        staff = Client()
        staff.force_login(admin_user)
        page = staff.get(f"/admin/network/schedulejob/{job.pk}/change/").content.decode()
        assert "locking the flights that change: 0 of 305" in page
        assert '<meta http-equiv="refresh" content="2">' in page
    finally:
        go.set()
        worker.join(WAIT)
    assert done == [{"schedule_files_loaded": 1}]
    assert ScheduleJob.objects.get(pk=job.pk).status == "LOADED"


def _until(pk: int, found) -> ScheduleJob:
    stop = threading.Event()
    for _ in range(WAIT * 100):
        row = ScheduleJob.objects.get(pk=pk)
        if found(row):
            return row
        stop.wait(0.01)
    raise AssertionError("the job's progress never showed")


def _now() -> datetime:
    return datetime.now(UTC)
