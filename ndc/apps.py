from django.apps import AppConfig


class NdcConfig(AppConfig):
    """IATA NDC 21.3 XML messages mapped onto the same services as the JSON API."""

    name = "ndc"

    def ready(self) -> None:
        # The layers below never import NDC (architecture.md "Layers"): it registers
        # what they render in NDC with them.
        from airline.api import metrics, responses
        from ndc.endpoints import ENDPOINTS
        from ndc.errors import error_document
        from ndc.notifications import webhook_body
        from webhooks.delivery import body_format_register
        from webhooks.models import WebhookEndpoint

        # Every error under /ndc/, whoever raised it, as the message's RS document.
        responses.error_renderer_register(
            responses.NDC_PREFIX, error_document, content_type=responses.XML_CONTENT_TYPE
        )

        # One URL pattern answers every NDC message: counted by the message's endpoint.
        def route_label(match) -> str:
            endpoint = match.kwargs.get("endpoint")
            return f"{match.route}:{endpoint if endpoint in ENDPOINTS else 'unknown'}"

        metrics.route_label_register("ndc", route_label)
        # Webhook endpoints of the NDC format receive IATA_OrderChangeNotifRQ.
        body_format_register(WebhookEndpoint.Format.NDC, webhook_body)
