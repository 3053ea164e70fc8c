"""JSON request parsing with orjson; malformed or hostile input becomes ERR-1005 (SPEC.md
§7) before any field code sees it."""

from typing import Any

import orjson
from rest_framework import parsers

from airline.api.errors import ApiError, Err

# No request of the API nests deeper than ~6 levels; 64 leaves room and keeps every
# later recursion (serializers, fingerprints, error paths) far from Python's limits.
MAX_DEPTH = 64


class JSONParser(parsers.JSONParser):
    """Subclasses DRF's parser on purpose: DRF then reads `request.body`, which enforces
    DATA_UPLOAD_MAX_MEMORY_SIZE, instead of streaming an unbounded body."""

    def parse(self, stream, media_type=None, parser_context=None):
        raw = stream.read()
        if not raw.strip():
            return {}
        try:
            data = orjson.loads(raw)
        except orjson.JSONDecodeError as exc:
            raise ApiError(Err.VALIDATION, f"Malformed JSON body: {exc}") from None
        check_storable(data)
        return data


def check_storable(data: Any) -> None:
    """ERR-1005 for a document nested deeper than MAX_DEPTH, or with a NUL character in a
    key or string (PostgreSQL cannot store one in text, and no field of ours takes one).
    One pass without recursion, linear in the document's size: the path of the first
    offender is named, array positions left out (SPEC.md §7)."""
    stack: list[tuple[Any, int, str]] = [(data, 1, "")]
    while stack:
        value, depth, path = stack.pop()
        if isinstance(value, dict):
            if depth > MAX_DEPTH:
                raise _too_deep(path)
            for key, item in value.items():
                child = f"{path}.{key}" if path else key
                if "\x00" in key:
                    raise _nul(path)
                stack.append((item, depth + 1, child))
        elif isinstance(value, list):
            if depth > MAX_DEPTH:
                raise _too_deep(path)
            stack.extend((item, depth + 1, path) for item in value)
        elif isinstance(value, str) and "\x00" in value:
            raise _nul(path)


def _too_deep(path: str) -> ApiError:
    return ApiError(
        Err.VALIDATION, f"The body nests deeper than {MAX_DEPTH} levels", path=path or None
    )


def _nul(path: str) -> ApiError:
    return ApiError(Err.VALIDATION, "Text may not contain the NUL character", path=path or None)
