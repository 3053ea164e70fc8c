"""Schedule loads run by the worker: a file uploaded in the back office whose
load would touch many flight-date legs is queued here rather than loaded inside the
request (a new season can take a minute, longer than any proxy or gunicorn waits), and
the back office shows its progress.

A job is claimed with SKIP LOCKED, so two workers never load one file, and loaded by the
same `schedule_load` as `manage.py load_schedule`, in one transaction. While it runs, a
second thread with its own connection writes the load's progress and a heartbeat every
HEARTBEAT_SECONDS: the load's own writes are invisible until it commits. A worker that
dies mid-load leaves its job RUNNING with a stale heartbeat and its transaction rolled
back; the next claim takes it up again (the load is idempotent: a file loaded already is
a no-op), at most MAX_ATTEMPTS times.
"""

import logging
import threading
from collections.abc import Callable
from datetime import datetime, timedelta

from django.db import connection, transaction
from django.db.models import Q

from airline.api import clock
from airline.network.models import ScheduleJob
from airline.network.services import ScheduleError, known_station, load_summary, schedule_load
from airline.network.ssim import SsimFileError, parse_ssim

logger = logging.getLogger(__name__)

HEARTBEAT_SECONDS = 1.0
LEASE = timedelta(seconds=60)  # a heartbeat older than this: its worker is gone
MAX_ATTEMPTS = 3
Status = ScheduleJob.Status


def schedule_job_queue(
    *, text: str, file_name: str, sha256: str, queued_by, now: datetime
) -> ScheduleJob:
    """Queue a schedule file for the worker to load."""
    return ScheduleJob.objects.create(
        text=text, file_name=file_name, sha256=sha256, queued_by=queued_by, queued_at=now
    )


def schedule_jobs_run(*, now: Callable[[], datetime] = clock.now) -> dict[str, int]:
    """Load the oldest queued schedule file, if any (the worker's job)."""
    job = _claim(now())
    if job is None:
        return {}
    return {"schedule_files_loaded" if _load(job, now) else "schedule_files_refused": 1}


def _claim(now: datetime) -> ScheduleJob | None:
    with transaction.atomic():
        job = (
            ScheduleJob.objects.select_for_update(skip_locked=True)
            .filter(
                Q(status=Status.QUEUED) | Q(status=Status.RUNNING, heartbeat_at__lt=now - LEASE)
            )
            .order_by("queued_at", "pk")
            .first()
        )
        if job is None:
            return None
        if job.attempts >= MAX_ATTEMPTS:
            _finish(
                job,
                Status.FAILED,
                now,
                f"The worker stopped {job.attempts} times while loading it; see its log.",
            )
            return None
        job.status, job.stage, job.done, job.total = Status.RUNNING, "starting", 0, 0
        job.started_at = job.heartbeat_at = now
        job.attempts += 1
        job.save(
            update_fields=[
                "status",
                "stage",
                "done",
                "total",
                "started_at",
                "heartbeat_at",
                "attempts",
            ]
        )
    return job


def _load(job: ScheduleJob, now: Callable[[], datetime]) -> bool:
    """Load the job's file; record how it went. True when it loaded (or was loaded)."""
    beat = _Heartbeat(job.pk, now)
    beat.start()
    try:
        schedule = parse_ssim(job.text, known_station=known_station)
        result = schedule_load(
            schedule=schedule,
            file_name=job.file_name,
            sha256=job.sha256,
            now=now(),
            progress=beat.report,
        )
    except (SsimFileError, ScheduleError) as exc:
        beat.stop()
        _finish(job, Status.FAILED, now(), str(exc))
        return False
    except Exception:
        beat.stop()
        _finish(job, Status.FAILED, now(), "The load failed; see the worker's log.")
        raise
    beat.stop()
    _finish(job, Status.LOADED, now(), load_summary(job.file_name, result), load=result.load)
    return True


def _finish(job: ScheduleJob, status: str, now: datetime, message: str, load=None) -> None:
    job.status, job.message, job.finished_at, job.load = status, message, now, load
    job.stage = "done" if status == Status.LOADED else "stopped"
    job.text = ""  # the schedule is stored as its records now; a refused file is not kept
    job.save(update_fields=["status", "message", "finished_at", "load", "stage", "text"])


class _Heartbeat:
    """Writes a running job's progress and heartbeat from its own thread (and so its own
    database connection) every HEARTBEAT_SECONDS. SQLite takes one writer at a time and
    the load is that writer, so there the job shows "starting" until it ends."""

    def __init__(self, job_pk: int, now: Callable[[], datetime]) -> None:
        self.job_pk, self.now = job_pk, now
        self.stage, self.done, self.total = "starting", 0, 0
        self._stopped = threading.Event()
        self._thread = threading.Thread(target=self._beat, name="schedule-job", daemon=True)

    def report(self, stage: str, done: int, total: int) -> None:
        self.stage, self.done, self.total = stage, done, total  # read by the thread

    def start(self) -> None:
        if connection.vendor != "sqlite":
            self._thread.start()

    def stop(self) -> None:
        self._stopped.set()
        if self._thread.is_alive():
            self._thread.join()

    def _beat(self) -> None:
        try:
            while not self._stopped.wait(HEARTBEAT_SECONDS):
                ScheduleJob.objects.filter(pk=self.job_pk, status=Status.RUNNING).update(
                    stage=self.stage[:100],
                    done=self.done,
                    total=self.total,
                    heartbeat_at=self.now(),
                )
        except Exception:
            logger.exception("schedule job heartbeat failed")
        finally:
            connection.close()  # this thread's own
