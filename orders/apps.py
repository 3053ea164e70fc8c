from django.apps import AppConfig


class OrdersConfig(AppConfig):
    """Orders: create, retrieve, list, change, reshop, quote, payments, tickets, hold expiry."""

    name = "orders"

    def ready(self) -> None:
        # Servicing modules add their change-order actions and reshop instructions to the
        # tables of orders.changes and orders.reshop as they load.
        from orders import airline_changes, amend, cancel, exchange  # noqa: F401
