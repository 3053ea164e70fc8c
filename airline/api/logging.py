"""One JSON object per log line, so logs can be searched by request id, seller or route."""

import logging
from datetime import UTC, datetime

import orjson


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        line = {
            "ts": _timestamp(record.created),
            "level": record.levelname,
            "logger": record.name,
            "msg": record.getMessage(),
        }
        line.update(getattr(record, "fields", {}))
        if record.exc_info:
            line["exc"] = self.formatException(record.exc_info)
        return orjson.dumps(line, default=str).decode()


_second: list = [None, ""]  # the last whole second formatted, and its text


def _timestamp(created: float) -> str:
    """`created` as ISO 8601 UTC to the millisecond (2026-05-01T12:00:00.123+00:00):
    the text of the second is made once per second, not once per line."""
    second = int(created)
    micro = round((created - second) * 1_000_000)  # as datetime.fromtimestamp rounds
    if micro >= 1_000_000:
        second, micro = second + 1, micro - 1_000_000
    if _second[0] != second:
        _second[:] = [second, datetime.fromtimestamp(second, tz=UTC).strftime("%Y-%m-%dT%H:%M:%S")]
    return f"{_second[1]}.{micro // 1000:03d}+00:00"
