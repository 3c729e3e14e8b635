"""Nested tables on every engine: a struct holding a struct, a list of structs, a map.

Each engine that creates Iceberg tables (PyIceberg, Spark with Iceberg's runtime, Trino,
DuckDB) creates a table of ``TABLE`` through the catalog's Iceberg REST endpoint and writes
``ROWS`` into it: nulls at every level (a null struct, null fields, a null list element, a
null map value), empty lists and maps. Every engine, and the catalog's own Spark source
(``format("catalog")``), then reads the rows back, and PyIceberg checks the schema the catalog
serves: the same types, every field optional but the map's key, and fresh field ids in
Iceberg's order (whatever ids the engine proposed: Spark, Trino and DuckDB each number the
fields their own way).

A table is made once per creating engine, by the first test that needs it, and read by each
reader in a test of its own: the module's results are the matrix creator x reader.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

import pyarrow as pa
import pytest
from pyiceberg.catalog.rest import RestCatalog
from pyiceberg.table import Table
from pyiceberg.types import (
    DecimalType,
    IcebergType,
    IntegerType,
    ListType,
    LongType,
    MapType,
    StringType,
    StructType,
)
from pyspark.sql import SparkSession

from tests.integration.api.servers import RunningServer
from tests.integration.engines.conftest import Recorder
from tests.integration.engines.engines import DuckDBEngine, Engine, SparkEngine, TrinoEngine
from tests.integration.engines.test_smoke import run
from tests.integration.spark.conftest import spark  # noqa: F401  (the catalog's own Spark)

pytestmark = pytest.mark.timeout(300)

# --- the table's shape, in every engine's words ----------------------------------------------


@dataclass(frozen=True)
class Struct:
    """A struct type: its fields' names and kinds, in order."""

    fields: tuple[tuple[str, Kind], ...]

    def names(self) -> list[str]:
        return [name for name, _ in self.fields]


@dataclass(frozen=True)
class ListOf:
    element: Kind


@dataclass(frozen=True)
class MapOf:
    """A map from strings to ``value``."""

    value: Kind


Kind = str | Struct | ListOf | MapOf
"""A column's type: a scalar's name (a key of SCALARS), or a nested type."""

SCALARS: dict[str, dict[str, Any]] = {
    "bigint": {"spark": "BIGINT", "trino": "BIGINT", "duckdb": "BIGINT", "arrow": pa.int64()},
    "int": {"spark": "INT", "trino": "INTEGER", "duckdb": "INTEGER", "arrow": pa.int32()},
    "string": {"spark": "STRING", "trino": "VARCHAR", "duckdb": "VARCHAR", "arrow": pa.string()},
    "decimal": {
        "spark": "DECIMAL(10, 2)",
        "trino": "DECIMAL(10, 2)",
        "duckdb": "DECIMAL(10, 2)",
        "arrow": pa.decimal128(10, 2),
    },
}

DETAIL = Struct((("code", "int"), ("note", "string")))
PAYLOAD = Struct((("source", "string"), ("detail", DETAIL)))
ITEM = Struct((("sku", "string"), ("qty", "int"), ("price", "decimal")))
TABLE = Struct(
    (("id", "bigint"), ("payload", PAYLOAD), ("items", ListOf(ITEM)), ("attrs", MapOf("bigint")))
)

ROWS: list[dict[str, Any]] = [
    {
        "id": 1,
        "payload": {"source": "web", "detail": {"code": 7, "note": "ok"}},
        "items": [
            {"sku": "a", "qty": 1, "price": Decimal("1.50")},
            {"sku": "b", "qty": 2, "price": Decimal("0.25")},
        ],
        "attrs": {"x": 1, "y": 2},
    },
    {"id": 2, "payload": None, "items": [], "attrs": {}},
    {
        "id": 3,
        "payload": {"source": None, "detail": None},
        "items": [{"sku": "c", "qty": None, "price": None}, None],
        "attrs": {"z": None},
    },
    {
        "id": 4,
        "payload": {"source": "app", "detail": {"code": None, "note": None}},
        "items": None,
        "attrs": None,
    },
]
"""The rows every creating engine writes, as every reader must give them back."""

CREATORS = ["pyiceberg", "spark", "trino", "duckdb"]
READERS = ["pyiceberg", "spark", "trino", "duckdb", "source"]
"""``source`` is the catalog's own Spark source (``format("catalog")``), through its own API."""


