"""STRUCT, ARRAY and MAP columns as Iceberg's nested types, both ways, with the catalog's ids."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pyiceberg.schema import Schema, assign_fresh_schema_ids, index_by_id

from api.iceberg.creation import table_command
from api.iceberg.errors import IcebergError
from api.iceberg.evolution import schema_commands
from api.iceberg.metadata import table_metadata
from api.iceberg.models import IcebergSchema, StructField, TableMetadata
from api.iceberg.nested_types import column_of
from api.iceberg.types import NoCounterpartError, iceberg_type
from catalog import ColumnType
from catalog import commands as c
from catalog.catalog import Catalog
from catalog.commands.column_definitions import Column
from catalog.commands.iceberg_tables import IcebergTableSpec
from catalog.descriptors import TableDescriptor
from catalog.descriptors.nested import MAX_DEPTH, all_ids
from catalog.errors import ErrorCode, ValidationError
from catalog.prepare import prepare


def _created(*columns: Column, name: str = "T") -> TableDescriptor:
    key = Column(name="K", type=ColumnType.INT64, nullable=False)
    create = c.CreateTable(
        name=name, columns=[key, *columns], primary_key=["K"], iceberg=IcebergTableSpec()
    )
    return prepare(Catalog.initial(), [create]).catalog.table("PUBLIC", name)


def _served(table: TableDescriptor) -> TableMetadata:
    """Return the table's metadata as a client reads it: through its JSON."""
    metadata = table_metadata(table, "/w", 0)
    return TableMetadata.model_validate(json.loads(metadata.model_dump_json(by_alias=True)))


PAYLOAD = Column(
    name="PAYLOAD",
    type=ColumnType.STRUCT,
    fields=(
        Column(name="SOURCE", type=ColumnType.STRING, length=10),
        Column(
            name="ITEMS",
            type=ColumnType.ARRAY,
            fields=(
                Column(
                    name="element",
                    type=ColumnType.STRUCT,
                    nullable=False,
                    fields=(Column(name="PRICE", type=ColumnType.DECIMAL, precision=10, scale=2),),
                ),
            ),
        ),
    ),
)
ATTRS = Column(
    name="ATTRS",
    type=ColumnType.MAP,
    nullable=False,
    fields=(
        Column(name="key", type=ColumnType.STRING, nullable=False),
        Column(name="value", type=ColumnType.INT64),
    ),
)


def test_nested_columns_are_served_as_icebergs_nested_types_with_their_ids() -> None:
    table = _created(PAYLOAD, ATTRS)
    metadata = _served(table)
    key, payload, attrs = metadata.schemas[-1].fields
    assert (key.id, payload.id, attrs.id) == (1, 2, 3)  # the top-level fields first
    assert payload.type == {
        "type": "struct",
        "fields": [
            {"id": 4, "name": "SOURCE", "required": False, "type": "string"},
            {
                "id": 5,
                "name": "ITEMS",
                "required": False,
                "type": {
                    "type": "list",
                    "element-id": 6,
                    "element": {
                        "type": "struct",
                        "fields": [
                            {"id": 7, "name": "PRICE", "required": False, "type": "decimal(10, 2)"}
                        ],
                    },
                    "element-required": True,
                },
            },
        ],
    }
    assert attrs.required
    assert attrs.type == {
        "type": "map",
        "key-id": 8,
        "key": "string",
        "value-id": 9,
        "value": "long",
        "value-required": False,
    }
    assert metadata.last_column_id == 9 == table.next_column_id - 1
    parsed = Schema.model_validate(metadata.schemas[-1].model_dump(by_alias=True))
    assert parsed.highest_field_id == metadata.last_column_id
    assert parsed.find_field("PAYLOAD.ITEMS.element.PRICE").field_id == 7
    assert assign_fresh_schema_ids(parsed) == parsed  # numbered as Iceberg numbers on create


def test_a_nested_time_finer_than_microseconds_is_named_by_its_path() -> None:
    at = Column(name="AT", type=ColumnType.TIMESTAMP, precision=9)
    holder = Column(name="S", type=ColumnType.STRUCT, fields=(at,))
    table = _created(holder)
    with pytest.raises(NoCounterpartError, match=r"field S\.AT: TIMESTAMP\(9\) has no Iceberg"):
        iceberg_type(table.columns[1])
    with pytest.raises(IcebergError, match=r"column S: field S\.AT: TIMESTAMP\(9\)"):
        table_metadata(table, "/w", 0)


