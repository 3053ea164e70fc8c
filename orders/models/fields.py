"""Fields of the order models."""

import json

import orjson
from django.db import models


def _dumps(value) -> bytes:
    """A document as json.dumps writes it (keys that are not strings written as strings),
    at C speed; spacing aside, which jsonb does not keep."""
    return orjson.dumps(value, option=orjson.OPT_NON_STR_KEYS)


class JSONField(models.JSONField):
    """The order models' JSONField.

    Bulk inserted as one parameter per row: Django's UNNEST bulk insert on PostgreSQL
    would send the column as a jsonb[] array literal, which psycopg builds by escaping
    every quote of every document through a regular expression: ~1.5 ms of CPU for an
    order's two items and their fare wire. UNNEST pays off for hundreds of rows; an order
    writes a handful.

    Written and read with orjson rather than the json module: a booking writes about
    fifteen documents (prices, fares, passengers, its event) and reads each back, and
    the json module's encoder and decoder objects cost several times orjson's work on
    documents this small. Without an encoder or decoder of its own only (orjson knows
    no JSONEncoder subclass). The same documents either way: what json.dumps refuses (a
    Decimal) orjson refuses too, and an integer past 64 bits, which orjson would read
    back as a float, it refuses to write (no booking document holds one, nor a float
    that large, which jsonb would keep as such an integer: amounts are decimal numbers,
    counts small)."""

    def get_placeholder(self, value, compiler, connection) -> str:
        return "%s"  # any field with a placeholder makes the insert plain VALUES rows

    def get_db_prep_value(self, value, connection, prepared=False):
        adapted = super().get_db_prep_value(value, connection, prepared)
        # PostgreSQL's adapter (psycopg's Jsonb) takes its dumps function; other
        # databases get text already written by json.dumps.
        if self.encoder is None and getattr(adapted, "dumps", None) is json.dumps:
            adapted.dumps = _dumps
        return adapted

    def from_db_value(self, value, expression, connection):
        if self.decoder is None and isinstance(value, str):
            try:
                return orjson.loads(value)
            except orjson.JSONDecodeError:
                pass  # what orjson refuses (an integer past 64 bits) the json module reads
        return super().from_db_value(value, expression, connection)

    def deconstruct(self):
        # The column is an ordinary jsonb: migrations know it as a plain JSONField.
        name, _path, args, kwargs = super().deconstruct()
        return name, "django.db.models.JSONField", args, kwargs