def as_read(rows: list[dict[str, Any]], writer: str, reader: str) -> list[dict[str, Any]]:
    """Return ``rows`` as ``reader`` gives back what ``writer`` wrote.

    PyIceberg 0.12 turns a null list of structs into an empty one, both in the files it
    writes and in the rows it reads (apache/iceberg-python#3833: it rebuilds the list from
    its offsets without its null mask); every other engine keeps the null.
    """
    if "pyiceberg" not in (writer, reader):
        return rows
    return [{**r, "items": [] if r["items"] is None else r["items"]} for r in rows]


def sql_type(kind: Kind, dialect: str) -> str:
    """Return ``kind`` as ``dialect``'s SQL type (spark, trino or duckdb)."""
    if isinstance(kind, str):
        named: str = SCALARS[kind][dialect]
        return named
    if isinstance(kind, Struct):
        if dialect == "spark":
            return (
                "STRUCT<" + ", ".join(f"{n}: {sql_type(k, dialect)}" for n, k in kind.fields) + ">"
            )
        fields = ", ".join(f"{n} {sql_type(k, dialect)}" for n, k in kind.fields)
        return f"ROW({fields})" if dialect == "trino" else f"STRUCT({fields})"
    if isinstance(kind, ListOf):
        element = sql_type(kind.element, dialect)
        return {"spark": f"ARRAY<{element}>", "trino": f"ARRAY({element})"}.get(
            dialect, f"{element}[]"
        )
    value = sql_type(kind.value, dialect)
    key = SCALARS["string"][dialect]
    return f"MAP<{key}, {value}>" if dialect == "spark" else f"MAP({key}, {value})"


def sql_literal(value: Any, kind: Kind, dialect: str) -> str:
    """Return ``value`` of ``kind`` as a ``dialect`` expression (its type set by a CAST)."""
    if value is None:
        return "NULL"
    if isinstance(kind, str):
        return f"'{value}'" if kind == "string" else str(value)
    if isinstance(kind, Struct):
        values = [(n, sql_literal(value[n], k, dialect)) for n, k in kind.fields]
        if dialect == "spark":
            return "named_struct(" + ", ".join(f"'{n}', {v}" for n, v in values) + ")"
        if dialect == "trino":
            return "ROW(" + ", ".join(v for _, v in values) + ")"
        return "{" + ", ".join(f"'{n}': {v}" for n, v in values) + "}"
    if isinstance(kind, ListOf):
        elements = ", ".join(sql_literal(v, kind.element, dialect) for v in value)
        return {"spark": f"array({elements})", "trino": f"ARRAY[{elements}]"}.get(
            dialect, f"[{elements}]"
        )
    pairs = [(f"'{k}'", sql_literal(v, kind.value, dialect)) for k, v in value.items()]
    if dialect == "spark":
        return "map(" + ", ".join(f"{k}, {v}" for k, v in pairs) + ")"
    if dialect == "trino":
        keys = ", ".join(k for k, _ in pairs)
        return f"MAP(ARRAY[{keys}], ARRAY[{', '.join(v for _, v in pairs)}])"
    return "MAP {" + ", ".join(f"{k}: {v}" for k, v in pairs) + "}"


def arrow_type(kind: Kind) -> pa.DataType:
    if isinstance(kind, str):
        scalar: pa.DataType = SCALARS[kind]["arrow"]
        return scalar
    if isinstance(kind, Struct):
        return pa.struct([pa.field(n, arrow_type(k)) for n, k in kind.fields])
    if isinstance(kind, ListOf):
        return pa.list_(arrow_type(kind.element))
    return pa.map_(pa.string(), arrow_type(kind.value))


def canonical(value: Any, kind: Kind) -> Any:
    """Return a value as a reader gave it in ROWS's form: a struct as a dict by field name
    (whether the reader gives a dict or its values in order), a map as a dict (whether the
    reader gives a dict or key-value pairs), a decimal exact."""
    if value is None:
        return None
    if isinstance(kind, str):
        return Decimal(str(value)) if kind == "decimal" else value
    if isinstance(kind, Struct):
        if isinstance(value, dict):
            by_name = {str(k).lower(): v for k, v in value.items()}
            assert sorted(by_name) == sorted(kind.names()), (value, kind.names())
            return {n: canonical(by_name[n], k) for n, k in kind.fields}
        named = getattr(value, "_names", None)  # Trino's rows name their fields
        assert named is None or [str(n).lower() for n in named] == kind.names(), (value, kind)
        values = list(value)  # the Spark process's structs: their values in order
        assert len(values) == len(kind.fields), (value, kind.names())
        return {n: canonical(v, k) for (n, k), v in zip(kind.fields, values, strict=True)}
    if isinstance(kind, ListOf):
        return [canonical(v, kind.element) for v in value]
    pairs = value.items() if isinstance(value, dict) else value  # PyIceberg, Spark: pairs
    return {k: canonical(v, kind.value) for k, v in pairs}


