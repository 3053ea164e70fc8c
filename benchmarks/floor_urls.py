"""The framework floor's one endpoint: a hold's captured SQL behind everything every
endpoint of the service pays for and nothing a booking adds.

POST /json/<version>/orders goes through the service's middleware (request id and log
line, deadline, host and method checks), DRF's dispatch with the service's seller
authentication, booking permission and API-key throttle, the JSON body parsed by the
service's parser, one captured hold's script (benchmarks/replay.py) sent through
Django's own cursor, and an enveloped JSON answer rendered by the service's renderer.
Left out is what a booking itself does: validating the body, reading and pricing the
offer, building the rows, the order view, events and the webhook outbox. Its rate
against the pgbench replay bounds what any booking endpoint written on Django and DRF
can reach on this machine; what is left between it and the target is all the booking's
own logic may cost.
"""

from django.db import DatabaseError, connection
from django.urls import path, register_converter

from airline.api.endpoints import ServiceView
from airline.api.responses import ok
from airline.api.versioning import VersionConverter
from airline.api.views import health
from benchmarks.floor import hold_next
from sellers.permissions import CanBook

register_converter(VersionConverter, "version")


class FloorHoldView(ServiceView):
    def get_permissions(self):
        return [CanBook()]  # as a booking's

    def post(self, request, version):
        self.request.data  # noqa: B018 (the body parsed, as every endpoint's is)
        with connection.cursor() as cursor:
            try:
                seq = hold_next(cursor.execute)
            except DatabaseError:
                cursor.execute("ROLLBACK")  # the script's own BEGIN, should it be open
                raise
        return ok({"held": seq}, status=201)


urlpatterns = [
    path("health", health, name="health"),  # the readiness probe, the service's own
    path("json/<version:version>/orders", FloorHoldView.as_view(), name="orders"),
]
