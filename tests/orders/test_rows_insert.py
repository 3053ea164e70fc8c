"""orders/core/rows.py writes a booking's rows outside the ORM's compiler (issue 29 item 2):
these fail on a Django upgrade that changes the private API it relies on, and hold the
rows it writes to what bulk_create (DB_DIRECT_INSERT=0) writes. The versions it was
checked against: tests/api/test_framework_shortcuts.py."""

import inspect
from datetime import UTC, date, datetime
from decimal import Decimal

import pytest
from django.core.cache import cache
from django.core.exceptions import ValidationError
from django.db import connection
from django.db.backends.base.operations import BaseDatabaseOperations
from django.db.models import Model
from django.db.models.fields import AutoFieldMixin

from orders.core.rows import _kept_type, row_new, rows_insert, rows_insert_together
from orders.models import Contact, Journey, Leg, Order, OrderItem, Passenger, Segment
from orders.reading.presenters import order_view_key
from tests.orders.conftest import CARD, HOLD, book, booking_body
from tests.orders.factories import OrderFactory

pytestmark = pytest.mark.django_db


def test_the_private_django_api_it_uses_is_there():
    assert "operation_name" in inspect.signature(Model._prepare_related_fields_for_save).parameters
    assert callable(AutoFieldMixin.get_db_prep_value)
    assert callable(BaseDatabaseOperations.validate_autopk_value)
    returned = Order._meta.db_returning_fields
    assert returned[0] is Order._meta.pk
    assert Order._meta.get_field("version") in returned  # a column with a db_default
    assert Order._meta.auto_field is Order._meta.pk


POSTGRESQL = connection.vendor == "postgresql"


@pytest.mark.parametrize(
    ("model", "name", "kept", "value"),
    [
        (Contact, "email", str, "ada@example.com"),
        (Passenger, "surname", str, "Lovelace"),
        (Segment, "rbd", str, "Y"),
        (Contact, "order", int, 41),
        (Leg, "segment", int, 41),
        (OrderItem, "journey", int, 41),
        (OrderItem, "total", Decimal, Decimal("120.50")),
        (Journey, "is_cancelled", bool, False),
        # PostgreSQL takes a timestamp or a date as it is; SQLite's backend makes it text.
        (
            Journey,
            "departs_at",
            datetime if POSTGRESQL else None,
            datetime(2026, 1, 5, 9, tzinfo=UTC),
        ),
        (Journey, "departure_date", date if POSTGRESQL else None, date(2026, 1, 5)),
        (Journey, "position", None, 1),  # an int becomes psycopg's Int2
    ],
)
def test_the_values_it_writes_as_they_are_are_what_the_orm_would_write(model, name, kept, value):
    """A text field's str, an auto key's int, a decimal, a boolean, and on PostgreSQL an
    aware timestamp and a date go to the database as they are: what the field's own
    get_db_prep_save returns for them, which the shortcut skips."""
    field = model._meta.get_field(name)

    assert _kept_type(field) is kept
    if kept is not None:
        assert field.get_db_prep_save(value, connection) == value
        assert type(field.get_db_prep_save(value, connection)) is kept


@pytest.mark.parametrize(
    "value",
    [datetime(2026, 1, 5, 9), Decimal("NaN"), Decimal("Infinity")],  # noqa: DTZ001
    ids=["naive timestamp", "NaN", "infinity"],
)
def test_values_the_orm_would_change_or_refuse_go_through_the_orms_steps(default_seller, value):
    """A naive timestamp is made aware, with the ORM's warning; a decimal that is not a
    number is refused, as the ORM refuses it."""
    at = datetime(2026, 1, 5, 9, tzinfo=UTC)
    order = OrderFactory.build(seller=default_seller, created_at=at, updated_at=at)
    if isinstance(value, datetime):
        order.created_at = value
        with pytest.warns(RuntimeWarning, match="naive datetime"):
            rows_insert([order])
        assert Order.objects.get(pk=order.pk).created_at.utcoffset() is not None
    else:
        order.total = value
        with pytest.raises(ValidationError):
            rows_insert([order])


def test_a_row_whose_related_row_was_never_saved_is_refused():
    """What bulk_create refuses too (Model._prepare_related_fields_for_save)."""
    order = Order(order_id="ORD-UNSAVED", record_locator="UNSAVD")

    with pytest.raises(ValueError, match="rows_insert"):
        rows_insert([Contact(order=order, ref="CTC-1", email="a@b.c")])


def test_rows_sent_together_may_not_refer_to_each_other(default_seller):
    """Each group's ids come back only once all of them have been sent: a row naming a
    row of another group is refused before anything is sent."""
    order = OrderFactory.build(order_id="ORD-TOGETHER", seller=default_seller)

    with pytest.raises(ValueError, match="rows_insert"):
        rows_insert_together([order], [Contact(order=order, ref="CTC-T", email="a@b.c")])
    assert not Order.objects.filter(order_id="ORD-TOGETHER").exists()


