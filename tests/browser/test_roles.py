"""Each staff role signs in and sees its part of the back office, in Chromium."""

import pytest

from tests.browser.conftest import staff_member

pytestmark = pytest.mark.django_db(transaction=True, serialized_rollback=True)

# What each role's index page lists (model names as the admin shows them), and what it
# must not.
ROLES = {
    "Partner management": (["API keys", "Partners", "Sellers"], ["Orders", "Flight legs"]),
    "Operations": (
        ["Orders", "Schedule loads", "Flight legs", "Seat configurations"],
        ["API keys"],
    ),
    "Support": (["Orders", "API keys", "Flight legs"], []),
}


@pytest.mark.parametrize("role", list(ROLES))
def test_each_role_signs_in_and_sees_its_part(browser, role):
    staff_member(role)
    shown, hidden = ROLES[role]

    browser.sign_in(role.lower().replace(" ", "-"))

    models = {a.text for a in browser.find_all("#content-main th[scope=row] a")}
    assert set(shown) <= models, models
    assert not set(hidden) & models, models
    if role == "Support":
        assert browser.find_all("#content-main a.addlink") == []  # reads, changes nothing
    browser.sign_out()
    assert "Logged out" in browser.html
