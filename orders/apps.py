from django.apps import AppConfig


class OrdersConfig(AppConfig):
    """Orders: create, retrieve, list, change, reshop, quote, payments, tickets, hold expiry."""

    name = "orders"