def kind_of(served: IcebergType) -> Kind:
    """Return the kind of an Iceberg type as PyIceberg read it from the catalog."""
    if isinstance(served, StructType):
        return Struct(tuple((f.name, kind_of(f.field_type)) for f in served.fields))
    if isinstance(served, ListType):
        return ListOf(kind_of(served.element_type))
    if isinstance(served, MapType) and isinstance(served.key_type, StringType):
        return MapOf(kind_of(served.value_type))
    scalars: list[tuple[IcebergType, str]] = [
        (LongType(), "bigint"),
        (IntegerType(), "int"),
        (StringType(), "string"),
        (DecimalType(10, 2), "decimal"),
    ]
    return next((name for t, name in scalars if t == served), str(served))


def served_fields(served: IcebergType, path: str = "") -> Iterator[tuple[str, int, bool]]:
    """Yield (path, id, required) for every field under ``served``, depth first."""
    if isinstance(served, StructType):
        for f in served.fields:
            yield f"{path}{f.name}", f.field_id, f.required
            yield from served_fields(f.field_type, f"{path}{f.name}.")
    elif isinstance(served, ListType):
        yield f"{path}element", served.element_id, served.element_required
        yield from served_fields(served.element_type, f"{path}element.")
    elif isinstance(served, MapType):
        yield f"{path}key", served.key_id, True
        yield f"{path}value", served.value_id, served.value_required
        yield from served_fields(served.value_type, f"{path}value.")


def fresh_ids(kind: Struct) -> dict[str, int]:
    """Return the ids Iceberg assigns a new table's fields: a struct's own fields first, then
    each field's nested fields in order (a list's element, a map's key and value likewise)."""
    ids: dict[str, int] = {}

    def children(k: Kind, path: str) -> list[tuple[str, Kind]]:
        if isinstance(k, Struct):
            return [(f"{path}{n}", c) for n, c in k.fields]
        if isinstance(k, ListOf):
            return [(f"{path}element", k.element)]
        if isinstance(k, MapOf):
            return [(f"{path}key", "string"), (f"{path}value", k.value)]
        return []

    def assign(k: Kind, path: str) -> None:
        own = children(k, path)
        for p, _ in own:
            ids[p] = len(ids) + 1
        for p, c in own:
            assign(c, f"{p}.")

    assign(kind, "")
    return ids


# --- engines, tables, reads ------------------------------------------------------------------


def engine_named(request: pytest.FixtureRequest, name: str) -> Engine:
    if name == "duckdb":
        return DuckDBEngine(request.getfixturevalue("duckdb"))
    if name == "spark":
        return SparkEngine(request.getfixturevalue("spark_engine"))
    return TrinoEngine(request.getfixturevalue("trino_engine"))


def insert(
    request: pytest.FixtureRequest,
    writer: str,
    name: str,
    kind: Struct,
    rows: list[dict[str, Any]],
    recorder: Recorder,
) -> None:
    """Write ``rows`` into table ``name`` (namespace.table) with ``writer``, in one commit."""
    if writer == "pyiceberg":
        catalog: RestCatalog = request.getfixturevalue("pyiceberg")
        table = catalog.load_table(name)
        table.append(pa.Table.from_pylist(rows, schema=table.schema().as_arrow()))
        return
    casts = [
        ", ".join(
            f"CAST({sql_literal(r[n], k, writer)} AS {sql_type(k, writer)})" for n, k in kind.fields
        )
        for r in rows
    ]
    values = ", ".join(f"({c})" for c in casts)
    run(engine_named(request, writer), f"INSERT INTO cat.{name} VALUES {values}", recorder)


