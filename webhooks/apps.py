from django.apps import AppConfig


class WebhooksConfig(AppConfig):
    name = "webhooks"
    verbose_name = "Webhooks"

    def ready(self) -> None:
        from airline.worker import job_register
        from orders.core.events import (
            announcement_read_register,
            order_event_recorded,
            order_events_recorded,
        )
        from orders.reading.deliveries import deliveries_reader_register
        from webhooks import metrics
        from webhooks.outbox import endpoints_read, order_event_listen, order_events_listen
        from webhooks.selectors import order_deliveries

        # Every order event writes its outbox rows in the change's transaction.
        order_event_recorded.connect(order_event_listen, dispatch_uid="webhooks.outbox")
        order_events_recorded.connect(order_events_listen, dispatch_uid="webhooks.outbox-batch")
        # The seller's endpoints, read by a booking with its rows (one round trip less).
        announcement_read_register(endpoints_read)
        metrics.connect()
        job_register(delivery_job)
        # The booking page (orders' back office) lists the deliveries of its events.
        deliveries_reader_register(order_deliveries)


def delivery_job():
    from django.conf import settings

    from airline.worker import Job
    from webhooks.delivery import webhooks_deliver_due

    # The webhook outbox: due deliveries claimed, sent and recorded (webhooks.delivery),
    # round after round for up to a few seconds while there are any.
    return Job(
        "deliver_webhooks",
        settings.WORKER_WEBHOOK_SECONDS,
        webhooks_deliver_due,
        again_while_busy=True,
    )
