"""An order's parts (its passengers, journeys, items, payments...) read for one order by
statements built once per process, and loaded on it as `prefetch_related` loads them.

A change to an order (AcceptOffer above all) and a retrieve that renders the view read
up to thirteen of its parts. Through `prefetch_related_objects` each of those reads is a
queryset filtered, compiled and iterated anew, and the ORM spends several times the CPU
building them that the database spends running them. Here each part's statement is
built once per process from the models' metadata: the part's columns (and those of the
rows it reads along, as `select_related` reads them), its rows found by the order's id
(a part of a part, a segment's legs, through a subquery of its parent's ids, so that
every statement takes one value), in the order its `Part` names. The statements are
sent as prepared statements (airline/sql.py), all of an order's in one round trip
(they need nothing from each other's answers), and each row is built by `Model.from_db`
from values converted by each column's converters, as the ORM's iterator builds them.
`DB_DIRECT_READS=0` (settings) reads the same parts with prefetch_related_objects.

They are then put where `prefetch_related` puts them: in each parent row's
`_prefetched_objects_cache`, as the queryset its related manager gives (so `.all()`
answers from memory and a further `.filter()` queries that relation, as it would
after prefetching), each row's foreign key to its parent cached. `Part.prefetch()`
gives the same read as a Prefetch, for a queryset of many orders.

Private Django API it relies on, as prefetch_related_objects itself does
(tests/orders/test_order_parts.py compares every part read here with the ORM's):
`_prefetched_objects_cache`, `QuerySet._result_cache` and `_prefetch_done`, and
`ForeignObjectRel.cache_name`.
"""

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any

from django.conf import settings
from django.db import DEFAULT_DB_ALIAS, connections
from django.db.models import Field, ForeignKey, Model, Prefetch, prefetch_related_objects

from airline.sql import column_converters, statement_cursor, statements_answered


@dataclass(frozen=True)
class Part:
    """A relation read for an order: the rows of `model` its parent (the order, or the
    rows of the part above) has under `name` (a related name: "journeys"), in the order
    of `order_by` (field names, "-" for descending; the model's Meta ordering when
    empty), each with the rows of `joined` (forward relations, as select_related names
    them) and its own `parts`."""

    name: str
    model: type[Model]
    order_by: tuple[str, ...] = ()
    joined: tuple[str, ...] = ()
    parts: tuple["Part", ...] = ()

    def prefetch(self) -> Prefetch:
        """The same read for prefetch_related (a queryset of many orders)."""
        rows = self.model._default_manager.all()
        if self.order_by:
            rows = rows.order_by(*self.order_by)
        if self.joined:
            rows = rows.select_related(*self.joined)
        if self.parts:
            rows = rows.prefetch_related(*(part.prefetch() for part in self.parts))
        return Prefetch(self.name, queryset=rows)


# _Joined, _Select and _Read are built once per statement and kept: compared, and
# hashed as cache keys, by identity.
@dataclass(frozen=True, eq=False)
class _Joined:
    """A row read along with each row of a part: its model, the columns it takes in the
    statement's row, the foreign key that leads to it and which row that key is on (0,
    the part's own; n, the n-th joined)."""

    model: type[Model]
    start: int
    end: int
    pk: int  # the index of its primary key in the statement's row
    key: ForeignKey
    on: int


@dataclass(frozen=True, eq=False)
class _Select:
    """The SELECT of a model's rows, each with the rows it reads along, and how a row of
    its answer is built: `head` up to its FROM and JOINs, `table` its own table with its
    alias, `order` its ORDER BY terms (or "")."""

    model: type[Model]
    head: str
    table: str
    order: str
    width: int  # the model's own columns, first in each row
    joined: tuple[_Joined, ...]
    converters: tuple[tuple[int, tuple], ...]  # (column index, its converters)


@dataclass(frozen=True, eq=False)
class _Read:
    """A part's statement and how its rows are built and hung on their parents."""

    part: Part
    sql: str
    select: _Select
    relation: ForeignKey  # the part's foreign key to its parent
    parts: tuple["_Read", ...]


def rows_where(
    model: type[Model], where: str, params: Sequence[Any], *, using: str, limit: int | None = None
) -> list[Model]:
    """The rows of `model` for which `where` holds (its columns named p0."column", its
    values `params`), in the model's Meta ordering, at most `limit`: by a statement
    built once per process for each `where`, built as the parts' rows are. The values
    are taken as they are: give each as its field's get_db_prep_value gives it."""
    select = _select(model, (), (), using, "p0")
    return _rows(select, _statement(select, where, limit), params, using)


