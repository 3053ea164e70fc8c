"""What an error may echo, and how large an object or array may be (DESIGN.md §11 "Error
detail size", issue 28 item 1): `fields` names at most 20 fields and the description
counts the rest; an object of more than 1,000 properties, an array of more than 1,000
items or a body of more than 2,000 objects and arrays is refused before it is read."""

import json

import pytest

from tests.conftest import error_of
from tests.offers.conftest import search_body

pytestmark = pytest.mark.django_db


def search_raw(api, auth, raw):
    return api.post("/json/v1/offers", raw, content_type="application/json", **auth)


def test_unknown_properties_are_named_up_to_twenty_and_the_rest_counted(api, auth, network):
    body = search_body(("PVD", "CHS", network))
    body.update({f"extra{n:03d}": 1 for n in range(999 - len(body))})

    error = error_of(search_raw(api, auth, json.dumps(body)), 422, "ERR-1005")

    assert len(error["fields"]) == 20
    assert all(message == "Unknown property." for message in error["fields"].values())
    assert error["path"] == "extra000"
    assert "977 more fields than `fields` lists" in error["description"]


def test_unknown_properties_in_every_item_are_counted_across_items(api, auth, network):
    body = search_body(("PVD", "CHS", network), ("CHS", "PVD", network))
    for n, direction in enumerate(body["originDestinations"]):
        direction.update({f"x{n}_{k:02d}": 1 for k in range(30)})

    error = error_of(search_raw(api, auth, json.dumps(body)), 422, "ERR-1005")

    assert len(error["fields"]) == 20
    assert set(error["fields"]) <= {
        f"originDestinations.x{n}_{k:02d}" for n in (0, 1) for k in range(30)
    }
    assert "40 more fields than `fields` lists" in error["description"]


def test_twenty_fields_or_fewer_are_all_listed_without_a_count(api, auth, network):
    body = search_body(("PVD", "CHS", network))
    body.update({f"extra{n:02d}": 1 for n in range(20)})

    error = error_of(search_raw(api, auth, json.dumps(body)), 422, "ERR-1005")

    assert len(error["fields"]) == 20
    assert "more fields" not in error["description"]


@pytest.mark.parametrize(
    ("where", "path"),
    [("top", None), ("direction", "originDestinations"), ("passenger", "passengers")],
)
def test_an_object_of_more_than_a_thousand_properties_is_refused_unread(
    api, auth, network, where, path
):
    body = search_body(("PVD", "CHS", network))
    many = {f"k{n:05d}": 1 for n in range(1001)}
    if where == "top":
        body.update(many)
    elif where == "direction":
        body["originDestinations"][0].update(many)
    else:
        body["passengers"][0].update(many)

    error = error_of(search_raw(api, auth, json.dumps(body)), 422, "ERR-1005")

    assert "at most 1,000 properties" in error["description"]
    assert error.get("path") == path
    assert "fields" not in error


def test_an_array_of_more_than_a_thousand_items_is_refused(api, auth, network):
    body = search_body(("PVD", "CHS", network), passengers=[{"type": "ADT"}] * 1001)

    error = error_of(search_raw(api, auth, json.dumps(body)), 422, "ERR-1005")

    assert "at most 1,000 items" in error["description"]
    assert error["path"] == "passengers"


def test_a_body_of_too_many_objects_is_refused_before_it_is_parsed(api, auth, network):
    raw = json.dumps({"passengers": [{}] * 2001})

    error = error_of(search_raw(api, auth, raw), 422, "ERR-1005")

    assert "more than 2,000 objects and arrays" in error["description"]


def test_a_thousand_properties_are_still_read(api, auth, network):
    body = search_body(("PVD", "CHS", network))
    body["originDestinations"][0].update({f"k{n:03d}": 1 for n in range(1000 - 3)})

    error = error_of(search_raw(api, auth, json.dumps(body)), 422, "ERR-1005")

    assert error["path"] == "originDestinations.k000"
    assert "977 more fields" in error["description"]