@pytest.mark.parametrize(
    ("type_", "refusal"),
    [
        ({"type": "list", "element": "int"}, "the element needs element-id"),
        ({"type": "list", "element-id": 5}, "the type needs its element"),
        ({"type": "map", "key-id": 5, "key": "string", "value": "int"}, "value needs value-id"),
        ({"type": "struct", "fields": "A"}, "a struct type needs its fields"),
        ({"type": "struct", "fields": [{"id": 5}]}, "a struct's field cannot be read: name"),
        ({"type": "list", "element-id": 5, "element": 7}, "the element's type is a name"),
        (
            {"type": "list", "element-id": 5, "element": "int", "element-required": "no"},
            "element-required is true or false",
        ),
        ({"type": "list", "element-id": 5, "element": "fixed[2]"}, r"field P\.element: the Ice"),
    ],
)
def test_a_nested_type_object_that_cannot_be_read_is_refused_by_path(
    type_: dict[str, Any], refusal: str
) -> None:
    field = StructField(id=2, name="P", required=False, type=type_)
    with pytest.raises(IcebergError, match=refusal):
        column_of("T", field)


def test_a_struct_without_fields_and_a_field_too_deep_are_refused() -> None:
    empty = StructField(id=2, name="P", required=False, type={"type": "struct", "fields": []})
    with pytest.raises(ValidationError, match="a STRUCT needs at least one field"):
        column_of("T", empty)
    deep: Any = "int"
    for level in range(MAX_DEPTH + 5):
        deep = {"type": "list", "element-id": 100 + level, "element": deep}
    with pytest.raises(ValidationError) as refused:
        column_of("T", StructField(id=2, name="P", required=False, type=deep))
    assert refused.value.code is ErrorCode.NESTED_TOO_DEEP


# Types whose Iceberg form reads back as exactly the same catalog column.
_PLAIN: list[dict[str, Any]] = [
    {"type": ColumnType.BOOLEAN},
    {"type": ColumnType.INT32},
    {"type": ColumnType.INT64},
    {"type": ColumnType.FLOAT32},
    {"type": ColumnType.FLOAT64},
    {"type": ColumnType.DECIMAL, "precision": 12, "scale": 3},
    {"type": ColumnType.DECIMAL, "precision": 38, "scale": 0},
    {"type": ColumnType.STRING},
    {"type": ColumnType.BYTES},
    {"type": ColumnType.DATE},
    {"type": ColumnType.TIME, "precision": 6},
    {"type": ColumnType.TIMESTAMP, "precision": 6},
    {"type": ColumnType.TIMESTAMP_TZ, "precision": 6},
    {"type": ColumnType.UUID},
]
_NAMES = st.sampled_from(["A", "B", "C", "D", "E", "lower", "Mixed_1", "with space"])


@st.composite
def _columns(draw: st.DrawFn, name: str, depth: int, nullable: bool | None = None) -> Column:
    if nullable is None:
        nullable = draw(st.booleans())
    kinds = ["plain", "struct", "array", "map"] if depth < 5 else ["plain"]
    kind = draw(st.sampled_from(kinds))
    if kind == "plain":
        return Column(name=name, nullable=nullable, **draw(st.sampled_from(_PLAIN)))
    if kind == "array":
        element = draw(_columns("element", depth + 1))
        return Column(name=name, type=ColumnType.ARRAY, nullable=nullable, fields=(element,))
    if kind == "map":
        key = Column(name="key", nullable=False, **draw(st.sampled_from(_PLAIN)))
        value = draw(_columns("value", depth + 1))
        return Column(name=name, type=ColumnType.MAP, nullable=nullable, fields=(key, value))
    names = draw(st.lists(_NAMES, min_size=1, max_size=4, unique=True))
    fields = tuple(draw(_columns(n, depth + 1)) for n in names)
    return Column(name=name, type=ColumnType.STRUCT, nullable=nullable, fields=fields)


@st.composite
def _tables(draw: st.DrawFn) -> list[Column]:
    names = draw(st.lists(_NAMES, min_size=1, max_size=4, unique=True))
    return [draw(_columns(n, 1)) for n in names]


@settings(max_examples=60, deadline=None)
@given(_tables())
def test_a_served_schema_reads_back_as_the_same_columns_with_the_same_ids(
    columns: list[Column],
) -> None:
    table = _created(*columns)
    metadata = _served(table)
    schema = metadata.schemas[-1]
    # What an engine parses: every id the catalog gave, the last one last-column-id.
    parsed = Schema.model_validate(schema.model_dump(by_alias=True))
    assert set(index_by_id(parsed)) == all_ids(table.columns)
    assert metadata.last_column_id == table.next_column_id - 1 == parsed.highest_field_id
    assert assign_fresh_schema_ids(parsed) == parsed  # numbered as Iceberg numbers on create
    # Kept as they are (a register) and numbered afresh (a create): the same columns.
    kept = table_command(
        "PUBLIC",
        "KEPT",
        schema,
        IcebergTableSpec(),
        {},
        column_ids=[f.id for f in schema.fields],
        last_column_id=metadata.last_column_id,
    )
    fresh = table_command("PUBLIC", "FRESH", schema, IcebergTableSpec(), {})
    cat = prepare(Catalog.initial(), [kept, fresh]).catalog
    for name in ("KEPT", "FRESH"):
        again = cat.table("PUBLIC", name)
        assert again.columns == table.columns
        assert again.next_column_id == table.next_column_id
    # The same schema sent back changes nothing.
    assert schema_commands("PUBLIC", table, schema) == []