@cache
def _statement(select: _Select, where: str, limit: int | None = None) -> str:
    """`select`'s statement of the rows for which `where` holds, in its order."""
    return (
        f"{select.head} WHERE {where}"
        + (f" ORDER BY {select.order}" if select.order else "")
        + (f" LIMIT {int(limit)}" if limit is not None else "")
    )


def parts_load(parent: Model, parts: Iterable[Part], *, empty: Iterable[str] = ()) -> None:
    """Load `parts` on `parent` (an order) from the database it was read from, as
    prefetch_related_objects([parent], *(p.prefetch() for p in parts)) would, and with
    it when settings.DB_DIRECT_READS is off; those named in `empty` (known to have no
    row) loaded empty without a query."""
    skipped = frozenset(empty)
    if not settings.DB_DIRECT_READS:
        prefetch_related_objects(
            [parent],
            *(
                Prefetch(p.name, p.model._default_manager.none())
                if p.name in skipped
                else p.prefetch()
                for p in parts
            ),
        )
        return
    alias = parent._state.db or DEFAULT_DB_ALIAS
    reads = _reads(type(parent), tuple(parts), alias)
    sent = [read for read in reads if read.part.name not in skipped]
    # Every statement takes the order's id alone (a part's part finds its rows through its
    # parent's ids by subquery), so all of them go in one round trip, in the order the
    # rows are then built; a part's part is read even when its parent has no row (its
    # answer is then empty): one statement more costs less than a round trip more.
    answered = iter(
        statements_answered(
            [(read.sql, [parent.pk]) for read in _each_with_its_parts(sent)], using=alias
        )
    )
    for read in reads:
        if read.part.name in skipped:
            _hang(read, [parent], [])
            continue
        rows = _rows_built(read.select, next(answered), alias)
        _hang(read, [parent], rows)
        _children_hang(read, rows, answered, alias)


def _each_with_its_parts(reads: Iterable[_Read]) -> Iterator[_Read]:
    """`reads`, each followed by its parts' reads (depth first): the order parts_load
    sends their statements in and builds their rows in."""
    for read in reads:
        yield read
        yield from _each_with_its_parts(read.parts)


def _children_hang(
    read: _Read, parents: Sequence[Model], answered: Iterator[list], alias: str
) -> None:
    for child in read.parts:
        rows = _rows_built(child.select, next(answered), alias)
        _hang(child, parents, rows)
        _children_hang(child, rows, answered, alias)


def _rows(select: _Select, sql: str, params: Sequence[Any], alias: str) -> list[Model]:
    with statement_cursor(using=alias) as cursor:
        cursor.execute(sql, params)
        return _rows_built(select, cursor.fetchall(), alias)


def _rows_built(select: _Select, fetched: Sequence[Sequence[Any]], alias: str) -> list[Model]:
    """The rows of `select`'s model (with those it reads along) from what its statement
    answered, as the ORM's iterator builds them."""
    if not fetched:
        return []
    db = connections[alias]
    model, width, joined = select.model, select.width, select.joined
    converters = select.converters
    built = []
    for values in fetched:
        if converters:
            values = list(values)
            for index, steps in converters:
                value_ = values[index]
                for convert, column in steps:
                    value_ = convert(value_, column, db)
                values[index] = value_
        row = model.from_db(alias, None, values[:width])
        rows = [row]
        for one in joined:
            related = None
            if values[one.pk] is not None:  # none found by an outer join
                related = one.model.from_db(alias, None, values[one.start : one.end])
            rows.append(related)
            owner = rows[one.on]
            if owner is not None:
                one.key.set_cached_value(owner, related)
        built.append(row)
    return built


def _hang(read: _Read, parents: Sequence[Model], rows: list[Model]) -> None:
    """Put `rows` on their parents as prefetch_related does (prefetch_one_level)."""
    key = read.relation
    accessor = key.remote_field.get_accessor_name()
    cache_name = key.remote_field.cache_name
    by_parent: dict[Any, list[Model]] = {}
    for row in rows:
        by_parent.setdefault(getattr(row, key.attname), []).append(row)
    target = key.target_field.attname
    for parent in parents:
        mine = by_parent.get(getattr(parent, target), [])
        for row in mine:
            key.set_cached_value(row, parent)
        if not hasattr(parent, "_prefetched_objects_cache"):
            parent._prefetched_objects_cache = {}
        parent._prefetched_objects_cache.pop(cache_name, None)
        loaded = getattr(parent, accessor).get_queryset()
        loaded._result_cache = mine
        loaded._prefetch_done = True
        parent._prefetched_objects_cache[cache_name] = loaded


@cache
def _reads(parent: type[Model], parts: tuple[Part, ...], alias: str) -> tuple[_Read, ...]:
    """The statements of `parts` of a `parent` row, built once per process."""
    return tuple(_read(part, parent, None, alias, 0) for part in parts)


