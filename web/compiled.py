"""Reads whose SQL is compiled once per thread, for the few a chat turn makes before its
model request; and plain inserts and updates for the writes every turn makes
(``plain_insert``, ``plain_update``).

Django compiles a queryset's SQL every time it runs. For the small reads on a turn's path that
compiling costs several times the statement itself (reading a profile took 620 µs in process,
the statement about 60). A ``CompiledRead`` runs its queryset's compiler once, with marker
values where the call's values go, keeps the SQL and the compiler's converters, and binds each
call's values in the markers' places. The result is the model instances the queryset gives.

Only plain querysets of one model (``filter``, ``only``, ``order_by``, a slice) qualify, and the
values bound must be ints, strings or lists of ints (for ``__in``): they reach the database
adapter as they are. A list's length is part of the statement, so a plan is kept per length;
plans are kept per thread and database alias, since converters belong to the thread's
connection.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

from django.db import connections
from django.db.models import Field, Model, QuerySet
from django.db.models.signals import post_save, pre_save
from django.db.models.sql.compiler import SQLCompiler

from web.fields import concrete_field

# Values no real call passes: where each lands in the compiled parameters is where that
# call's value goes.
_INT_MARKER = -7_340_013_000
_STR_MARKER = "\x00compiled-read-marker-{}\x00"
PLANS_PER_THREAD = 64  # shapes (alias, list lengths) kept; more start the cache afresh

_M = TypeVar("_M", bound=Model)


@dataclass
class _Plan(Generic[_M]):
    sql: str
    params: list
    slots: list[tuple[int, int]]  # (index in params, index in the call's flat values)
    compiler: SQLCompiler
    converters: dict
    model: type[_M]
    names: list[str]
    start: int
    end: int

    def bind(self, values: list) -> list:
        params = list(self.params)
        for at, which in self.slots:
            params[at] = values[which]
        return params

    def instances(self, alias: str, rows: Iterable[Sequence]) -> list[_M]:
        if self.converters:
            rows = self.compiler.apply_converters(rows, self.converters)
        return [self.model.from_db(alias, self.names, row[self.start : self.end]) for row in rows]


class CompiledRead(Generic[_M]):
    """``build(*values)`` returns the queryset; ``read(*values)`` its instances. ``kinds``:
    each value's type, ``int``, ``str`` or ``list`` (a list of ints)."""

    def __init__(self, build: Callable[..., QuerySet[_M]], *kinds: type):
        if any(kind not in (int, str, list) for kind in kinds):
            raise TypeError("a compiled read binds ints, strings and lists of ints only")
        self._build = build
        self._kinds = kinds
        self._local = threading.local()

    def read(self, *values: int | str | list[int], using: str = "default") -> list[_M]:
        flat: list[int | str] = []
        shape: list = [using]
        for value, kind in zip(values, self._kinds, strict=True):
            if type(value) is not kind:
                raise TypeError(f"expected {kind.__name__}, got {type(value).__name__}")
            if isinstance(value, list):  # kind is list: the type was checked above
                if not value or any(type(item) is not int for item in value):
                    raise TypeError("a list value holds one int or more")
                flat += value
                shape.append(len(value))
            else:
                flat.append(value)
        plans = self._local.__dict__.setdefault("plans", {})
        key = tuple(shape)
        plan: _Plan[_M] | None = plans.get(key)
        if plan is None:
            if len(plans) >= PLANS_PER_THREAD:
                plans.clear()
            plan = plans[key] = self._compile(using, shape[1:])
        with connections[using].cursor() as cursor:
            cursor.execute(plan.sql, plan.bind(flat))
            rows = cursor.fetchall()
        return plan.instances(using, rows)

    def first(self, *values: int | str | list[int], using: str = "default") -> _M | None:
        found = self.read(*values, using=using)
        return found[0] if found else None

    def _compile(self, using: str, lengths: list[int]) -> _Plan[_M]:
        markers: list[int | str] = []
        arguments: list = []
        sizes = iter(lengths)
        for kind in self._kinds:
            count = next(sizes) if kind is list else 1
            mine = [
                _STR_MARKER.format(len(markers) + n)
                if kind is str
                else _INT_MARKER - len(markers) - n
                for n in range(count)
            ]
            markers += mine
            arguments.append(mine if kind is list else mine[0])
        queryset = self._build(*arguments)
        query = queryset.query
        plain = not (query.select_related or query.annotations or query.extra)
        # A private attribute django-stubs leave out; a prefetch would need its own queries.
        prefetches = queryset._prefetch_related_lookups  # type: ignore[attr-defined]
        if not plain or prefetches:
            raise ValueError("a compiled read takes a plain queryset of one model")
        compiler: SQLCompiler = query.get_compiler(using)
        sql, params = compiler.as_sql()
        slots = [(at, markers.index(param)) for at, param in enumerate(params) if param in markers]
        if sorted({which for _, which in slots}) != list(range(len(markers))):
            raise ValueError("every value must reach the statement's parameters")
        select = compiler.select
        fields = compiler.klass_info["select_fields"]
        start, end = fields[0], fields[-1] + 1
        return _Plan(
            sql=sql,
            params=list(params),
            slots=slots,
            compiler=compiler,
            converters=compiler.get_converters([column for column, _, _ in select]),
            model=queryset.model,
            names=[column.target.attname for column, _, _ in select[start:end]],
            start=start,
            end=end,
        )


