"""New rows of one model written in one INSERT, without the ORM's query compiler.

A booking inserts into eight tables, a handful of rows each; building, compiling and
binding each of those INSERTs through the ORM (bulk_create, save) cost more CPU than
the database spent running them. Here the statement of each model and row count is
built once per process, and each value goes through its field's own
`get_db_prep_save`, as the ORM's would (a str of a plain text field, an int of a
foreign key, a finite decimal, a boolean, and on PostgreSQL an aware timestamp or a
date, is taken as it is, which is what that returns: `_kept_type`): the same rows, the
same SQL shape (plain `VALUES` rows, `RETURNING` the ids, which the hold replay of
benchmarks/replay.py reads back), sent as prepared statements (airline/sql.py).

Private Django API it relies on (tests/api/test_framework_shortcuts.py and
tests/orders/test_rows_insert.py fail on an upgrade that changes any of it):
`Model._prepare_related_fields_for_save`, `Options.db_returning_fields`, the field
methods compared in `_kept_type`, and `BaseDatabaseOperations.validate_autopk_value`.
Measured gain, per hold: the service's CPU 8.8 ms against 14.4 ms through bulk_create
(1.63x), PostgreSQL's 2.6 against 4.3 ms (1.62x) (`python -m benchmarks.shortcuts`, 60
holds each way on a busy 2-core machine; the bulk_create path includes reading the JSON
columns back, one query a model). `DB_DIRECT_INSERT=0` (settings) writes the same rows
with `bulk_create` instead.

`row_new(model, **values)` builds such a row as `model(**values)` would, without
Model.__init__'s walk through every field (a booking builds fourteen rows, which
through Model.__init__ make about 520 Python calls). It relies on `ModelState`,
`Field.get_default`, `Field.set_cached_value` and the router calls of the ORM's
foreign key descriptor; tests/orders/test_rows_insert.py compares its rows with
Model.__init__'s.
"""

from collections.abc import Callable, Sequence
from datetime import UTC, date, datetime
from decimal import Decimal
from functools import cache
from typing import Any, TypeVar

from django.conf import settings
from django.db import DEFAULT_DB_ALIAS, connection, connections, router
from django.db.backends.base.operations import BaseDatabaseOperations
from django.db.models import (
    BooleanField,
    CharField,
    DateField,
    DateTimeField,
    DecimalField,
    Field,
    ForeignKey,
    IntegerField,
    JSONField,
    Model,
    TextField,
    signals,
)
from django.db.models.base import ModelState
from django.db.models.fields import AutoFieldMixin

from airline.sql import column_converters, statement_cursor, statements_answered

M = TypeVar("M", bound=Model)


# (get_prep_value, to_python) of the text fields whose value, when it is a str, is
# written as it is: what CharField and TextField do with one, on every database.
_TEXT_AS_IS = {
    (CharField.get_prep_value, CharField.to_python),
    (TextField.get_prep_value, TextField.to_python),
}
# Fields whose steps hand a value of one type back as it was, when the database's own
# step at their end does too (PostgreSQL's does; SQLite's makes a timestamp or a date
# text): (the type, the field class whose steps those are, that step of the database's
# operations, if any, and what it takes beside the value). A timestamp only when it is
# aware (a naive one is made aware, with a warning) and a decimal only when it is finite
# (else refused), as `_KEPT_IF` checks.
_PASSED_THROUGH: tuple[tuple[type, type[Field], str | None, tuple], ...] = (
    (datetime, DateTimeField, "adapt_datetimefield_value", ()),
    (date, DateField, "adapt_datefield_value", ()),
    (Decimal, DecimalField, "adapt_decimalfield_value", (9, 2)),
    (bool, BooleanField, None, ()),
)
# A value of each type, for asking the database's step whether it hands it back as it is.
_PROBES = {
    datetime: datetime(2026, 1, 5, 9, tzinfo=UTC),
    date: date(2026, 1, 5),
    Decimal: Decimal("10.50"),
    bool: True,
}


def _aware(value: datetime) -> bool:
    return value.utcoffset() is not None  # django.utils.timezone.is_aware


_KEPT_IF: dict[type, Callable[[Any], bool]] = {datetime: _aware, Decimal: Decimal.is_finite}


