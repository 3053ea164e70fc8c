"""A card number and security code used in a booking are in neither the database nor
any log line (DESIGN.md §8, §10)."""

import logging
from io import StringIO

import pytest
from django.core.management import call_command

from airline.api.models import IdempotencyRecord
from tests.orders.conftest import CARD, book, booking_body

pytestmark = pytest.mark.django_db

NUMBER, CVV = "5555555555554444", "9183"


def test_card_number_and_cvv_are_never_stored_or_logged(api, auth, priced, caplog, capsys):
    caplog.set_level(logging.DEBUG)
    card = {**CARD, "cardType": "CA", "cardNumber": NUMBER, "securityCode": CVV[:3]}
    assert (
        book(api, auth, booking_body(priced, payment=card), HTTP_IDEMPOTENCY_KEY="k").status_code
        == 201
    )
    # The refused ones too: a declined card and a malformed one.
    book(
        api,
        auth,
        booking_body(priced, payment={**card, "cardNumber": "4000000000000002", "cardType": "VI"}),
    )
    book(api, auth, booking_body(priced, payment={**card, "securityCode": CVV}))

    dump = StringIO()
    call_command("dumpdata", stdout=dump)
    stored = dump.getvalue() + "".join(
        bytes(r.body or b"").decode() for r in IdempotencyRecord.objects.all()
    )
    logged = caplog.text + "".join(str(vars(r)) for r in caplog.records) + capsys.readouterr().err

    assert "XXXXXXXXXXXX4444" in stored  # the masked form is what is kept
    # Security codes are short enough to turn up inside random ids, so they are looked
    # for as the JSON strings a leak would write, and by their field name.
    for secret in (NUMBER, "4000000000000002", f'"{CVV}"', f'"{CVV[:3]}"', "securityCode"):
        assert secret not in stored
        assert secret not in logged
