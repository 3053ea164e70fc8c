"""JSON request parsing with orjson; malformed or hostile input becomes ERR-1005 (SPEC.md
§7) before any field code sees it."""

from typing import Any

import orjson
from rest_framework import parsers

from airline.api.errors import ApiError, Err

# No request of the API nests deeper than ~6 levels; 64 leaves room and keeps every
# later recursion (serializers, fingerprints, error paths) far from Python's limits.
MAX_DEPTH = 64
# No object of the API declares more than a few dozen properties (DESIGN.md §11 "Error
# detail size"): one with more is refused before its properties are read.
MAX_KEYS = 1000
# Nor any array more than a few dozen items; the same bound for the same reason.
MAX_ITEMS = 1000
# Every object and array costs ~1 µs to build and to judge, so a body of 1 MiB of `{},`
# cost 200 ms before any field was read: the body's `{` and `[` are counted in its raw
# text first (quoted ones too: a cheap upper bound) and more than this is refused
# unparsed. The largest request of the API holds a few hundred.
MAX_CONTAINERS = 2000


class JSONParser(parsers.JSONParser):
    """Subclasses DRF's parser on purpose: DRF then reads `request.body`, which enforces
    DATA_UPLOAD_MAX_MEMORY_SIZE, instead of streaming an unbounded body."""

    def parse(self, stream, media_type=None, parser_context=None):
        raw = stream.read()
        if not raw.strip():
            return {}
        if raw.count(b"{") + raw.count(b"[") > MAX_CONTAINERS:
            raise ApiError(
                Err.VALIDATION,
                f"The body holds more than {MAX_CONTAINERS:,} objects and arrays",
            )
        try:
            data = orjson.loads(raw)
        except orjson.JSONDecodeError as exc:
            raise ApiError(Err.VALIDATION, f"Malformed JSON body: {exc}") from None
        # orjson refuses a raw control character in a string, so a NUL can only arrive
        # written `\u0000`: without one in the text, no string needs looking at.
        check_storable(data, strings=b"\\u0000" in raw)
        return data


def check_storable(data: Any, *, strings: bool = True) -> None:
    """ERR-1005 for a document nested deeper than MAX_DEPTH, with an object of more than
    MAX_KEYS properties or an array of more than MAX_ITEMS items, or with a NUL
    character in a key or string (PostgreSQL cannot store one in text, and no field of
    ours takes one; `strings=False` when the caller knows there is none). One pass
    without recursion, linear in the document's size and over containers only: an
    object's size is judged before any of its properties is looked at (DESIGN.md §11
    "Error detail size": a body of 90,000 unknown properties cost 1.5 s of CPU to name
    each), and an array's items are sorted by type at C speed, so an array of
    numbers is not walked in Python (a MiB of them cost 25-30 ms that way). The path of
    the first offender is named, array positions left out (SPEC.md §7); paths are only
    spelt out for the error, never per value."""
    if type(data) is str and strings and "\x00" in data:
        raise _nul("")
    if type(data) is not dict and type(data) is not list:
        return
    # (container, depth, parent's stack entry or None, key under the parent)
    stack: list[tuple[Any, int, Any, str | None]] = [(data, 1, None, None)]
    while stack:
        entry = stack.pop()
        value, depth = entry[0], entry[1]
        if depth > MAX_DEPTH:
            raise _too_deep(_path_of(entry))
        if type(value) is dict:
            if len(value) > MAX_KEYS:
                raise _too_many_keys(_path_of(entry), len(value))
            for key, item in value.items():
                if strings and "\x00" in key:
                    raise _nul(_path_of(entry))
                kind = type(item)
                if kind is dict or kind is list:
                    stack.append((item, depth + 1, entry, key))
                elif kind is str and strings and "\x00" in item:
                    raise _nul(_path_of((item, depth + 1, entry, key)))
        else:  # a list
            if len(value) > MAX_ITEMS:
                raise _too_many_items(_path_of(entry), len(value))
            kinds = set(map(type, value))
            if dict in kinds or list in kinds:
                stack.extend(
                    (item, depth + 1, entry, None)
                    for item in value
                    if type(item) is dict or type(item) is list
                )
            if (
                strings
                and str in kinds
                and any("\x00" in item for item in value if type(item) is str)
            ):
                raise _nul(_path_of(entry))


def _path_of(entry: tuple[Any, int, Any, str | None]) -> str:
    """The dotted path of a stack entry: its keys up to the document, list items unnamed."""
    keys = []
    while entry is not None:
        if entry[3] is not None:
            keys.append(entry[3])
        entry = entry[2]
    return ".".join(reversed(keys))


def _too_many_keys(path: str, count: int) -> ApiError:
    return ApiError(
        Err.VALIDATION,
        f"An object may have at most {MAX_KEYS:,} properties; this one has {count:,}",
        path=path or None,
    )


def _too_many_items(path: str, count: int) -> ApiError:
    return ApiError(
        Err.VALIDATION,
        f"An array may have at most {MAX_ITEMS:,} items; this one has {count:,}",
        path=path or None,
    )


def _too_deep(path: str) -> ApiError:
    return ApiError(
        Err.VALIDATION, f"The body nests deeper than {MAX_DEPTH} levels", path=path or None
    )


def _nul(path: str) -> ApiError:
    return ApiError(Err.VALIDATION, "Text may not contain the NUL character", path=path or None)