def plain_update(
    model: type[Model],
    values: dict,
    *,
    where: dict | None = None,
    where_not: dict | None = None,
    ids: list[int] | None = None,
) -> int:
    """``model.objects.filter(pk__in=ids, **where).exclude(**where_not).update(**values)``,
    written as one plain statement: for the writes every turn makes, whose compiling cost the
    ORM several times the statement. Fields by name, conditions by equality only; each value
    is prepared by its field as the ORM prepares it. Returns the rows updated."""
    meta = model._meta
    connection = connections["default"]
    if not values:
        raise ValueError("nothing to update")

    def column(name: str) -> tuple[Field, str]:
        field = meta.pk if name == "pk" else concrete_field(model, name)
        return field, connection.ops.quote_name(_column(field))

    sets, params = [], []
    for name, value in values.items():
        field, quoted = column(name)
        sets.append(f"{quoted} = %s")
        params.append(field.get_db_prep_save(value, connection))
    conditions = []
    for negate, equals in ((False, where or {}), (True, where_not or {})):
        for name, value in equals.items():
            field, quoted = column(name)
            test = f"{quoted} = %s"
            conditions.append(f"NOT ({test})" if negate else test)
            params.append(field.get_db_prep_value(value, connection))
    if ids is not None:
        if not ids:
            return 0
        conditions.append(f"{column('pk')[1]} IN ({', '.join(['%s'] * len(ids))})")
        params += list(ids)
    if not conditions:
        raise ValueError("an update of every row is not a turn's write")
    sql = (
        f"UPDATE {connection.ops.quote_name(meta.db_table)} SET {', '.join(sets)} "  # noqa: S608
        f"WHERE {' AND '.join(conditions)}"
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.rowcount


def _column(field: Field) -> str:
    """A concrete field's column (typed ``str | None``: a field may have none)."""
    if field.column is None:
        raise ValueError(f"{field.name} has no column of its own")
    return field.column


def column_of(model: type[Model], name: str) -> str:
    """The column of ``model``'s field ``name``, for a plain statement; TypeError for a
    reverse relation, ValueError for a field without a column of its own."""
    return _column(concrete_field(model, name))


_insert_sql: dict[tuple[str, type[Model]], tuple[str, list]] = {}


def plain_insert(instance: Model) -> Model:
    """``instance.save()`` for a new row, as one plain statement: the turn's two messages,
    whose saving cost the ORM several times the insert. Each field's value is prepared as
    the ORM prepares it (``pre_save`` for defaults and auto times, then ``get_db_prep_save``);
    the statement is built once per model. No signals are sent, so a model that has
    receivers for them is refused. The instance gets its primary key and is marked saved."""
    model = type(instance)
    if pre_save.has_listeners(model) or post_save.has_listeners(model):
        raise ValueError(f"{model.__name__} has save signal receivers: save it with the ORM")
    meta = instance._meta
    connection = connections["default"]
    key = (connection.alias, type(instance))
    built = _insert_sql.get(key)
    if built is None:
        if meta.parents or meta.auto_field is None:
            raise ValueError("a plain insert is for a model of its own table with an auto key")
        fields = [f for f in meta.local_concrete_fields if f is not meta.auto_field]
        quote = connection.ops.quote_name
        sql = (
            f"INSERT INTO {quote(meta.db_table)} "  # noqa: S608
            f"({', '.join(quote(_column(f)) for f in fields)}) "
            f"VALUES ({', '.join(['%s'] * len(fields))})"
        )
        if connection.features.can_return_columns_from_insert:
            sql += f" RETURNING {quote(_column(meta.pk))}"
        built = _insert_sql[key] = (sql, fields)
    sql, fields = built
    if instance.pk is not None:
        raise ValueError("a plain insert stores a new row: this one has a key")
    params = [f.get_db_prep_save(f.pre_save(instance, True), connection) for f in fields]
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        if connection.features.can_return_columns_from_insert:
            pk = cursor.fetchone()[0]
        else:
            pk = connection.ops.last_insert_id(cursor, meta.db_table, _column(meta.pk))
    instance.pk = pk
    instance._state.adding = False
    instance._state.db = connection.alias
    return instance
