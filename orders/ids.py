"""Identifiers of orders and their parts (DESIGN.md §8).

Order ids are long and random (unguessable); record locators are short and random from
an alphabet without look-alike characters, unique by database constraint. Child ids
(PAX-, OOI-, CTC-...) are stored with their rows, so they never change between reads.
"""

import secrets

from django.conf import settings

LOCATOR_ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"  # no I, O, 0, 1
LOCATOR_LENGTH = 6
ORDER_ID_LENGTH = 20  # 100 bits


def new_order_id() -> str:
    return "".join(secrets.choice(LOCATOR_ALPHABET) for _ in range(ORDER_ID_LENGTH))


def new_record_locator() -> str:
    return "".join(secrets.choice(LOCATOR_ALPHABET) for _ in range(LOCATOR_LENGTH))


def new_ref(prefix: str) -> str:
    """A child id such as `PAX-3F9A1C2B`, unique within its order."""
    return f"{prefix}-{secrets.token_hex(4).upper()}"


def ticket_number(serial: int) -> str:
    """13 digits: the airline's accounting code and a ten-digit serial (DESIGN.md §8)."""
    return f"{settings.AIRLINE_ACCOUNTING_CODE}{serial:010d}"


def looks_like_locator(ref: str) -> bool:
    return len(ref) == LOCATOR_LENGTH
