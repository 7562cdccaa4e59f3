"""Reads whose SQL is compiled once per thread, for the few a chat turn makes before its
model request.

Django compiles a queryset's SQL every time it runs. For the small reads on a turn's path that
compiling costs several times the statement itself (reading a profile took 620 µs in process,
the statement about 60). A ``CompiledRead`` runs its queryset's compiler once, with marker
values where the call's values go, keeps the SQL and the compiler's converters, and binds each
call's values in the markers' places. The result is the model instances the queryset gives.

Only plain querysets of one model (``filter``, ``only``, ``order_by``, a slice) qualify, and the
values bound must be ints or strings: they reach the database adapter as they are. Plans are
kept per thread and database alias, since converters belong to the thread's connection.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass

from django.db import connections
from django.db.models import Model, QuerySet

# Values no real call passes: where each lands in the compiled parameters is where that
# call's value goes.
_INT_MARKER = -7_340_013_000
_STR_MARKER = "\x00compiled-read-marker-{}\x00"


@dataclass
class _Plan:
    sql: str
    params: list
    slots: list[tuple[int, int]]  # (index in params, index in the call's values)
    compiler: object
    converters: dict
    model: type[Model]
    names: list[str]
    start: int
    end: int

    def bind(self, values: tuple) -> list:
        params = list(self.params)
        for at, which in self.slots:
            params[at] = values[which]
        return params

    def instances(self, alias: str, rows: list) -> list[Model]:
        if self.converters:
            rows = self.compiler.apply_converters(rows, self.converters)
        return [self.model.from_db(alias, self.names, row[self.start : self.end]) for row in rows]


class CompiledRead:
    """``build(*values)`` returns the queryset; ``read(*values)`` its instances."""

    def __init__(self, build: Callable[..., QuerySet], *kinds: type):
        if any(kind not in (int, str) for kind in kinds):
            raise TypeError("a compiled read binds ints and strings only")
        self._build = build
        self._kinds = kinds
        self._local = threading.local()

    def read(self, *values, using: str = "default") -> list[Model]:
        for value, kind in zip(values, self._kinds, strict=True):
            if type(value) is not kind:
                raise TypeError(f"expected {kind.__name__}, got {type(value).__name__}")
        plans = self._local.__dict__.setdefault("plans", {})
        plan = plans.get(using)
        if plan is None:
            plan = plans[using] = self._compile(using)
        with connections[using].cursor() as cursor:
            cursor.execute(plan.sql, plan.bind(values))
            rows = cursor.fetchall()
        return plan.instances(using, rows)

    def first(self, *values, using: str = "default") -> Model | None:
        found = self.read(*values, using=using)
        return found[0] if found else None

    def _compile(self, using: str) -> _Plan:
        markers = [
            _INT_MARKER - n if kind is int else _STR_MARKER.format(n)
            for n, kind in enumerate(self._kinds)
        ]
        queryset = self._build(*markers)
        query = queryset.query
        if (
            query.select_related
            or query.annotations
            or query.extra
            or queryset._prefetch_related_lookups
        ):
            raise ValueError("a compiled read takes a plain queryset of one model")
        compiler = query.get_compiler(using)
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
