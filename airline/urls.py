"""Routes. One JSON route list mounted under every version prefix (SPEC.md §9)."""

from django.contrib import admin
from django.urls import include, path, re_path, register_converter
from django.views.generic import TemplateView
from drf_spectacular.views import (
    SpectacularAPIView,
    SpectacularRedocView,
    SpectacularSwaggerSplitView,
)
from rest_framework.negotiation import DefaultContentNegotiation

from airline.api.metrics import metrics_view
from airline.api.versioning import VersionConverter
from airline.api.views import health, unknown_route
from ndc.views import NdcView
from offers import urls as offers_urls
from orders import urls as orders_urls
from orders.views import stripe_webhook
from sellers import urls as sellers_urls
from webhooks import urls as webhooks_urls

register_converter(VersionConverter, "version")

docs_urlpatterns = [
    # The description itself is not enveloped: it is a document, not an API answer.
    path(
        "schema",
        SpectacularAPIView.as_view(content_negotiation_class=DefaultContentNegotiation),
        name="schema",
    ),
    # Its set-up script from `?script` rather than inline: the page's Content-Security-
    # Policy runs no inline script (airline/api/middleware.py).
    path(
        "schema/swagger-ui",
        SpectacularSwaggerSplitView.as_view(url_name="schema"),
        name="swagger-ui",
    ),
    path("schema/redoc", SpectacularRedocView.as_view(url_name="schema"), name="redoc"),
]

json_urlpatterns = [
    *sellers_urls.json_urlpatterns,
    *offers_urls.urlpatterns,
    *orders_urls.urlpatterns,
    *webhooks_urls.urlpatterns,
    *docs_urlpatterns,
]

urlpatterns = [
    path("health", health, name="health"),
    path("metrics", metrics_view, name="metrics"),  # 404 unless METRICS_ENABLED
    path("auth/", include(sellers_urls.auth_urlpatterns)),
    path("json/<version:version>/", include(json_urlpatterns)),
    path("ndc/<version:version>/<str:endpoint>", NdcView.as_view(), name="ndc"),
    # The payment provider's webhooks: unversioned, the provider's contract, not ours.
    path("payments/stripe/webhook", stripe_webhook, name="stripe-webhook"),
    # Anything else under the API prefixes still answers in the API's shape.
    re_path(r"^(?:json|auth|ndc)/(?P<rest>.*)$", unknown_route),
    path("admin/", admin.site.urls),
    path("", TemplateView.as_view(template_name="landing.html"), name="landing"),
]

handler400 = "airline.api.views.bad_request"
handler404 = "airline.api.responses.not_found"
handler500 = "airline.api.views.server_error"
