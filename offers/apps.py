from django.apps import AppConfig


class OffersConfig(AppConfig):
    """Shopping, the offer store, offer pricing, offer seat maps and services."""

    name = "offers"
