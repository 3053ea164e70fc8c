from django.apps import AppConfig


class OrdersConfig(AppConfig):
    """Orders: create, retrieve, list, change, reshop, quote, payments, tickets, hold expiry."""

    name = "orders"

    def ready(self) -> None:
        # The layers below never import orders (architecture.md "Layers"): what they must
        # know of bookings, orders register with them here.
        from airline.network.readers import readers_register
        from airline.worker import job_register
        from offers.seating import seats_statement_register
        from orders.reading import leg_bookings, metrics
        from orders.reading.selectors import seats_held_statement
        from orders.servicing.airline_changes import holders_register

        metrics.connect()
        # The network asks which bookings hold a leg or a seat before it changes them.
        holders_register()
        # Seat maps (offers) show the seats orders hold; the network's back office, who
        # is booked on its legs, which bookings a schedule load touches and the seats on
        # hold and ticketed in its flight-date list.
        seats_statement_register(seats_held_statement)
        readers_register(
            bookings=leg_bookings.bookings_on_legs,
            travellers=leg_bookings.travellers_on_leg,
            seat_rows=leg_bookings.seat_rows,
        )
        for job in (hold_expiry_job, payment_reconcile_job, refund_send_job, books_audit_job):
            job_register(job)


# The worker's jobs of orders (airline/worker.py), built when the worker starts.


def hold_expiry_job():
    from django.conf import settings

    from airline.worker import Job
    from orders.booking.holds import holds_expire

    # A lapsed hold's seats are back on sale within one sweep, whether or not anyone
    # reads the order (reads show it expired and write nothing; a change expires it).
    return Job(
        "expire_holds",
        settings.WORKER_HOLD_SWEEP_SECONDS,
        lambda: {"holds_cancelled": holds_expire()},
    )


def payment_reconcile_job():
    from django.conf import settings

    from airline.worker import Job
    from orders.booking.reconcile import payments_reconcile

    return Job("reconcile_payments", settings.WORKER_RECONCILE_SECONDS, payments_reconcile)


def refund_send_job():
    from django.conf import settings

    from airline.worker import Job
    from orders.money.refunds import refunds_retry

    # Refunds a change owed and a dead worker did not send (orders.money.refunds).
    return Job(
        "send_refunds",
        settings.WORKER_RECONCILE_SECONDS,
        lambda: {"refunds_sent": refunds_retry()},
    )


def books_audit_job():
    from django.conf import settings

    from airline.worker import Job
    from orders.money.audit import books_audit_nightly

    # Looked at as often as the reconciler, run once a day (orders.money.audit): a worker
    # restarted, run by cron with --once, or on several hosts audits no more often.
    return Job("audit_books", settings.WORKER_RECONCILE_SECONDS, books_audit_nightly)