def _kept_type(field: Field) -> type | None:
    """The type of value `field` writes unchanged, when it overrides none of the steps
    from its attribute to the database: a str for a CharField or TextField (EmailField
    and the like included); an int for a foreign key to an auto-incremented key, on a
    database that takes any such key; a datetime, date, Decimal or bool for those fields
    on a database that takes them as they are (`_PASSED_THROUGH`; with `_KEPT_IF`'s
    conditions), unless the field sets its own time (auto_now). Those steps cost five to
    seven calls a value, for most of a booking's values."""
    kind = type(field)
    for kept, model_field, step, given in _PASSED_THROUGH:
        if (
            kind.pre_save is model_field.pre_save
            and kind.get_db_prep_save is Field.get_db_prep_save
            and kind.get_db_prep_value is model_field.get_db_prep_value
            and kind.get_prep_value is model_field.get_prep_value
            and kind.to_python is model_field.to_python
            and not getattr(field, "auto_now", False)
            and not getattr(field, "auto_now_add", False)
        ):
            probe = _PROBES[kept]
            if step is None or getattr(connection.ops, step)(probe, *given) is probe:
                return kept
            return None
    if kind.pre_save is not Field.pre_save:
        return None
    if (
        kind.get_db_prep_save is Field.get_db_prep_save
        and kind.get_db_prep_value is Field.get_db_prep_value
        and (kind.get_prep_value, kind.to_python) in _TEXT_AS_IS
    ):
        return str
    if isinstance(field, ForeignKey) and kind.get_db_prep_save is ForeignKey.get_db_prep_save:
        target = type(field.target_field)
        if (
            issubclass(target, AutoFieldMixin)
            and target.get_db_prep_save is Field.get_db_prep_save
            and target.get_db_prep_value is AutoFieldMixin.get_db_prep_value
            and target.get_prep_value is IntegerField.get_prep_value
            and type(connection.ops).validate_autopk_value
            is BaseDatabaseOperations.validate_autopk_value
        ):
            return int
    return None


@cache
def _plan(
    model: type[Model],
) -> tuple[str, str, tuple[tuple[Field, type | None, Any], ...], str, tuple]:
    """(INSERT head, RETURNING tail, the fields written in column order, each with
    the type of value it writes as it is (or None), one row's placeholders, (field,
    converters) of each column returned) of a model whose primary key the database
    assigns. Returned, as by the ORM: the primary key and every column with a database
    default (the row then holds the value as the database stored it, e.g. a Decimal for a
    decimal column given an int); and every JSON column, which PostgreSQL's jsonb keeps
    with an object's keys shortest first (PostgreSQL manual, "JSON Types"): a row kept in
    memory after writing it (the order view renders from them) then holds its JSON as any
    read gives it back. Parsing it back costs less than putting the keys in that order in
    Python did."""
    meta = model._meta
    fields = tuple(f for f in meta.concrete_fields if f is not meta.auto_field)
    quote = connection.ops.quote_name
    table = quote(meta.db_table)
    columns = ", ".join(quote(f.column) for f in fields)
    head = f"INSERT INTO {table} ({columns}) VALUES "  # noqa: S608 (names from the model)
    json = [f for f in fields if isinstance(f, JSONField)]
    returned = tuple(dict.fromkeys([*meta.db_returning_fields, *json]))
    tail = " RETURNING " + ", ".join(f"{table}.{quote(f.column)}" for f in returned)
    converters = tuple(
        (f, col, column_converters(col, connection))
        for f in returned
        for col in [f.get_col(meta.db_table)]
    )
    written = tuple((f, kept, _KEPT_IF.get(kept)) for f in fields for kept in [_kept_type(f)])
    return head, tail, written, f"({', '.join(['%s'] * len(fields))})", converters


@cache
def _statement(model: type[Model], count: int) -> str:
    head, tail, _fields, row, _returned = _plan(model)
    return head + ", ".join([row] * count) + tail


def rows_insert(rows: Sequence[M]) -> Sequence[M]:
    """Insert new rows of one model (its primary key assigned by the database) in one
    statement, and set their primary keys, columns with a database default and JSON
    columns from what the database returned, as save() and bulk_create do for the first
    two. Returns `rows`."""
    if not rows:
        return rows
    if not settings.DB_DIRECT_INSERT:
        return _orm_insert(rows)
    statement, params = rows_statement(rows)
    with statement_cursor() as cursor:
        cursor.execute(statement, params)
        rows_written(rows, cursor.fetchall())
    return rows


def rows_insert_together(
    *groups: Sequence[Model], reads: Sequence[tuple[str, Sequence, Callable]] = ()
) -> None:
    """rows_insert of each group (new rows of one model), the groups' INSERTs sent in one
    pipeline (airline.sql.statements_answered): one round trip for all of them. No row
    may refer to another group's, which has no id before the round trip ends
    (rows_statement refuses one, as bulk_create does). `reads` (SQL, parameters, keep)
    go in the same round trip, each keep handed the rows its SELECT answered; when there
    is no pipeline to send them in, they are not sent (whoever needs them reads them)."""
    groups = tuple(group for group in groups if group)
    if not settings.DB_DIRECT_INSERT or len(groups) + len(reads) < 2:
        for group in groups:
            rows_insert(group)
        return
    answered = statements_answered(
        [*(rows_statement(group) for group in groups), *((sql, params) for sql, params, _ in reads)]
    )
    for group, written in zip(groups, answered[: len(groups)], strict=True):
        rows_written(group, written)
    for (_sql, _params, keep), rows in zip(reads, answered[len(groups) :], strict=True):
        keep(rows)


