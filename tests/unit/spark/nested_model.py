"""A model of nested tables for the Spark source's tests: random schemas, rows and evolution.

``read_as`` says what a value written under one schema version reads as under another,
field by field through the ids, independently of the source's Arrow code: a field the
written version lacks reads as null, a dropped one is gone, a renamed one is under its new
name, a widened integer keeps its value. Rows are Python values as Arrow gives them for the
catalog's batch types (a map as a list of key-value pairs, a TIME as microseconds, a UUID as
its canonical text).
"""

from __future__ import annotations

import datetime as dt
import decimal
import random
import uuid
from collections.abc import Sequence
from typing import Any

from hypothesis import strategies as st

from catalog import ColumnType
from catalog import commands as c
from catalog.descriptors import ColumnDescriptor, TableDescriptor
from catalog.descriptors.nested import walk

T = ColumnType
TABLE = "EV"
_NAMES = st.sampled_from(["A", "B", "C", "D", "E"])
PLAIN: dict[ColumnType, dict[str, int]] = {
    T.INT32: {},
    T.INT64: {},
    T.STRING: {"length": 12},
    T.BOOLEAN: {},
    T.DATE: {},
    T.DECIMAL: {"precision": 10, "scale": 2},
    T.UUID: {},
    T.TIME: {"precision": 6},
}
"""The plain types of random fields, with their parameters."""


def plain(name: str, ctype: ColumnType, nullable: bool = True) -> c.Column:
    """Return a plain column definition of ``ctype`` with the model's parameters."""
    return c.Column(name=name, type=ctype, nullable=nullable, **PLAIN[ctype])


def nested_columns(depth: int) -> st.SearchStrategy[list[c.Column]]:
    """Lists of uniquely named columns or struct fields, nested at most ``depth`` more levels."""
    return st.lists(nested_column(depth), min_size=1, max_size=3, unique_by=lambda col: col.name)


@st.composite
def nested_column(draw: st.DrawFn, depth: int) -> c.Column:
    """A column of any type, nested at most ``depth`` levels below it."""
    name = draw(_NAMES)
    nullable = draw(st.booleans())
    kind = draw(st.sampled_from(["plain"] if depth == 0 else ["plain", "struct", "array", "map"]))
    if kind == "plain":
        return plain(name, draw(st.sampled_from(sorted(PLAIN))), nullable)
    if kind == "struct":
        fields = draw(nested_columns(depth - 1))
        return c.Column(name=name, type=T.STRUCT, nullable=nullable, fields=fields)
    inner = draw(nested_column(depth - 1)).model_copy(update={"name": "element"})
    if kind == "array":
        return c.Column(name=name, type=T.ARRAY, nullable=nullable, fields=[inner])
    key = plain("key", draw(st.sampled_from([T.INT32, T.STRING, T.DATE])), nullable=False)
    value = inner.model_copy(update={"name": "value"})
    return c.Column(name=name, type=T.MAP, nullable=nullable, fields=[key, value])


Step = tuple[int, str, str, ColumnType, bool]
"""A nested change: which field, what change, a name, an added field's type, and whether the
added field is a struct holding a NOT NULL field of that type (see ``step``)."""


def steps(max_size: int) -> st.SearchStrategy[list[Step]]:
    """Up to ``max_size`` random nested changes."""
    one = st.tuples(
        st.integers(0, 50),
        st.sampled_from(["add", "drop", "rename", "widen", "nullable"]),
        st.sampled_from(["A", "B", "X", "Y"]),
        st.sampled_from(sorted(PLAIN)),
        st.booleans(),
    )
    return st.lists(one, max_size=max_size)


def create(columns: Sequence[c.Column], table: str = TABLE) -> c.CreateTableCommand:
    """Return the CREATE TABLE of ``ID INT64`` (the key) and ``columns``."""
    key = c.Column(name="ID", type=T.INT64, nullable=False)
    kept = [col for col in columns if col.name != "ID"]
    return c.CreateTable(name=table, columns=[key, *kept], primary_key=["ID"])


