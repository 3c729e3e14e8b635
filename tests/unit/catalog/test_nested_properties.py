"""Random nested schemas and random evolution inside them keep Iceberg's id rules.

After every step: ids are unique in the table, below its next column id, and a field's id is
never one any earlier version gave out (a dropped field's id stays retired); the version
stored in a snapshot and read back is the same catalog; a refused step changes nothing.
"""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from catalog import Catalog, CatalogError, ColumnType, prepare
from catalog import commands as c
from catalog.descriptors.nested import walk
from catalog.snapshots import decode_snapshot, encode_snapshot
from tests.unit.catalog.helpers import catalog_with_default_zone, key

T = ColumnType
_NAMES = st.sampled_from(["A", "B", "C", "D", "E"])
_PLAIN = st.sampled_from([T.INT32, T.INT64, T.STRING, T.FLOAT32, T.BOOLEAN, T.DATE])


def _columns(depth: int) -> st.SearchStrategy[list[c.Column]]:
    """Lists of uniquely named fields, nested at most ``depth`` more levels."""
    return st.lists(_column(depth), min_size=1, max_size=4, unique_by=lambda col: col.name)


@st.composite
def _column(draw: st.DrawFn, depth: int) -> c.Column:
    name = draw(_NAMES)
    nullable = draw(st.booleans())
    kinds = ["plain"] if depth == 0 else ["plain", "struct", "array", "map"]
    kind = draw(st.sampled_from(kinds))
    if kind == "plain":
        return c.Column(name=name, type=draw(_PLAIN), nullable=nullable)
    if kind == "struct":
        fields = draw(_columns(depth - 1))
        return c.Column(name=name, type=T.STRUCT, nullable=nullable, fields=fields)
    inner = draw(_column(depth - 1)).model_copy(update={"name": "element"})
    if kind == "array":
        return c.Column(name=name, type=T.ARRAY, nullable=nullable, fields=[inner])
    map_key = c.Column(name="key", type=draw(_PLAIN), nullable=False)
    value = inner.model_copy(update={"name": "value"})
    return c.Column(name=name, type=T.MAP, nullable=nullable, fields=[map_key, value])


def _step(table: Any, choice: int, op: str, name: str) -> c.CommandBase | None:
    """Return a nested change of the field ``choice`` picks (None: nothing fits)."""
    fields = [(p, f) for p, f in walk(table.columns) if len(p) > 1]
    structs = [(p, f) for p, f in walk(table.columns) if f.type is T.STRUCT]
    if op == "add" and structs:
        path, _ = structs[choice % len(structs)]
        return c.AddColumns(table="EV", parent=path, columns=[c.Column(name=name, type=T.INT32)])
    if not fields:
        return None
    path, found = fields[choice % len(fields)]
    if op == "drop":
        return c.DropColumns(table="EV", fields=[path])
    if op == "rename":
        return c.RenameColumn(table="EV", column=path[0], path=path[1:], new_name=name)
    if op == "widen":
        return c.AlterColumn(table="EV", column=path[0], path=path[1:], type=T.INT64)
    return c.AlterColumn(table="EV", column=path[0], path=path[1:], nullable=not found.nullable)


_STEPS = st.lists(
    st.tuples(
        st.integers(0, 50),
        st.sampled_from(["add", "drop", "rename", "widen", "nullable"]),
        st.sampled_from(["A", "B", "X", "Y", "element"]),
    ),
    max_size=12,
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(columns=_columns(3), steps=_STEPS)
def test_random_nested_evolution_keeps_ids_unique_and_never_reused(
    columns: list[c.Column], steps: list[tuple[int, str, str]]
) -> None:
    columns = [col for col in columns if col.name != "ID"]
    create = c.CreateTable(name="EV", columns=[key(), *columns], primary_key=["ID"])
    cat: Catalog = prepare(catalog_with_default_zone(), [create]).catalog
    given_out = {f.id for _, f in walk(cat.table("PUBLIC", "EV").columns)}
    for choice, op, name in steps:
        table = cat.table("PUBLIC", "EV")
        command = _step(table, choice, op, name)
        if command is None:
            continue
        before = {f.id for _, f in walk(table.columns)}
        try:
            cat = prepare(cat, [command]).catalog
        except CatalogError:
            assert cat.table("PUBLIC", "EV") is table
            continue
        table = cat.table("PUBLIC", "EV")
        ids = [f.id for _, f in walk(table.columns)]
        assert len(ids) == len(set(ids))
        assert all(i < table.next_column_id for i in ids)
        new = set(ids) - before
        assert not new & given_out, "a retired id was given out again"
        given_out |= new
        assert decode_snapshot(encode_snapshot(cat)).digest() == cat.digest()
