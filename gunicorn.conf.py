"""gunicorn settings (read from the working directory by default)."""

# The service's own JSON line per request (airline/api/middleware.py) is its request log:
# it names the route and path, never the query string or headers, which carry surnames
# (OrderList ?lastName=), tokens and keys. gunicorn's access log is off; whoever turns it
# on (--access-logfile) gets this format, which leaves out the query string (%(q)s, and
# %(r)s, the whole request line) and the Referer (%(f)s, which may carry another query).
accesslog = None
access_log_format = '%(h)s %(t)s "%(m)s %(U)s %(H)s" %(s)s %(B)s %(M)sms "%(a)s"'


def on_starting(server):
    """Before any worker starts: the metrics directory exists and holds no files of
    processes that are gone (airline/api/metrics.py). Loading the settings sets
    PROMETHEUS_MULTIPROC_DIR for the workers when METRICS_ENABLED."""
    import os

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "airline.settings")
    from django.conf import settings

    if settings.METRICS_ENABLED:
        from airline.api.metrics import multiprocess_dir_prepare

        multiprocess_dir_prepare()


def post_worker_init(worker):
    """Start building this worker's itinerary index at once, so /health turns ok without
    waiting for a first request to ask (SPEC.md §4.3)."""
    from airline.network.itineraries import warm_network_index

    warm_network_index()
