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
