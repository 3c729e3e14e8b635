"""Nested evolution through PyIceberg's ``update_schema``: files of every schema read as one.

Adding a field at the end of a struct, renaming, dropping, widening int to long inside a
struct and making a nested field optional become the catalog's nested evolution commands; the
ids the catalog keeps are those PyIceberg assigned. What the catalog cannot express is refused
with a 400 naming the field, and nothing changes.
"""

from __future__ import annotations

from typing import Any

import pyarrow as pa
import pytest
from pyiceberg.catalog.rest import RestCatalog
from pyiceberg.exceptions import BadRequestError
from pyiceberg.schema import Schema
from pyiceberg.table import Table
from pyiceberg.table.update import (
    AddSchemaUpdate,
    AssertCurrentSchemaId,
    SetCurrentSchemaUpdate,
)
from pyiceberg.types import (
    IntegerType,
    ListType,
    LongType,
    MapType,
    NestedField,
    StringType,
    StructType,
)

from api.client import CatalogClient
from catalog import ColumnType
from catalog.descriptors.nested import find_path
from tests.integration.iceberg.test_nested import catalog_ids, field_ids, read

pytestmark = pytest.mark.timeout(90)

SCHEMA = Schema(
    NestedField(1, "ID", LongType(), required=True),
    NestedField(
        2,
        "PAYLOAD",
        StructType(
            NestedField(5, "SOURCE", StringType(), required=False),
            NestedField(6, "N", IntegerType(), required=True),
            NestedField(7, "OLD", StringType(), required=False),
        ),
        required=False,
    ),
    NestedField(
        3,
        "ITEMS",
        ListType(8, StructType(NestedField(9, "QTY", IntegerType())), element_required=False),
        required=False,
    ),
    NestedField(
        4,
        "ATTRS",
        MapType(10, IntegerType(), 11, StructType(NestedField(12, "V", IntegerType())), False),
        required=False,
    ),
    identifier_field_ids=[1],
)

FIRST: list[dict[str, Any]] = [
    {
        "ID": 1,
        "PAYLOAD": {"SOURCE": "web", "N": 7, "OLD": "x"},
        "ITEMS": [{"QTY": 2}],
        "ATTRS": {5: {"V": 50}},
    },
    {"ID": 2, "PAYLOAD": None, "ITEMS": [], "ATTRS": {}},
]


def _created(iceberg: RestCatalog) -> Table:
    table = iceberg.create_table("PUBLIC.EV", SCHEMA)
    table.append(pa.Table.from_pylist(FIRST, schema=table.schema().as_arrow()))
    loaded: Table = iceberg.load_table("PUBLIC.EV")
    return loaded


def test_nested_fields_evolve_and_files_of_every_schema_read_as_the_new_one(
    iceberg: RestCatalog, client: CatalogClient
) -> None:
    table = _created(iceberg)
    first = table.current_snapshot()
    assert first is not None
    before = field_ids(table)
    last = table.metadata.last_column_id
    with table.update_schema() as update:
        update.add_column(("PAYLOAD", "ORIGIN"), StringType())
        update.add_column(("ITEMS", "element", "NOTE"), StringType())
        update.add_column(("ATTRS", "value", "W"), StructType(NestedField(-1, "Z", LongType())))
        update.rename_column("PAYLOAD.SOURCE", "SRC")
        update.delete_column("PAYLOAD.OLD")
        update.update_column("PAYLOAD.N", LongType(), required=False)
        update.update_column("ATTRS.value.V", LongType())
    evolved = iceberg.load_table("PUBLIC.EV")
    ids = field_ids(evolved)
    assert ids == catalog_ids(client, "EV")  # the ids PyIceberg gave are the catalog's
    assert {k: v for k, v in ids.items() if k in before or k == "PAYLOAD.SRC"} == {
        **{k: v for k, v in before.items() if k not in ("PAYLOAD.SOURCE", "PAYLOAD.OLD")},
        "PAYLOAD.SRC": before["PAYLOAD.SOURCE"],
    }
    assert (ids["PAYLOAD.ORIGIN"], ids["ITEMS.element.NOTE"], ids["ATTRS.value.W"]) == (
        last + 1,
        last + 2,
        last + 3,
    )
    assert ids["ATTRS.value.W.Z"] == last + 4 == evolved.metadata.last_column_id
    n = find_path(client.table("PUBLIC", "EV").columns, ("PAYLOAD", "N"))
    assert n is not None and (n.type, n.nullable) == (ColumnType.INT64, True)
    second = [
        {
            "ID": 3,
            "PAYLOAD": {"SRC": "app", "N": 2**40, "ORIGIN": "eu"},
            "ITEMS": [{"QTY": 1, "NOTE": "n"}],
            "ATTRS": {6: {"V": 2**40, "W": {"Z": 1}}},
        }
    ]
    evolved.append(pa.Table.from_pylist(second, schema=evolved.schema().as_arrow()))
    assert read(iceberg.load_table("PUBLIC.EV")) == [
        {
            "ID": 1,
            "PAYLOAD": {"SRC": "web", "N": 7, "ORIGIN": None},
            "ITEMS": [{"QTY": 2, "NOTE": None}],
            "ATTRS": {5: {"V": 50, "W": None}},
        },
        {"ID": 2, "PAYLOAD": None, "ITEMS": [], "ATTRS": {}},
        *second,
    ]
    # The first snapshot names the schema it was written with, still served.
    old = iceberg.load_table("PUBLIC.EV")
    written_with = old.schemas()[first.schema_id]
    assert written_with.find_field("PAYLOAD.SOURCE").field_id == before["PAYLOAD.SOURCE"]
    assert [row["ID"] for row in read(old, first.snapshot_id)] == [1, 2]


