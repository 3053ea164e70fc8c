"""The real routes plus probe views that exercise kernel pieces the real endpoints of this
stage do not reach yet (full-transaction and agency permissions, a nested body, a crash),
and one whose answer can be watched being freed."""

import weakref

from django.urls import include, path
from rest_framework import serializers
from rest_framework.views import APIView

from airline.api.responses import ok
from airline.urls import urlpatterns as real_urlpatterns
from sellers.permissions import CanBook, HasAgencyCode


class BookProbe(APIView):
    permission_classes = [CanBook]

    def post(self, request, version):
        return ok({"booked": True}, status=201)


class AgencyProbe(APIView):
    permission_classes = [HasAgencyCode]

    def get(self, request, version):
        return ok({"agencyCode": request.user.key.agency_code})


class Passenger(serializers.Serializer):
    type = serializers.ChoiceField(choices=["ADT", "CHD", "INF"])
    paxId = serializers.CharField(required=False, min_length=1)


class SearchBody(serializers.Serializer):
    passengers = Passenger(many=True, allow_empty=False)
    currency = serializers.CharField(required=False)


class ValidationProbe(APIView):
    def post(self, request, version):
        SearchBody(data=request.data).is_valid(raise_exception=True)
        return ok({"valid": True})


class Payload(dict):
    """A dict a weak reference can watch (a plain dict cannot be)."""


class PayloadProbe(APIView):
    sent: list[weakref.ref] = []  # what it answered with, watched

    def get(self, request, version):
        payload = Payload(rows=[{"n": n} for n in range(3)])
        PayloadProbe.sent.append(weakref.ref(payload))
        return ok(payload)


class CrashProbe(APIView):
    def get(self, request, version):
        raise RuntimeError("something broke")

    def post(self, request, version):
        # An error message that echoes what the client sent, card and all: what an error
        # report must not pass on (tests/e2e/test_telemetry.py).
        raise RuntimeError(f"could not use {request.data}")


probe_patterns = [
    path("probe/book", BookProbe.as_view()),
    path("probe/agency", AgencyProbe.as_view()),
    path("probe/validate", ValidationProbe.as_view()),
    path("probe/crash", CrashProbe.as_view()),
    path("probe/payload", PayloadProbe.as_view()),
]

urlpatterns = [path("json/<version:version>/", include(probe_patterns)), *real_urlpatterns]
