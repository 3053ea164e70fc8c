"""Ancillary products in the back office: data that revenue management edits (DESIGN.md
§7), loaded with the defaults of migration fares 0004."""

from decimal import Decimal

import pytest

from airline.fares.models import Ancillary

pytestmark = pytest.mark.django_db

CHANGELIST = "/admin/fares/ancillary/"


def form_data(page, **changes):
    """The change form's current values with `changes`, as the browser would post them."""
    form = page.context["adminform"].form
    data = {name: form[name].value() for name in form.fields}
    data = {key: value for key, value in data.items() if value is not None}
    data.update(changes)
    for flag in ("taxable", "is_active"):
        if not data.get(flag):
            data.pop(flag, None)  # an unticked checkbox is not posted
    return data


def test_the_list_shows_every_product(admin_client):
    page = admin_client.get(CHANGELIST)

    assert page.status_code == 200
    assert page.context["cl"].result_count == Ancillary.objects.count() == 10
    text = page.content.decode()
    for code in ("CB1", "CB2", "CB3", "COB", "PETC", "PRIO", "STST", "STXL", "STEX", "STPR"):
        assert code in text, code


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ({"category__exact": "BAGGAGE"}, {"CB1", "CB2", "CB3", "COB"}),
        ({"scope__exact": "segment"}, {"PRIO"}),
        ({"taxable__exact": "1", "category__exact": "SEAT"}, {"STST", "STXL", "STEX", "STPR"}),
        ({"q": "xbag"}, {"CB1", "CB2", "CB3"}),
    ],
)
def test_filters_and_search(admin_client, query, expected):
    page = admin_client.get(CHANGELIST, query)

    assert page.status_code == 200
    assert {a.code for a in page.context["cl"].result_list} == expected


def test_a_price_is_edited_and_saved(admin_client):
    cb1 = Ancillary.objects.get(code="CB1")
    url = f"{CHANGELIST}{cb1.pk}/change/"
    page = admin_client.get(url)
    assert page.status_code == 200

    response = admin_client.post(url, form_data(page, price="39.50"))

    assert response.status_code == 302, response.context["adminform"].form.errors
    cb1.refresh_from_db()
    assert cb1.price == Decimal("39.50")
    assert (cb1.category, cb1.scope, cb1.pieces, cb1.is_active) == ("BAGGAGE", "journey", 1, True)
    assert Ancillary.objects.get(code="CB2").requires == cb1


def test_a_price_is_edited_from_the_list(admin_client):
    products = list(Ancillary.objects.order_by("rank", "code"))
    data = {
        "form-TOTAL_FORMS": str(len(products)),
        "form-INITIAL_FORMS": str(len(products)),
        "_save": "Save",
    }
    for n, product in enumerate(products):
        data[f"form-{n}-id"] = str(product.pk)
        data[f"form-{n}-price"] = "17.00" if product.code == "PRIO" else str(product.price)

    response = admin_client.post(CHANGELIST, data)

    assert response.status_code == 302
    assert Ancillary.objects.get(code="PRIO").price == Decimal("17.00")
    assert Ancillary.objects.get(code="CB1").price == Decimal("35.00")


@pytest.mark.parametrize(
    ("code", "changes"),
    [("PRIO", {"price": "-1.00"}), ("STST", {"seat_zone": ""})],
)
def test_the_database_rules_are_form_errors(admin_client, code, changes):
    product = Ancillary.objects.get(code=code)
    before = (product.price, product.seat_zone)
    url = f"{CHANGELIST}{product.pk}/change/"

    response = admin_client.post(url, form_data(admin_client.get(url), **changes))

    assert response.status_code == 200  # the form again, with the error
    assert response.context["adminform"].form.errors
    product.refresh_from_db()
    assert (product.price, product.seat_zone) == before