def test_a_registered_schema_keeps_ids_the_catalog_would_not_give() -> None:
    fields = [
        StructField(id=7, name="K", required=True, type="long"),
        StructField(
            id=3,
            name="M",
            required=False,
            type={
                "type": "map",
                "key-id": 40,
                "key": "string",
                "value-id": 12,
                "value": {
                    "type": "struct",
                    "fields": [{"id": 30, "name": "V", "required": True, "type": "int"}],
                },
                "value-required": True,
            },
        ),
    ]
    schema = IcebergSchema(schema_id=4, identifier_field_ids=[7], fields=fields)
    command = table_command(
        "PUBLIC", "R", schema, IcebergTableSpec(), {}, column_ids=[7, 3], last_column_id=41
    )
    table = prepare(Catalog.initial(), [command]).catalog.table("PUBLIC", "R")
    served = table_metadata(table, "/w", 0).schemas[-1]
    assert served.fields == fields
    assert table.next_column_id == 42


@pytest.mark.parametrize(
    ("identifiers", "refusal"),
    [
        ([1, 5], r"identifier field S\.X \(id 5\) is a nested field"),
        ([9], "identifier field ids 9 are not fields of the schema"),
    ],
)
def test_identifier_fields_are_top_level_fields(identifiers: list[int], refusal: str) -> None:
    struct = {"type": "struct", "fields": [{"id": 5, "name": "X", "required": True, "type": "int"}]}
    fields = [
        StructField(id=1, name="K", required=True, type="long"),
        StructField(id=2, name="S", required=True, type=struct),
    ]
    schema = IcebergSchema(identifier_field_ids=identifiers, fields=fields)
    with pytest.raises(IcebergError, match=refusal):
        table_command("PUBLIC", "T", schema, IcebergTableSpec(), {})


def test_a_field_id_repeated_at_any_depth_is_refused() -> None:
    struct = {"type": "struct", "fields": [{"id": 1, "name": "X", "required": True, "type": "int"}]}
    fields = [
        StructField(id=1, name="K", required=True, type="long"),
        StructField(id=2, name="S", required=True, type=struct),
    ]
    with pytest.raises(IcebergError, match="the schema repeats a field id"):
        table_command("PUBLIC", "T", IcebergSchema(fields=fields), IcebergTableSpec(), {})


def _renumbered(type_: Any, ids: dict[int, int]) -> Any:
    """Return an Iceberg type with every field id mapped through ``ids``."""
    if not isinstance(type_, dict):
        return type_
    if type_["type"] == "struct":
        return {**type_, "fields": [_renumbered_field(f, ids) for f in type_["fields"]]}
    if type_["type"] == "list":
        element = _renumbered(type_["element"], ids)
        return {**type_, "element-id": ids[type_["element-id"]], "element": element}
    key, value = _renumbered(type_["key"], ids), _renumbered(type_["value"], ids)
    return {
        **type_,
        "key-id": ids[type_["key-id"]],
        "key": key,
        "value-id": ids[type_["value-id"]],
        "value": value,
    }


def _renumbered_field(field: dict[str, Any], ids: dict[int, int]) -> dict[str, Any]:
    return {**field, "id": ids[field["id"]], "type": _renumbered(field["type"], ids)}


@settings(max_examples=100, deadline=None)
@given(_tables(), st.randoms(use_true_random=False))
def test_any_ids_of_an_iceberg_schema_are_kept_through_the_catalog(
    columns: list[Column], random: Any
) -> None:
    table = _created(*columns)
    served = table_metadata(table, "/w", 0).schemas[-1].model_dump(by_alias=True)
    old = sorted(all_ids(table.columns))
    new = random.sample(range(1, 3 * len(old) + 1), len(old))
    ids = dict(zip(old, new, strict=True))
    schema = IcebergSchema.model_validate(
        {
            **served,
            "identifier-field-ids": [ids[i] for i in served["identifier-field-ids"]],
            "fields": [_renumbered_field(f, ids) for f in served["fields"]],
        }
    )
    command = table_command(
        "PUBLIC",
        "R",
        schema,
        IcebergTableSpec(),
        {},
        column_ids=[f.id for f in schema.fields],
        last_column_id=max(new),
    )
    registered = prepare(Catalog.initial(), [command]).catalog.table("PUBLIC", "R")
    metadata = _served(registered)
    assert metadata.schemas[-1].fields == schema.fields
    assert metadata.schemas[-1].identifier_field_ids == schema.identifier_field_ids
    assert metadata.last_column_id == max(new)
