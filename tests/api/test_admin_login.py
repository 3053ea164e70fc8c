"""The back-office login is throttled by django-axes (issue 14 item 10): ten wrong
passwords for one user from one address lock that pair out for a while, and say so in
the log; the API's own authentication is untouched."""

from datetime import timedelta

import pytest
from axes.models import AccessAttempt
from django.contrib.auth import get_user_model
from django.test import Client

pytestmark = pytest.mark.django_db

LOGIN = "/admin/login/?next=/admin/"


@pytest.fixture
def staff(db):
    return get_user_model().objects.create_user(
        "ops", password="right-horse-battery", is_staff=True, is_superuser=True
    )


def login(client: Client, password: str, username: str = "ops", ip: str = "203.0.113.7"):
    return client.post(
        LOGIN, {"username": username, "password": password}, REMOTE_ADDR=ip, follow=False
    )


def test_ten_wrong_passwords_lock_that_user_at_that_address_and_are_logged(staff, caplog):
    client = Client()
    for _ in range(9):
        assert login(client, "wrong").status_code == 200  # the form again, with its error

    tenth = login(client, "wrong")
    assert AccessAttempt.objects.get(username="ops").failures_since_start == 10
    locked_out = login(client, "right-horse-battery")

    assert tenth.status_code == locked_out.status_code == 429
    assert any("locking out" in r.getMessage().lower() for r in caplog.records)
    # Another address, or another user from this one, is not locked.
    assert login(Client(), "right-horse-battery", ip="198.51.100.9").status_code == 302
    assert login(client, "wrong", username="someone-else").status_code == 200


def test_the_lock_lifts_after_the_cool_off(staff, settings):
    client = Client()
    for _ in range(10):
        login(client, "wrong")
    assert login(client, "right-horse-battery").status_code == 429
    AccessAttempt.objects.update(
        attempt_time=AccessAttempt.objects.get().attempt_time
        - settings.AXES_COOLOFF_TIME
        - timedelta(seconds=1)
    )

    assert login(client, "right-horse-battery").status_code == 302


def test_a_good_password_resets_the_count(staff):
    client = Client()
    for _ in range(9):
        login(client, "wrong")
    assert login(client, "right-horse-battery").status_code == 302

    assert not AccessAttempt.objects.filter(failures_since_start__gt=0).exists()


def test_thirty_usernames_from_one_address_lock_the_address_out(staff, settings, caplog):
    # Password spraying: one guess for each of many usernames never reaches the limit of
    # one username, but the address's own limit locks it out, for every username.
    limit = settings.ADMIN_LOGIN_ADDRESS_FAILURE_LIMIT
    assert limit < 30
    client = Client()
    answers = [login(client, "wrong", username=f"user{n}").status_code for n in range(30)]

    assert answers[: limit - 1] == [200] * (limit - 1)
    assert answers[limit - 1 :] == [429] * (30 - limit + 1)
    assert any("locking out" in r.getMessage().lower() for r in caplog.records)
    # The right password of a real user is refused from that address too, not elsewhere.
    assert login(client, "right-horse-battery").status_code == 429
    assert login(Client(), "right-horse-battery", ip="198.51.100.9").status_code == 302
    assert not AccessAttempt.objects.filter(ip_address="198.51.100.9").exists()


def test_failures_spread_over_addresses_lock_none_of_them(staff, settings):
    # The address limit counts one address: the same usernames from many addresses stay
    # under it (each username at each address is below the per-user limit too).
    for n in range(settings.ADMIN_LOGIN_ADDRESS_FAILURE_LIMIT + 5):
        ip = f"203.0.113.{n + 10}"
        assert login(Client(), "wrong", username=f"user{n}", ip=ip).status_code == 200

    assert login(Client(), "right-horse-battery", ip="203.0.113.10").status_code == 302
