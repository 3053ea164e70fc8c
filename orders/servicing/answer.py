"""A change-order request's answer (orders.servicing.changes): the order as the change left
it. The view served is the view written: where the change read the whole order before it
and knows every row it wrote, its answer is rendered from those rows, as a retrieve right
after would render them, without reading the order again; else the order is read again
after the commit.

Why the rows read before the change are the order's at the version it writes over: every
write to an order's rows moves its version (the view's cache key names it:
orders.reading.presenters.order_view_key), and the change goes ahead only if, under the
order row's lock, the version is still the one read first (changes._apply).
"""

from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from django.db import DEFAULT_DB_ALIAS, connection
from django.db.models.sql import UpdateQuery

from airline.api import clock
from airline.fares.money import CENT
from airline.network.models import NetworkVersion
from orders.models import Order, OrderStatus, Service
from orders.reading.selectors import (
    ORDER_VIEW_PARTS,
    SLIM_PARTS,
    OrderParts,
    order_as_it_stands,
    order_with_parts,
    parts_loaded,
)
from orders.requests.inputs import Change
from orders.servicing.plan import Plan

# Change types whose writes the change knows row by row (the services AcceptOffer
# writes and the seats it gives up), so that on a hold, where no money moves, the
# answer is rendered from the order as read before the change and what it wrote.
ANSWERED_FROM_PARTS = frozenset({"AcceptOffer"})


@dataclass(frozen=True)
class Changed:
    """What a change-order request leaves: the order row as it stands after, and, when the
    change answers from the rows it read and wrote, the order's parts as it left them
    (None: rendered from the database)."""

    order: Order
    parts: OrderParts | None = None


def parts_read(order: Order, changes: Sequence[Change]) -> int | None:
    """Load the parts of `order` its changes need. A hold taking only changes of
    ANSWERED_FROM_PARTS: every part its view shows (ORDER_VIEW_PARTS), read after the
    network version, which is returned (the answer's cache key names it, read before the
    parts as a retrieve reads it). Else SLIM_PARTS, and None."""
    if order.status != OrderStatus.ONHOLD or any(
        change.kind not in ANSWERED_FROM_PARTS for change in changes
    ):
        order_with_parts(order, SLIM_PARTS)
        return None
    network = NetworkVersion.current()
    order_with_parts(order, ORDER_VIEW_PARTS)
    return network


def parts_after(plan: Plan, network: int) -> OrderParts | None:
    """The order's parts as the change left them, from the parts read before it
    (ORDER_VIEW_PARTS, after the network version `network`) and the rows it wrote: the
    order row as its UPDATE returned it, the services written and the seats given up.
    None when money moved (payments, refunds, credit, documents: rows the change does not
    hold) or the hold has lapsed since (a retrieve presents it expired:
    order_as_it_stands)."""
    order = plan.order
    if (
        plan.charged
        or plan.refunds
        or plan.credit is not None
        or plan.credit_code
        or plan.confirm
        or plan.cancelled
        or order.status != OrderStatus.ONHOLD
    ):
        return None
    order_as_it_stands(order, now=clock.now())
    if order.lapsed:
        return None
    services = sorted([*order.services.all(), *plan.services_written], key=lambda s: s.pk)
    return parts_loaded(order, services=services, network=network)


def order_row_update(order: Order, update: dict[str, Any]) -> None:
    """UPDATE the order row as `update` says (values and expressions, as QuerySet.update
    takes them) and load the row it leaves into `order`, in one statement (UPDATE ...
    RETURNING, which PostgreSQL and SQLite both have), where update() and
    refresh_from_db() take two. The row is read as a raw query reads a model's rows:
    the same values, converted the same way."""
    query = Order.objects.filter(pk=order.pk).query.chain(UpdateQuery)
    query.add_update_values(update)
    sql, params = query.get_compiler(DEFAULT_DB_ALIAS).as_sql()
    columns = ", ".join(
        connection.ops.quote_name(field.column) for field in Order._meta.concrete_fields
    )
    [row] = Order.objects.raw(f"{sql} RETURNING {columns}", params)
    row_copy(row, to=order)


def row_copy(row: Order, *, to: Order) -> None:
    """The order row's stored values of `row` put on `to` (as refresh_from_db would)."""
    for field in Order._meta.concrete_fields:
        setattr(to, field.attname, getattr(row, field.attname))


def as_stored(service: Service) -> Service:
    """A service row just written, its money as the database keeps it (to the cent), as
    a read of it would give it."""
    for name in ("amount", "tax"):
        setattr(service, name, Decimal(getattr(service, name)).quantize(CENT))
    return service
