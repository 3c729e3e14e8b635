"""Nested schema evolution by each engine that evolves Iceberg tables, read by every engine.

The evolving engine (Spark with Iceberg's runtime, Trino, PyIceberg) creates the nested table
of ``test_nested_engines``, writes its rows, then changes fields inside it (``CHANGES``): adds
string fields at the end of structs (``payload.extra``; ``items.element.color``, a field of
the list's element struct), renames one (``payload.source`` to ``origin``) and drops one
(``payload.detail.note``); then it writes one more row that fills the new fields. Every engine
reads the evolved table: the old rows have null in the new fields and keep their values under
the new name (Iceberg reads by field id, not by name). PyIceberg checks the schema the catalog
serves: the renamed field keeps its id, the dropped one's is gone, the new fields take the
next ids.

DuckDB's iceberg extension alters no table (any ``ALTER TABLE`` is "Not implemented").
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

import pytest
from pyiceberg.catalog.rest import RestCatalog
from pyiceberg.table.update.schema import UpdateSchema
from pyiceberg.types import StringType

from tests.integration.engines.conftest import EngineError, Recorder, Seed
from tests.integration.engines.engines import DuckDBEngine
from tests.integration.engines.test_nested_engines import (
    READERS,
    ROWS,
    TABLE,
    Kind,
    ListOf,
    Made,
    Struct,
    as_read,
    create,
    engine_named,
    fresh_ids,
    insert,
    kind_of,
    loaded,
    read,
    served_fields,
)
from tests.integration.engines.test_smoke import run
from tests.integration.spark.conftest import spark  # noqa: F401  (the catalog's own Spark)

pytestmark = pytest.mark.timeout(300)


Value = dict[str, Any] | None
"""A struct's value: its fields' values by name, or null."""


def _moved(ids: dict[str, int], path: str, to: str | None) -> dict[str, int]:
    """Return ``ids`` with the field at ``path`` and those under it renamed to ``to``, or
    left out when ``to`` is None."""
    under = [p for p in ids if p == path or p.startswith(f"{path}.")]
    kept = {p: i for p, i in ids.items() if p not in under}
    if to is not None:
        kept.update({to + p.removeprefix(path): ids[p] for p in under})
    return kept


@dataclass(frozen=True)
class _AtField:
    """A change of field ``name`` of the struct at ``parent``."""

    parent: tuple[str, ...]
    name: str

    @property
    def path(self) -> str:
        return ".".join((*self.parent, self.name))


@dataclass(frozen=True)
class AddField(_AtField):
    """Add string field ``name`` at the end of the struct at ``parent``."""

    def apply(self, kind: Struct, value: Value, fill: str | None) -> tuple[Struct, Value]:
        added = None if fill is None else f"{self.name}{fill}"
        grown = Struct((*kind.fields, (self.name, "string")))
        return grown, None if value is None else {**value, self.name: added}

    def ids(self, ids: dict[str, int]) -> dict[str, int]:
        return {**ids, self.path: max(ids.values()) + 1}

    def statement(self, table: str, dialect: str) -> str:
        text = "STRING" if dialect == "spark" else "VARCHAR"
        return f"ALTER TABLE {table} ADD COLUMN {self.path} {text}"

    def update(self, update: UpdateSchema) -> None:
        update.add_column((*self.parent, self.name), StringType())


@dataclass(frozen=True)
class RenameField:
    """Rename field ``old`` of the struct at ``parent`` to ``new``."""

    parent: tuple[str, ...]
    old: str
    new: str

    @property
    def path(self) -> str:
        return ".".join((*self.parent, self.old))

    def apply(self, kind: Struct, value: Value, fill: str | None) -> tuple[Struct, Value]:
        def name(n: str) -> str:
            return self.new if n == self.old else n

        renamed = Struct(tuple((name(n), k) for n, k in kind.fields))
        return renamed, None if value is None else {name(n): v for n, v in value.items()}

    def ids(self, ids: dict[str, int]) -> dict[str, int]:
        return _moved(ids, self.path, ".".join((*self.parent, self.new)))

    def statement(self, table: str, dialect: str) -> str:
        return f"ALTER TABLE {table} RENAME COLUMN {self.path} TO {self.new}"

    def update(self, update: UpdateSchema) -> None:
        update.rename_column((*self.parent, self.old), self.new)


@dataclass(frozen=True)
class DropField(_AtField):
    """Drop field ``name`` of the struct at ``parent``."""

    def apply(self, kind: Struct, value: Value, fill: str | None) -> tuple[Struct, Value]:
        kept = Struct(tuple((n, k) for n, k in kind.fields if n != self.name))
        return kept, None if value is None else {n: v for n, v in value.items() if n != self.name}

    def ids(self, ids: dict[str, int]) -> dict[str, int]:
        return _moved(ids, self.path, None)

    def statement(self, table: str, dialect: str) -> str:
        return f"ALTER TABLE {table} DROP COLUMN {self.path}"

    def update(self, update: UpdateSchema) -> None:
        update.delete_column((*self.parent, self.name))


Change = AddField | RenameField | DropField

CHANGES: list[Change] = [
    AddField(("payload",), "extra"),
    AddField(("items", "element"), "color"),
    RenameField(("payload",), "source", "origin"),
    DropField(("payload", "detail"), "note"),
]
"""What every evolving engine does to the table, in this order."""

EVOLVERS = ["spark", "trino", "pyiceberg"]

NEW_ROW: dict[str, Any] = {
    "id": 5,
    "payload": {"source": "pos", "detail": {"code": 9, "note": "gone"}},
    "items": [{"sku": "e", "qty": 5, "price": Decimal("9.99")}],
    "attrs": {"w": 5},
}
"""The row written after the change, in the table's first shape (``evolved`` fills the new
fields with ``<name>-5``)."""


def _at(kind: Kind, value: Any, path: Sequence[str], change: Change, fill: str | None) -> Any:
    """Return ``(kind, value)`` with ``change`` made to the struct at ``path`` under ``kind``
    (through a list by its ``element``)."""
    if not path:
        assert isinstance(kind, Struct)
        return change.apply(kind, value, fill)
    step, rest = path[0], path[1:]
    if isinstance(kind, ListOf):
        assert step == "element"
        element, _ = _at(kind.element, None, rest, change, fill)
        if value is None:
            return ListOf(element), None
        return ListOf(element), [_at(kind.element, v, rest, change, fill)[1] for v in value]
    assert isinstance(kind, Struct)
    inner, inner_value = _at(
        dict(kind.fields)[step], None if value is None else value[step], rest, change, fill
    )
    changed = Struct(tuple((n, inner if n == step else k) for n, k in kind.fields))
    return changed, None if value is None else {**value, step: inner_value}


def evolved(kind: Struct, row: Value, fill: str | None) -> tuple[Struct, Value]:
    """Return ``kind`` and ``row`` after CHANGES; new fields hold ``<name><fill>`` or null."""
    for change in CHANGES:
        kind, row = _at(kind, row, change.parent, change, fill)
    return kind, row


def _evolved_row(row: dict[str, Any], fill: str | None) -> dict[str, Any]:
    _, changed = evolved(TABLE, row, fill)
    assert changed is not None
    return changed


EVOLVED, _ = evolved(TABLE, None, None)
NEW_EVOLVED_ROW = _evolved_row(NEW_ROW, "-5")
ALL_ROWS = [*(_evolved_row(r, None) for r in ROWS), NEW_EVOLVED_ROW]
"""The rows as every reader must read them after the change: those written before it, then
the one written after it."""


def expected_ids() -> dict[str, int]:
    """Return the evolved table's ids: the first ones (a renamed field keeps its own, a
    dropped one's goes), then one new id for each added field, in order."""
    ids = fresh_ids(TABLE)
    for change in CHANGES:
        ids = change.ids(ids)
    return ids


