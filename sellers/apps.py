from django.apps import AppConfig


class SellersConfig(AppConfig):
    """Partners, sellers, API keys, tokens, permissions and request-volume limits."""

    name = "sellers"
