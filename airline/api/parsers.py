"""JSON request parsing with orjson; malformed input becomes ERR-1005 (SPEC.md §7)."""

import orjson
from rest_framework import parsers
from rest_framework.exceptions import ParseError


class JSONParser(parsers.JSONParser):
    """Subclasses DRF's parser on purpose: DRF then reads `request.body`, which enforces
    DATA_UPLOAD_MAX_MEMORY_SIZE, instead of streaming an unbounded body."""

    def parse(self, stream, media_type=None, parser_context=None):
        raw = stream.read()
        if not raw.strip():
            return {}
        try:
            return orjson.loads(raw)
        except orjson.JSONDecodeError as exc:
            raise ParseError(f"Malformed JSON body: {exc}") from None
