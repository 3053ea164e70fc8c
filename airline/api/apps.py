from django.apps import AppConfig


class ApiConfig(AppConfig):
    """The HTTP kernel shared by every app: envelope, errors, versions, request ids. The
    apps built on it register with it (error renderers, metrics, worker jobs) in their
    own ready(); it imports none of them (architecture.md "Layers")."""

    name = "airline.api"
    label = "api"

    def ready(self) -> None:
        from django.db.backends.signals import connection_created

        from airline.standby import replica_connection_checked
        from airline.worker import job_register

        job_register(idempotency_purge_job)
        connection_created.connect(replica_connection_checked)


def idempotency_purge_job():
    from airline.api import clock
    from airline.api.idempotency import idempotency_purge
    from airline.worker import Job

    return Job(
        "purge_idempotency_keys",
        3600,
        lambda: {"keys_forgotten": idempotency_purge(now=clock.now())},
    )
