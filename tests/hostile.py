"""A bounded set of hostile JSON bodies (issue 28 item 1): the shapes that cost a worker
the most per byte, each as large as the 1 MiB limit lets it be. Used by the HTTP tests
of the error caps (tests/api/test_error_size.py) and by `make fuzz`, which measures the
worker CPU each costs (tests/e2e/test_hostile_bodies.py)."""

import json
from collections.abc import Callable, Iterator

LIMIT = 1024 * 1024 - 512  # below DATA_UPLOAD_MAX_MEMORY_SIZE: parsed, not refused for size

OD = {"origin": "PVD", "destination": "CHS", "departureDate": "2027-01-04"}


def _keys(count: int, prefix: str = "k") -> dict[str, int]:
    return {f"{prefix}{i:06d}": 1 for i in range(count)}


def _largest(make: Callable[[int], str], step: int) -> bytes:
    """make(n) for the largest n (a multiple of `step`) that stays under LIMIT: grown
    from one measured size, not searched, so that building the set costs little."""
    one = len(make(step))
    n = max(step, (LIMIT // one) * step)
    while len(make(n)) > LIMIT:
        n -= step
    return make(n).encode()


def hostile_bodies() -> Iterator[tuple[str, bytes]]:
    """(name, raw body) of every hostile body of the set."""
    # The probe's own: one object of ~80,000 unknown properties, at the top and inside
    # one originDestination.
    yield "keys-top", _largest(lambda n: json.dumps(_keys(n)), 1000)
    yield (
        "keys-nested",
        _largest(
            lambda n: json.dumps(
                {"originDestinations": [{**OD, **_keys(n)}], "passengers": [{"type": "ADT"}]}
            ),
            1000,
        ),
    )
    # Just under the object limit, as many times as fit: unknown properties everywhere.
    yield (
        "keys-999-many",
        _largest(
            lambda n: json.dumps(
                {
                    "originDestinations": [OD],
                    "passengers": [_keys(999, f"p{j}_") for j in range(n)],
                }
            ),
            1,
        ),
    )
    yield "keys-999-top", json.dumps(_keys(999)).encode()
    # Many small objects and arrays.
    yield "empty-objects", _largest(lambda n: json.dumps({"passengers": [{}] * n}), 1000)
    yield (
        "small-objects",
        _largest(lambda n: json.dumps({"passengers": [{"type": "ADT", "x": 1}] * n}), 1000),
    )
    # Arrays as long as allowed, of scalars, as many as fit.
    yield "long-arrays", _largest(lambda n: json.dumps({"passengers": [[1] * 999] * n}), 1)
    yield "one-long-array", _largest(lambda n: json.dumps({"passengers": [1] * n}), 1000)
    yield (
        "bad-passengers-999",
        json.dumps({"originDestinations": [OD], "passengers": [{"type": "XXX"}] * 999}).encode(),
    )
    # Long strings, NUL characters, deep nesting.
    yield "long-string", _largest(lambda n: json.dumps({"remarks": "x" * n}), 1000)
    yield "nul-strings", _largest(lambda n: json.dumps({"passengers": ["\x00"] * n}), 1000)
    yield "deep", ("[" * 64 + "]" * 64).encode()
    yield "too-deep", ("[" * 5000 + "]" * 5000).encode()


MSG = "http://www.iata.org/IATA/2015/EASD/00/IATA_OffersAndOrdersMessage"


def _xml(root: str, inner: Callable[[int], str]) -> Callable[[int], str]:
    return lambda n: f'<?xml version="1.0"?><{root} xmlns="{MSG}">{inner(n)}</{root}>'


def hostile_documents(root: str) -> Iterator[tuple[str, bytes]]:
    """(name, raw body) of every hostile NDC document of the set, rooted at `root`."""
    yield "xml-elements", _largest(_xml(root, lambda n: "<X/>" * n), 1000)
    yield "xml-unknown-5k", _xml(root, lambda n: "<Unknown/>" * n)(4_990).encode()
    yield (
        "xml-attributes",
        _largest(
            _xml(root, lambda n: "<X " + " ".join(f"a{i}='1'" for i in range(n)) + "/>"), 1000
        ),
    )
    yield "xml-text", _largest(_xml(root, lambda n: "x" * n), 1000)
    yield "xml-deep", _xml(root, lambda n: "<X>" * n + "</X>" * n)(63).encode()
    yield "xml-too-deep", _xml(root, lambda n: "<X>" * n + "</X>" * n)(5000).encode()
    yield (
        "xml-namespaces",
        _largest(
            _xml(root, lambda n: "".join(f"<p{i}:X xmlns:p{i}='u{i}'/>" for i in range(n))), 100
        ),
    )