def create(
    request: pytest.FixtureRequest, creator: str, name: str, kind: Struct, recorder: Recorder
) -> None:
    """Create table ``name`` (namespace.table, the namespace made first) of ``kind``."""
    catalog: RestCatalog = request.getfixturevalue("pyiceberg")
    catalog.create_namespace(name.split(".")[0])
    if creator == "pyiceberg":
        catalog.create_table(name, pa.schema([pa.field(n, arrow_type(k)) for n, k in kind.fields]))
        return
    columns = ", ".join(f"{n} {sql_type(k, creator)}" for n, k in kind.fields)
    using = " USING iceberg" if creator == "spark" else ""
    run(engine_named(request, creator), f"CREATE TABLE cat.{name} ({columns}){using}", recorder)


def read(
    request: pytest.FixtureRequest, reader: str, name: str, kind: Struct, recorder: Recorder
) -> list[Any]:
    """Return table ``name``'s rows as ``reader`` reads them, in ROWS's form, by id."""
    if reader == "pyiceberg":
        catalog: RestCatalog = request.getfixturevalue("pyiceberg")
        rows: list[Any] = catalog.load_table(name).scan().to_arrow().to_pylist()
    elif reader == "source":
        session: SparkSession = request.getfixturevalue("spark")
        server: RunningServer = request.getfixturevalue("engine_server")
        namespace, table = name.split(".")
        source = session.read.format("catalog").option("catalog_url", server.url)
        rows = [r.asDict(recursive=True) for r in source.load(f'"{namespace}"."{table}"').collect()]
    else:
        statement = f"SELECT {', '.join(kind.names())} FROM cat.{name} ORDER BY id"
        answered = run(engine_named(request, reader), statement, recorder)
        rows = [dict(zip(kind.names(), r, strict=True)) for r in answered]
    return sorted((canonical(r, kind) for r in rows), key=lambda r: r["id"])


def loaded(request: pytest.FixtureRequest, name: str) -> Table:
    catalog: RestCatalog = request.getfixturevalue("pyiceberg")
    table: Table = catalog.load_table(name)
    return table


class Made:
    """The tables a module makes once for many tests: each one's name, or why making it failed."""

    def __init__(self) -> None:
        self._made: dict[str, str | BaseException] = {}

    def get(self, key: str, make: Callable[[str], None]) -> str:
        """Return table ``key``'s name (``namespace.t``), made by ``make(name)`` if it is not
        yet; fail the test with the first failure if making it failed."""
        if key not in self._made:
            name = f"ns_{uuid.uuid4().hex[:10]}.t"
            try:
                make(name)
                self._made[key] = name
            except (Exception, pytest.fail.Exception) as e:
                self._made[key] = e
                raise
        made = self._made[key]
        if isinstance(made, BaseException):
            pytest.fail(f"table {key} could not be made:\n{made}", pytrace=False)
        return made


@pytest.fixture(scope="module")
def made() -> Made:
    return Made()


@pytest.fixture
def nested(request: pytest.FixtureRequest, made: Made, recorder: Recorder) -> Callable[[str], str]:
    """Return the name of the nested table the given engine created and wrote ROWS into."""

    def table_of(creator: str) -> str:
        def make(name: str) -> None:
            create(request, creator, name, TABLE, recorder)
            insert(request, creator, name, TABLE, ROWS, recorder)

        return made.get(f"created by {creator}", make)

    return table_of


# --- the tests -------------------------------------------------------------------------------


@pytest.mark.parametrize("reader", READERS)
@pytest.mark.parametrize("creator", CREATORS)
def test_every_engine_reads_the_nested_rows_every_engine_wrote(
    request: pytest.FixtureRequest,
    nested: Callable[[str], str],
    creator: str,
    reader: str,
    recorder: Recorder,
) -> None:
    assert read(request, reader, nested(creator), TABLE, recorder) == as_read(ROWS, creator, reader)


@pytest.mark.parametrize("creator", CREATORS)
def test_the_catalog_serves_the_nested_schema_every_engine_created(
    request: pytest.FixtureRequest, nested: Callable[[str], str], creator: str
) -> None:
    schema = loaded(request, nested(creator)).schema()
    assert kind_of(schema.as_struct()) == TABLE
    fields = list(served_fields(schema.as_struct()))
    assert {path: field_id for path, field_id, _ in fields} == fresh_ids(TABLE)
    assert [path for path, _, required in fields if required] == ["attrs.key"]