def _read(part: Part, parent: type[Model], above: str | None, alias: str, depth: int) -> _Read:
    """`part`'s statement: its rows whose parent is the row whose id is the statement's
    one parameter, or, under a part (`above`: the SELECT of that part's ids), whose
    parent is among those rows."""
    quote = connections[alias].ops.quote_name
    relation = parent._meta.get_field(part.name).field
    if not isinstance(relation, ForeignKey) or relation.model is not part.model:
        raise ValueError(f"{parent.__name__}.{part.name} is not a relation to {part.model}")
    me = f"p{depth}"
    select = _select(part.model, part.joined, part.order_by, alias, me)
    key = f"{me}.{quote(relation.column)}"
    where = f"{key} = %s" if above is None else f"{key} IN ({above})"
    ids = f"SELECT {me}.{quote(part.model._meta.pk.column)} FROM {select.table} WHERE {where}"  # noqa: S608 (names from the models)
    children = tuple(_read(child, part.model, ids, alias, depth + 1) for child in part.parts)
    return _Read(part, _statement(select, where), select, relation, children)


@cache
def _select(
    model: type[Model], joined: tuple[str, ...], order_by: tuple[str, ...], alias: str, me: str
) -> _Select:
    """The SELECT of `model`'s rows as table alias `me`, each with the rows of `joined`
    (select_related paths), in the order of `order_by` (else the Meta ordering)."""
    quote = connections[alias].ops.quote_name
    columns = _columns(model, me, quote)
    table = f"{quote(model._meta.db_table)} {me}"
    tables = [table]
    rows_along: list[_Joined] = []
    aliases = {"": (me, model, 0)}
    width = len(model._meta.concrete_fields)
    start = width
    nullable = {"": False}
    for path in _joined_paths(joined):
        head, _, name = path.rpartition("__")
        owner_alias, owner_model, owner_index = aliases[head]
        fk = owner_model._meta.get_field(name)
        if not isinstance(fk, ForeignKey):
            raise ValueError(f"{owner_model.__name__}.{name} is not a foreign key")
        target = fk.related_model
        alias_ = f"{me}_{len(rows_along) + 1}"
        outer = nullable[head] or fk.null
        nullable[path] = outer
        tables.append(
            f"{'LEFT OUTER' if outer else 'INNER'} JOIN {quote(target._meta.db_table)} {alias_} "
            f"ON {alias_}.{quote(fk.target_field.column)} = {owner_alias}.{quote(fk.column)}"
        )
        columns += _columns(target, alias_, quote)
        fields = target._meta.concrete_fields
        end = start + len(fields)
        rows_along.append(
            _Joined(target, start, end, start + fields.index(target._meta.pk), fk, owner_index)
        )
        aliases[path] = (alias_, target, len(rows_along))
        start = end
    db = connections[alias]
    converters = tuple(
        (index, tuple((convert, col) for convert in steps))
        for index, (_sql, col) in enumerate(columns)
        if (steps := column_converters(col, db))
    )
    return _Select(
        model=model,
        head=f"SELECT {', '.join(c for c, _ in columns)} FROM {' '.join(tables)}",  # noqa: S608 (names from the models)
        table=table,
        order=", ".join(_ordering(model, order_by, me, quote)),
        width=width,
        joined=tuple(rows_along),
        converters=converters,
    )


def _columns(model: type[Model], alias: str, quote) -> list[tuple[str, Any]]:
    """(SQL, column expression) of each concrete field of `model`, in field order (the
    order Model.from_db takes values in)."""
    return [(f"{alias}.{quote(f.column)}", f.get_col(alias)) for f in model._meta.concrete_fields]


def _joined_paths(joined: Sequence[str]) -> list[str]:
    """Each select_related path with every path leading to it, shortest first."""
    paths: dict[str, None] = {}
    for path in joined:
        steps = path.split("__")
        for end in range(1, len(steps) + 1):
            paths["__".join(steps[:end])] = None
    return sorted(paths, key=lambda p: p.count("__"))


def _ordering(model: type[Model], order_by: Sequence[str], alias: str, quote) -> list[str]:
    """ORDER BY terms: `order_by`, else `model`'s Meta ordering; plain fields only (a
    relation's name would order by the related model's own ordering, which the ORM
    resolves and this does not)."""
    terms = []
    for name in order_by or model._meta.ordering:
        descending = name.startswith("-")
        field_: Field = model._meta.get_field(name.lstrip("-"))
        if field_.is_relation and name.lstrip("-") != field_.attname:
            raise ValueError(f"order {model.__name__} by {field_.attname}, not {name}")
        terms.append(f"{alias}.{quote(field_.column)}{' DESC' if descending else ''}")
    return terms
