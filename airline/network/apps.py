from django.apps import AppConfig


class NetworkConfig(AppConfig):
    """Stations, fleet and seat configurations, the SSIM schedule, flight-date legs and
    their seat inventory, and the itineraries they make."""

    name = "airline.network"
    label = "network"

    def ready(self) -> None:
        from airline.api import metrics
        from airline.api.readiness import register_readiness_check
        from airline.network.follow_up import bookings_untold
        from airline.network.itineraries import network_is_ready
        from airline.worker import job_register

        register_readiness_check("schedule", network_is_ready)
        metrics.queue_register(
            "airline_schedule_bookings_untold",
            "Bookings on flights a schedule load changed, not yet told (their airline "
            "change and webhook): the worker's follow-up backlog",
            bookings_untold,
        )
        job_register(schedule_load_job)
        job_register(schedule_follow_up_job)


def schedule_load_job():
    from django.conf import settings

    from airline.network.jobs import schedule_jobs_run
    from airline.worker import Job

    # Schedule files queued from the back office (airline.network.jobs).
    return Job("load_schedules", settings.WORKER_SCHEDULE_SECONDS, schedule_jobs_run)


def schedule_follow_up_job():
    from django.conf import settings

    from airline.network.follow_up import follow_ups_run
    from airline.worker import Job

    # The bookings on flights a load changed, told in batches once it has committed
    # (airline.network.follow_up): again at once while batches are left.
    return Job(
        "schedule_follow_ups",
        settings.WORKER_SCHEDULE_SECONDS,
        follow_ups_run,
        again_while_busy=True,
    )