def rows_statement(rows: Sequence[Model]) -> tuple[str, list]:
    """rows_insert's INSERT of `rows` (new rows of one model, at least one) and its
    parameters, for a caller that sends it with other statements (airline.sql
    statements_pipelined) and then hands what it returned to rows_written."""
    model = type(rows[0])
    _head, _tail, fields, _row, _returned = _plan(model)
    db = connections[DEFAULT_DB_ALIAS]  # once: each use of the `connection` proxy is a lookup
    params = []
    for row in rows:
        # What bulk_create checks too: a related row must have been saved first, and
        # its id is taken from it if it was saved after being assigned.
        row._prepare_related_fields_for_save(operation_name="rows_insert")
        for field, kept, kept_if in fields:
            value = getattr(row, field.attname)
            if type(value) is not kept or (kept_if is not None and not kept_if(value)):
                value = field.get_db_prep_save(field.pre_save(row, True), db)
            params.append(value)
    return _statement(model, len(rows)), params


def rows_written(rows: Sequence[Model], written: Sequence[Sequence[Any]]) -> None:
    """`rows` as rows_statement's INSERT stored them: each row's primary key, columns with
    a database default and JSON columns set from `written` (what it returned)."""
    db = connections[DEFAULT_DB_ALIAS]
    returned = _plan(type(rows[0]))[4]
    for row, values in zip(rows, written, strict=True):
        for (field, column, converters), value in zip(returned, values, strict=True):
            # Converters take the expression, as the ORM passes them (SQLite's decimal
            # converter reads its output_field).
            for convert in converters:
                value = convert(value, column, db)
            setattr(row, field.attname, value)
        row._state.adding = False
        row._state.db = db.alias


def _orm_insert(rows: Sequence[M]) -> Sequence[M]:
    """rows_insert through the ORM (DB_DIRECT_INSERT=0): bulk_create sets the primary keys
    and the columns with a database default; the JSON columns are read back, one query
    more, so that the rows hold them as any read gives them back, as rows_insert's do."""
    model = type(rows[0])
    manager = model._default_manager
    manager.bulk_create(rows)
    json = [f.attname for f in model._meta.concrete_fields if isinstance(f, JSONField)]
    if json:
        stored = {
            pk: values
            for pk, *values in manager.filter(pk__in=[row.pk for row in rows]).values_list(
                "pk", *json
            )
        }
        for row in rows:
            for name, value in zip(json, stored[row.pk], strict=True):
                setattr(row, name, value)
    return rows


@cache
def _building(model: type[Model]) -> tuple[tuple[Field, ...], frozenset[str]]:
    """(the fields Model.__init__ sets, in its order; the names it takes them by: a field's
    name, and a foreign key's attname too)."""
    fields = tuple(f for f in model._meta.fields if f.column is not None and not f.generated)
    names = frozenset(n for f in fields for n in {f.name, f.attname})
    return fields, names


def row_new(model: type[M], **values: Any) -> M:
    """`model(**values)`: a new row, unsaved, as Model.__init__ builds it from keyword
    arguments (every field set, from `values` or its default; a related row given by
    name cached, its id set, its database noted as the ORM's descriptor does), for the
    rows a booking writes. Model.__init__ goes through every field with a dict pop, a
    try and a descriptor call each. For models with no pre_init or post_init receiver
    (an ImageField has one); with one, or with a keyword or related row Model.__init__
    would refuse, the row is built by Model.__init__ itself."""
    if signals.pre_init.has_listeners(model) or signals.post_init.has_listeners(model):
        return model(**values)
    fields, names = _building(model)
    if not names.issuperset(values):
        return model(**values)  # Model.__init__ says what is wrong with them
    row = model.__new__(model)
    state = row._state = ModelState()
    attributes = row.__dict__
    for field in fields:
        if field.is_relation and field.name in values:
            related = values[field.name]
            if related is None:
                attributes[field.attname] = None
            else:
                if not isinstance(related, field.remote_field.model):
                    return model(**values)  # its descriptor refuses it, in its words
                if state.db is None:
                    state.db = router.db_for_write(model, instance=related)
                if related._state.db is None:
                    related._state.db = router.db_for_write(type(related), instance=row)
                if not router.allow_relation(related, row):
                    return model(**values)
                attributes[field.attname] = getattr(related, field.target_field.attname)
            field.set_cached_value(row, related)
        elif field.attname in values:
            attributes[field.attname] = values[field.attname]
        else:
            attributes[field.attname] = field.get_default()
    return row