def step(
    table: TableDescriptor, choice: int, op: str, name: str, ctype: ColumnType, wrapped: bool
) -> c.CommandBase | None:
    """Return the nested change ``op`` of the field ``choice`` picks (None: nothing fits).

    Only changes the catalog may take on a table with rows: added fields are nullable (an
    added struct may hold NOT NULL fields), widening is of INT32 fields to INT64, and a NOT
    NULL field may become nullable.
    """
    fields = [(p, f) for p, f in walk(table.columns) if len(p) > 1]
    if op == "add":  # to a struct, or to the table itself (the empty path)
        structs = [(), *(p for p, f in walk(table.columns) if f.type is T.STRUCT)]
        parent = structs[choice % len(structs)]
        added = plain(name, ctype)
        if wrapped:
            inner = (plain("Z", ctype, nullable=False),)
            added = c.Column(name=name, type=T.STRUCT, fields=inner)
        return c.AddColumns(table=table.name, parent=parent, columns=[added])
    if op == "widen":
        fields = [(p, f) for p, f in fields if f.type is T.INT32]
    if op == "nullable":
        fields = [(p, f) for p, f in fields if not f.nullable]
    if not fields:
        return None
    path, _ = fields[choice % len(fields)]
    column, rest = path[0], path[1:]
    if op == "drop":
        return c.DropColumns(table=table.name, fields=[path])
    if op == "rename":
        return c.RenameColumn(table=table.name, column=column, path=rest, new_name=name)
    if op == "widen":
        return c.AlterColumn(table=table.name, column=column, path=rest, type=T.INT64)
    return c.AlterColumn(table=table.name, column=column, path=rest, nullable=True)


def value(rng: random.Random, field: ColumnDescriptor) -> Any:
    """Return a random value of ``field`` (null at times when it is nullable)."""
    if field.nullable and rng.random() < 0.2:
        return None
    kind = field.type
    if kind is T.STRUCT:
        return {f.name: value(rng, f) for f in field.fields}
    if kind is T.ARRAY:
        return [value(rng, field.fields[0]) for _ in range(rng.choice([0, 1, 2, 3]))]
    if kind is T.MAP:
        key, item = field.fields
        keys = {_plain(rng, key) for _ in range(rng.choice([0, 1, 2, 3]))}
        return [(k, value(rng, item)) for k in sorted(keys, key=repr)]
    return _plain(rng, field)


def _plain(rng: random.Random, field: ColumnDescriptor) -> Any:
    kind = field.type
    if kind is T.INT32:
        return rng.randint(-(2**31), 2**31 - 1)
    if kind is T.INT64:
        return rng.randint(-(2**63), 2**63 - 1)
    if kind is T.STRING:
        return rng.choice(["", "a", "héllo", "x" * 12, "tab\t"])
    if kind is T.BOOLEAN:
        return rng.random() < 0.5
    if kind is T.DATE:
        return dt.date(2000, 1, 1) + dt.timedelta(days=rng.randint(0, 20_000))
    if kind is T.DECIMAL:
        return decimal.Decimal(rng.randint(-(10**9), 10**9)).scaleb(-2)
    if kind is T.UUID:
        return str(uuid.UUID(int=rng.getrandbits(128)))
    assert kind is T.TIME
    return rng.randint(0, 86_400_000_000 - 1)


def rows(
    rng: random.Random, columns: Sequence[ColumnDescriptor], start: int
) -> list[dict[str, Any]]:
    """Return a few random rows of ``columns``, keys (column ``ID``) from ``start`` on."""
    count = rng.choice([0, 1, 3, 6])
    return [
        {col.name: start + n if col.name == "ID" else value(rng, col) for col in columns}
        for n in range(count)
    ]


def read_as(written_value: Any, written: ColumnDescriptor, read: ColumnDescriptor) -> Any:
    """Return what ``written_value`` (of field ``written``) reads as, as field ``read``."""
    if written_value is None:
        return None
    if read.type is T.STRUCT:
        by_id = {f.id: f for f in written.fields}
        return {
            f.name: read_as(written_value[by_id[f.id].name], by_id[f.id], f)
            if f.id in by_id
            else None
            for f in read.fields
        }
    if read.type is T.ARRAY:
        (was,), (now,) = written.fields, read.fields
        return [read_as(v, was, now) for v in written_value]
    if read.type is T.MAP:
        (was_key, was_value), (key, item) = written.fields, read.fields
        return [(read_as(k, was_key, key), read_as(v, was_value, item)) for k, v in written_value]
    return written_value


def read_rows(
    written_rows: Sequence[dict[str, Any]],
    written: Sequence[ColumnDescriptor],
    read: Sequence[ColumnDescriptor],
) -> list[dict[str, Any]]:
    """Return rows written with ``written``'s columns as a read with ``read``'s gives them."""
    by_id = {col.id: col for col in written}
    return [
        {
            col.name: read_as(row[by_id[col.id].name], by_id[col.id], col)
            if col.id in by_id
            else None
            for col in read
        }
        for row in written_rows
    ]


def as_spark(value_: Any, field: ColumnDescriptor) -> Any:
    """Return a model value as Spark's ``Row.asDict(recursive=True)`` gives it (maps as dicts)."""
    if value_ is None:
        return None
    if field.type is T.STRUCT:
        return {f.name: as_spark(value_[f.name], f) for f in field.fields}
    if field.type is T.ARRAY:
        return [as_spark(v, field.fields[0]) for v in value_]
    if field.type is T.MAP:
        key, item = field.fields
        return {as_spark(k, key): as_spark(v, item) for k, v in value_}
    return value_