def evolve(request: pytest.FixtureRequest, evolver: str, name: str, recorder: Recorder) -> None:
    """Make CHANGES to table ``name`` with ``evolver`` (PyIceberg in one commit, an engine
    with a statement each)."""
    if evolver == "pyiceberg":
        with loaded(request, name).update_schema() as update:
            for change in CHANGES:
                change.update(update)
        return
    engine = engine_named(request, evolver)
    for change in CHANGES:
        run(engine, change.statement(f"cat.{name}", evolver), recorder)


@pytest.fixture(scope="module")
def made() -> Made:
    return Made()


@pytest.fixture
def evolved_table(
    request: pytest.FixtureRequest, made: Made, recorder: Recorder
) -> Callable[[str], str]:
    """Return the name of the nested table the given engine created, wrote and evolved."""

    def table_of(evolver: str) -> str:
        def make(name: str) -> None:
            create(request, evolver, name, TABLE, recorder)
            insert(request, evolver, name, TABLE, ROWS, recorder)
            evolve(request, evolver, name, recorder)
            insert(request, evolver, name, EVOLVED, [NEW_EVOLVED_ROW], recorder)

        return made.get(f"evolved by {evolver}", make)

    return table_of


@pytest.mark.parametrize("reader", READERS)
@pytest.mark.parametrize("evolver", EVOLVERS)
def test_every_engine_reads_the_nested_table_every_engine_evolved(
    request: pytest.FixtureRequest,
    evolved_table: Callable[[str], str],
    evolver: str,
    reader: str,
    recorder: Recorder,
) -> None:
    rows = read(request, reader, evolved_table(evolver), EVOLVED, recorder)
    assert rows == as_read(ALL_ROWS, evolver, reader)


@pytest.mark.parametrize("evolver", EVOLVERS)
def test_the_catalog_serves_the_evolved_nested_schema(
    request: pytest.FixtureRequest, evolved_table: Callable[[str], str], evolver: str
) -> None:
    schema = loaded(request, evolved_table(evolver)).schema()
    assert kind_of(schema.as_struct()) == EVOLVED
    fields = list(served_fields(schema.as_struct()))
    assert {path: field_id for path, field_id, _ in fields} == expected_ids()
    assert [path for path, _, required in fields if required] == ["attrs.key"]


def test_duckdb_alters_no_iceberg_table(
    duckdb: Any, seed: Seed, namespace: str, pyiceberg: RestCatalog, recorder: Recorder
) -> None:
    """DuckDB's iceberg extension refuses any ALTER TABLE itself, without asking the catalog
    for a change: it cannot evolve a nested table (when it can, it belongs in EVOLVERS)."""
    seed(namespace, "people", [])
    start = recorder.log.mark()
    with pytest.raises(EngineError, match="Not implemented Error: Alter Schema Entry"):
        DuckDBEngine(duckdb).sql(f"ALTER TABLE cat.{namespace}.people ADD COLUMN extra VARCHAR")
    assert [e for e in recorder.log.since(start) if e.method == "POST"] == []
    assert [f.name for f in pyiceberg.load_table(f"{namespace}.people").schema().fields] == [
        "id",
        "name",
    ]
