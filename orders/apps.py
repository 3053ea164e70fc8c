from django.apps import AppConfig


class OrdersConfig(AppConfig):
    """Orders: create, retrieve, list, change, reshop, quote, payments, tickets, hold expiry."""

    name = "orders"

    def ready(self) -> None:
        # Servicing modules add their change-order actions and reshop instructions to the
        # tables of orders.changes and orders.reshop as they load.
        from offers.ancillaries import seats_reader_register
        from orders import airline_changes, amend, cancel, exchange, metrics  # noqa: F401
        from orders.selectors import seats_held

        metrics.connect()
        # Seat maps (offers) show the seats orders hold.
        seats_reader_register(seats_held)
