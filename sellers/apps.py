from django.apps import AppConfig


class SellersConfig(AppConfig):
    """Partners, sellers, API keys, tokens, permissions and request-volume limits."""

    name = "sellers"

    def ready(self) -> None:
        from sellers import openapi  # noqa: F401  (registers the OpenAPI auth extensions)