def order_rows(order_id: str) -> dict[str, int]:
    order = Order.objects.get(order_id=order_id)
    return {
        model.__name__: model.objects.filter(**{path: order}).count()
        for model, path in [
            (Passenger, "order"),
            (Contact, "order"),
            (Journey, "order"),
            (OrderItem, "order"),
            (Segment, "order"),
            (Leg, "segment__order"),
        ]
    }


@pytest.mark.parametrize("direct", [True, False], ids=["direct", "bulk_create"])
@pytest.mark.parametrize("payment", [HOLD, CARD], ids=["hold", "card"])
def test_a_booking_answers_as_a_later_read_either_way(api, auth, priced, settings, direct, payment):
    """The rows kept in memory after writing them (the order view renders from them) are
    what a read gives back, through the shortcut or through bulk_create: database
    defaults, JSON columns as stored."""
    settings.DB_DIRECT_INSERT = direct

    created = book(api, auth, booking_body(priced, payment=payment))

    assert created.status_code == 201, created.content
    order_id = created.json()["data"]["order"]["orderId"]
    assert order_rows(order_id) == {
        "Passenger": 3,
        "Contact": 1,
        "Journey": 2,
        "OrderItem": 2,
        "Segment": 2,
        "Leg": 2,
    }
    cache.delete(order_view_key(Order.objects.get(order_id=order_id)))
    retrieved = api.get(f"/json/v1/orders/{order_id}", **auth)
    assert retrieved.content == created.content


def test_both_ways_write_the_same_values(settings, default_seller):
    def written(direct: bool, suffix: str) -> dict:
        settings.DB_DIRECT_INSERT = direct
        order = Order(
            order_id=f"ORD-{suffix}",
            record_locator=f"RLOC{suffix}",
            owner_code="MX",
            seller=default_seller,
            channel="JSON",
            status="ONHOLD",
            created_at=datetime(2026, 1, 5, 9, tzinfo=UTC),
            updated_at=datetime(2026, 1, 5, 9, tzinfo=UTC),
            total=Decimal("10.5"),
            paid=0,
            source_offer_id=f"offer-{suffix}",
        )
        rows_insert([order])
        contact = Contact(
            order=order,
            ref=f"CTC-{suffix}",
            email="ada@example.com",
            postal_address={"line1": "12 Orchard Street", "city": "Providence"},
        )
        rows_insert([contact])
        assert order.pk is not None
        assert contact.pk is not None
        kept = {
            "total": order.total,
            "address": contact.postal_address,
            "order_id": contact.order_id,
        }
        read = Contact.objects.select_related("order").get(pk=contact.pk)
        assert kept == {
            "total": read.order.total,
            "address": read.postal_address,
            "order_id": read.order_id,
        }
        values = Contact.objects.filter(pk=contact.pk).values().get()
        return {k: v for k, v in values.items() if k not in {"id", "order_id", "ref"}}

    assert written(True, "A1") == written(False, "B1")


def _built(row: Model) -> tuple:
    """What a new row holds: its attributes, its state, the related rows it caches."""
    attributes = {k: v for k, v in vars(row).items() if k != "_state"}
    return attributes, row._state.db, row._state.adding, dict(row._state.fields_cache)


@pytest.mark.parametrize("saved", [True, False], ids=["related saved", "related new"])
def test_row_new_builds_what_model_init_builds(default_seller, saved):
    at = datetime(2026, 1, 5, 9, tzinfo=UTC)
    order = Order(
        order_id="ORD-RN1",
        record_locator="RNRNRN",
        seller=default_seller,
        created_at=at,
        updated_at=at,
        total=Decimal("10.5"),
    )
    if saved:
        rows_insert([order])
    journey = Journey(order=order, ref="J1", position=1, origin="PVD", destination="CHS")
    values = [
        (Order, {"order_id": "ORD-RN2", "seller": default_seller, "total": Decimal("9.50")}),
        (Contact, {"order": order, "ref": "CTC-1", "email": "a@b.c", "postal_address": None}),
        (Passenger, {"order": order, "ref": "PAX-1", "ptc": "ADT", "infant": None}),
        (Journey, {"order": order, "ref": "J2", "position": 2, "origin": "CHS"}),
        (OrderItem, {"order": order, "journey": journey, "ref": "OOI-1", "fare": {"a": 1}}),
        (Leg, {"segment_id": 7, "flight_leg_id": 3, "ref": "LEG-3", "position": 1}),
    ]
    for model, kwargs in values:
        assert _built(row_new(model, **kwargs)) == _built(model(**kwargs)), model.__name__


def test_row_new_leaves_what_model_init_refuses_to_it(default_seller):
    with pytest.raises(TypeError, match="unexpected keyword"):
        row_new(Contact, nickname="Ada")
    with pytest.raises(ValueError, match="must be a"):
        row_new(Contact, order=default_seller, ref="CTC-1")
