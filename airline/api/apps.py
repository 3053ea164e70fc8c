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
        _close_caches_only_if_needed()


# Cache backends whose close() at the end of a request does nothing: Django's database
# and local-memory caches, and django-redis unless told to close its connections.
_NOTHING_TO_CLOSE = {
    "django.core.cache.backends.db.DatabaseCache",
    "django.core.cache.backends.locmem.LocMemCache",
    "django.core.cache.backends.dummy.DummyCache",
    "django_redis.cache.RedisCache",
}


def _close_caches_only_if_needed() -> None:
    """Django closes every cache at the end of every request (`close_caches` on
    request_finished), for backends that hold a connection per request; ours keep theirs
    for the process (django-redis's pool), and the call walked the caches for nothing on
    every request. It stays connected if any configured cache would close something."""
    from django.conf import settings
    from django.core.cache import close_caches
    from django.core.signals import request_finished

    if getattr(settings, "DJANGO_REDIS_CLOSE_CONNECTION", False):
        return
    for cache in settings.CACHES.values():
        if cache["BACKEND"] not in _NOTHING_TO_CLOSE:
            return
        if cache.get("OPTIONS", {}).get("CLOSE_CONNECTION"):
            return
    request_finished.disconnect(close_caches)


def idempotency_purge_job():
    from airline.api import clock
    from airline.api.idempotency import idempotency_purge
    from airline.worker import Job

    return Job(
        "purge_idempotency_keys",
        3600,
        lambda: {"keys_forgotten": idempotency_purge(now=clock.now())},
    )
