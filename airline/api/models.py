"""Kernel tables: the Idempotency-Key records of DESIGN.md §4."""

from django.db import models


class IdempotencyRecord(models.Model):
    """The first request made with an Idempotency-Key, and once it succeeded, its
    response, replayed to repeats of the same request for 24 hours.

    `fingerprint` is a keyed hash (HMAC) of the method, path and body: the body of a card
    payment holds the card number, and a plain hash of it could be brute-forced."""

    class State(models.TextChoices):
        RUNNING = "running"
        # The request opened a card payment whose outcome it may not learn (the gateway
        # timed out, the database or the worker went away): the payment reconciler
        # decides it and finishes the record (APPLIED or FAILED); no retry runs it again.
        SETTLING = "settling"
        # The request's change committed (in the change's own transaction) and its
        # answer is not recorded yet: a retry renders it anew, never runs it again.
        APPLIED = "applied"
        DONE = "done"
        # Settled as not done by the reconciler: `body` is the error (code, description,
        # reason), rendered in the channel of each retry.
        FAILED = "failed"

    scope = models.CharField(
        max_length=64, help_text="The API key prefix and the seller it acted for"
    )
    key = models.CharField(max_length=255)
    fingerprint = models.CharField(max_length=64)
    state = models.CharField(max_length=8, choices=State.choices)
    # The order the request made or changed, once that committed (APPLIED): what a
    # retry's answer is rendered from.
    resource = models.CharField(max_length=64, blank=True, default="")
    status_code = models.PositiveSmallIntegerField(null=True, blank=True)
    body = models.BinaryField(null=True, blank=True)
    created_at = models.DateTimeField()
    updated_at = models.DateTimeField()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["scope", "key"], name="one_record_per_idempotency_key")
        ]
        indexes = [models.Index(fields=["created_at"], name="idempotency_by_age")]

    def __str__(self) -> str:
        return f"{self.scope} {self.key} {self.state}"
