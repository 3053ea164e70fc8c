"""Whatever a client sends, the order endpoints answer with a documented error, never a
500, and a refused request writes nothing (DEVELOPERS.md: bad input)."""

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from orders.models import Order
from tests.orders.conftest import booking_body

pytestmark = pytest.mark.django_db

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=12),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3)
    ),
    max_leaves=8,
)
FIELDS = [
    "offerId",
    "offerItemIds",
    "offerItemSelections",
    "passengers",
    "contact",
    "payment",
    "remarks",
]


@settings(
    max_examples=400, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(field=st.sampled_from(FIELDS), value=json_values)
def test_a_create_order_body_with_any_field_mangled_is_refused_cleanly(
    api, auth, priced, field, value
):
    body = booking_body(priced)
    body[field] = value

    response = api.post("/json/v1/orders", body, format="json", **auth)

    assert response.status_code < 500, response.content
    if response.status_code != 201:
        assert response.json()["error"]["code"].startswith("ERR-")
        assert not Order.objects.exists()
    else:
        Order.objects.all().delete()


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(body=json_values, path=st.sampled_from(["", "/seats", "/services"]))
def test_any_change_or_ancillary_body_is_refused_cleanly(api, auth, priced, body, path):
    from tests.orders.conftest import book

    order = Order.objects.first() or None
    if order is None:
        book(api, auth, booking_body(priced))
        order = Order.objects.get()
    url = f"/json/v1/orders/{order.order_id}{path}"
    send = api.patch if not path else api.post

    response = send(url, body, format="json", **auth)

    assert response.status_code < 500, response.content
