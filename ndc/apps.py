from django.apps import AppConfig


class NdcConfig(AppConfig):
    """IATA NDC 21.3 XML messages mapped onto the same services as the JSON API."""

    name = "ndc"
