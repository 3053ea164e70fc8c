from django.apps import AppConfig


class NetworkConfig(AppConfig):
    """Stations, fleet and seat configurations, the SSIM schedule, flight-date legs and
    their seat inventory, and the itineraries they make."""

    name = "airline.network"
    label = "network"

    def ready(self) -> None:
        from airline.api.readiness import register_readiness_check
        from airline.network.itineraries import network_is_ready
        from airline.worker import job_register

        register_readiness_check("schedule", network_is_ready)
        job_register(schedule_load_job)


def schedule_load_job():
    from django.conf import settings

    from airline.network.jobs import schedule_jobs_run
    from airline.worker import Job

    # Schedule files queued from the back office (airline.network.jobs).
    return Job("load_schedules", settings.WORKER_SCHEDULE_SECONDS, schedule_jobs_run)