def test_a_nested_field_made_optional_and_an_element_made_optional(
    iceberg: RestCatalog, client: CatalogClient
) -> None:
    table = iceberg.create_table(
        "PUBLIC.REQ",
        Schema(
            NestedField(1, "ID", LongType(), required=True),
            NestedField(
                2,
                "TAGS",
                ListType(3, StringType(), element_required=True),
                required=True,
            ),
            identifier_field_ids=[1],
        ),
    )
    table.append(pa.Table.from_pylist([{"ID": 1, "TAGS": ["a"]}], schema=table.schema().as_arrow()))
    with table.update_schema() as update:
        update.make_column_optional("TAGS.element")
        update.make_column_optional("TAGS")
    evolved = iceberg.load_table("PUBLIC.REQ")
    tags = evolved.schema().find_field("TAGS")
    assert not tags.required and tags.field_type == ListType(3, StringType(), False)
    described = client.table("PUBLIC", "REQ")
    [element] = described.columns[1].fields
    assert element.nullable and described.columns[1].nullable
    evolved.append(
        pa.Table.from_pylist([{"ID": 2, "TAGS": [None, "b"]}], schema=evolved.schema().as_arrow())
    )
    assert read(iceberg.load_table("PUBLIC.REQ")) == [
        {"ID": 1, "TAGS": ["a"]},
        {"ID": 2, "TAGS": [None, "b"]},
    ]


def _commit_schema(iceberg: RestCatalog, table: Table, schema: Schema) -> None:
    """Commit ``schema`` as the table's new one, as a client whose checks allow it would."""
    iceberg.commit_table(
        table,
        requirements=(AssertCurrentSchemaId(current_schema_id=table.metadata.current_schema_id),),
        updates=(
            AddSchemaUpdate(schema_=schema.model_copy(update={"schema_id": 99})),
            SetCurrentSchemaUpdate(schema_id=-1),
        ),
    )


def _with_field(schema: Schema, top: int, field: NestedField) -> Schema:
    fields = [field if f.field_id == top else f for f in schema.fields]
    return Schema(*fields, identifier_field_ids=schema.identifier_field_ids)


def test_what_the_catalog_cannot_express_is_refused_by_path_and_changes_nothing(
    iceberg: RestCatalog, client: CatalogClient
) -> None:
    table = _created(iceberg)
    schema = table.schema()
    attrs = schema.find_field("ATTRS")
    assert isinstance(attrs.field_type, MapType)
    wider_key = MapType(
        attrs.field_type.key_id,
        LongType(),
        attrs.field_type.value_id,
        attrs.field_type.value_type,
        attrs.field_type.value_required,
    )
    payload = schema.find_field("PAYLOAD")
    required_payload = NestedField(2, "PAYLOAD", payload.field_type, required=True)
    n_id = schema.find_field("PAYLOAD.N").field_id
    assert isinstance(payload.field_type, StructType)
    reordered = StructType(*reversed(payload.field_type.fields))
    refusals = [
        (
            _with_field(schema, 4, NestedField(4, "ATTRS", wider_key, required=False)),
            "table EV: the key of map ATTRS cannot change its type",
        ),
        (
            Schema(
                schema.fields[0],
                required_payload,
                *schema.fields[2:],
                identifier_field_ids=[1, n_id],
            ),
            rf"identifier field PAYLOAD\.N \(id {n_id}\) is a nested field",
        ),
        (
            _with_field(schema, 2, NestedField(2, "PAYLOAD", reordered, required=False)),
            "cannot reorder the fields of struct PAYLOAD",
        ),
    ]
    version = client.versions().latest
    for asked, refusal in refusals:
        with pytest.raises(BadRequestError, match=refusal):
            _commit_schema(iceberg, table, asked)
    assert client.versions().latest == version
    assert iceberg.load_table("PUBLIC.EV").schema() == schema


def test_a_required_nested_field_for_rows_already_written_is_refused(
    iceberg: RestCatalog, client: CatalogClient
) -> None:
    table = _created(iceberg)
    update = table.update_schema(allow_incompatible_changes=True)
    update.add_column(("PAYLOAD", "MUST"), StringType(), required=True)
    with pytest.raises(BadRequestError, match=r"field PAYLOAD\.MUST must be nullable"):
        update.commit()
    update = iceberg.load_table("PUBLIC.EV").update_schema(allow_incompatible_changes=True)
    update.update_column("PAYLOAD.SOURCE", required=True)
    with pytest.raises(
        BadRequestError, match=r"cannot set NOT NULL on existing field PAYLOAD\.SOURCE"
    ):
        update.commit()
    assert iceberg.load_table("PUBLIC.EV").schema() == table.schema()
    assert catalog_ids(client, "EV") == field_ids(table)
