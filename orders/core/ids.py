"""Identifiers of orders and their parts (DESIGN.md §8).

Order ids are long and random (unguessable); record locators are short and random from
an alphabet without look-alike characters, unique by database constraint. Child ids
(PAX-, OOI-, CTC-...) are stored with their rows, so they never change between reads.
"""

import secrets

from django.conf import settings

LOCATOR_ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"  # no I, O, 0, 1
assert len(LOCATOR_ALPHABET) == 32  # _random_text picks a letter with five bits
LOCATOR_LENGTH = 6
ORDER_ID_LENGTH = 20  # 100 bits


def new_order_id() -> str:
    return _random_text(ORDER_ID_LENGTH)


def new_record_locator() -> str:
    return _random_text(LOCATOR_LENGTH)


def _random_text(length: int) -> str:
    """`length` characters of LOCATOR_ALPHABET, each as likely as secrets.choice would
    make it: 32 letters, so the low five bits of a random byte pick one without bias.
    One read of the system's randomness for the whole id, not one a character."""
    return "".join(LOCATOR_ALPHABET[b & 31] for b in secrets.token_bytes(length))


def new_ref(prefix: str) -> str:
    """A child id such as `PAX-3F9A1C2B`, unique within its order."""
    return f"{prefix}-{secrets.token_hex(4).upper()}"


def ticket_number(serial: int) -> str:
    """13 digits: the airline's accounting code and a ten-digit serial (DESIGN.md §8)."""
    return f"{settings.AIRLINE_ACCOUNTING_CODE}{serial:010d}"
