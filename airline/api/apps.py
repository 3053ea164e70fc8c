from django.apps import AppConfig


class ApiConfig(AppConfig):
    """The HTTP kernel shared by every app: envelope, errors, versions, request ids."""

    name = "airline.api"
    label = "api"

    def ready(self) -> None:
        from airline.api import metrics

        metrics.connect()
