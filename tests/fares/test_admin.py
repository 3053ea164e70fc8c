"""Fares back office: bundles and fares are both editable data."""

from decimal import Decimal

import pytest
from django.contrib.auth import get_user_model

from airline.fares.models import Bundle, Fare
from tests.fares.factories import FareFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def staff(client):
    client.force_login(
        get_user_model().objects.create_user("revenue", is_staff=True, is_superuser=True)
    )
    return client


@pytest.mark.parametrize("model", ["bundle", "fare"])
def test_every_fares_list_renders(staff, model):
    FareFactory()

    assert staff.get(f"/admin/fares/{model}/").status_code == 200


def test_fares_can_be_searched_and_filtered(staff):
    other = FareFactory(origin="PVD", destination="CHS", rbd="L")
    wanted = FareFactory(origin="TPA", destination="ORF", rbd="K")

    page = staff.get("/admin/fares/fare/", {"q": "TPA", "rbd__exact": "K"})

    assert page.status_code == 200
    # What the search and the filter keep, whatever other fares the database holds.
    found = list(page.context["cl"].queryset)
    assert wanted in found
    assert other not in found
    assert all(f.rbd == "K" and "TPA" in (f.origin, f.destination) for f in found), found


def test_a_bundle_change_form_renders_and_saves(staff):
    nice = Bundle.objects.get(code="NICE")
    page = staff.get(f"/admin/fares/bundle/{nice.pk}/change/")
    assert page.status_code == 200

    form = page.context["adminform"].form
    data = {name: form[name].value() for name in form.fields}
    data = {key: value for key, value in data.items() if value is not None}
    data.update(supplement="35.00")
    for flag in ("carry_on_included", "changeable"):
        if not data.get(flag):
            data.pop(flag, None)
    response = staff.post(f"/admin/fares/bundle/{nice.pk}/change/", data)

    assert response.status_code == 302, response.context["adminform"].form.errors
    nice.refresh_from_db()
    assert nice.supplement == Decimal("35.00")
    assert nice.penalties[0]["typeCode"] == "Change"


def test_a_fare_amount_is_edited_from_the_list(staff):
    fare = FareFactory()
    data = {
        "form-TOTAL_FORMS": "1",
        "form-INITIAL_FORMS": "1",
        "form-MIN_NUM_FORMS": "0",
        "form-MAX_NUM_FORMS": "1000",
        "form-0-id": str(fare.pk),
        "form-0-base_amount": "123.45",
        "_save": "Save",
    }

    response = staff.post("/admin/fares/fare/", data)

    assert response.status_code == 302
    assert Fare.objects.get(pk=fare.pk).base_amount == Decimal("123.45")
