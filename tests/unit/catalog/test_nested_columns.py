"""STRUCT, ARRAY and MAP columns: their shapes, ids, limits and evolution inside them."""

from __future__ import annotations

from typing import Any

import pytest

from catalog import Catalog, ColumnType, ErrorCode
from catalog import commands as c
from catalog.change_words import describe
from catalog.commands.column_definitions import MAX_COLUMNS
from catalog.descriptors import ColumnDescriptor
from catalog.descriptors.nested import MAX_DEPTH, field_count, find_path, path_words, walk
from catalog.diff import ChangeKind, diff
from catalog.marshalling import encode_entries
from tests.unit.catalog.helpers import (
    apply,
    bad_shape,
    catalog_with_default_zone,
    entry_types,
    key,
    refused,
    run,
)

T = ColumnType


def field(name: str, ctype: ColumnType, *fields: c.Column, **kw: Any) -> c.Column:
    """Return a column definition with nested ``fields``."""
    return c.Column(name=name, type=ctype, fields=fields, **kw)


def payload() -> c.Column:
    """PAYLOAD STRUCT<SOURCE STRING(10), N INT32, ITEMS ARRAY<STRUCT<SKU, PRICE NOT NULL>>>."""
    item = field(
        "element",
        T.STRUCT,
        field("SKU", T.STRING),
        field("PRICE", T.DECIMAL, precision=10, scale=2, nullable=False),
    )
    return field(
        "PAYLOAD",
        T.STRUCT,
        field("SOURCE", T.STRING, length=10),
        field("N", T.INT32),
        field("ITEMS", T.ARRAY, item),
    )


def attrs() -> c.Column:
    """ATTRS MAP<STRING NOT NULL, INT32>."""
    return field("ATTRS", T.MAP, field("key", T.STRING, nullable=False), field("value", T.INT32))


def events_table() -> Catalog:
    """Return a catalog with table EV (ID, PAYLOAD, ATTRS)."""
    create = c.CreateTable(name="EV", columns=[key(), payload(), attrs()], primary_key=["ID"])
    return apply(catalog_with_default_zone(), create)


def at(cat: Catalog, *path: str) -> ColumnDescriptor:
    """Return the field of EV at ``path``."""
    found = find_path(cat.table("PUBLIC", "EV").columns, path)
    assert found is not None, path_words(path)
    return found


def test_every_nested_field_has_its_own_id_numbered_as_iceberg_numbers_them() -> None:
    table = events_table().table("PUBLIC", "EV")
    ids = {path_words(p): f.id for p, f in walk(table.columns)}
    assert ids == {
        "ID": 0,
        "PAYLOAD": 1,
        "ATTRS": 2,
        "PAYLOAD.SOURCE": 3,
        "PAYLOAD.N": 4,
        "PAYLOAD.ITEMS": 5,
        "PAYLOAD.ITEMS.element": 6,
        "PAYLOAD.ITEMS.element.SKU": 7,
        "PAYLOAD.ITEMS.element.PRICE": 8,
        "ATTRS.key": 9,
        "ATTRS.value": 10,
    }
    assert table.next_column_id == 11
    assert field_count(table.columns) == 11


@pytest.mark.parametrize(
    ("column", "words"),
    [
        (lambda: field("S", T.STRUCT), "a STRUCT needs at least one field"),
        (
            lambda: field("S", T.STRUCT, field("A", T.INT32), field("A", T.INT64)),
            "two fields named A",
        ),
        (lambda: field("L", T.ARRAY, field("item", T.INT32)), "exactly the field(s) element"),
        (lambda: field("L", T.ARRAY), "exactly the field(s) element"),
        (lambda: field("M", T.MAP, field("value", T.INT32)), "exactly the field(s) key, value"),
        (
            lambda: field("M", T.MAP, field("key", T.STRING), field("value", T.INT32)),
            "key cannot be null",
        ),
        (lambda: field("X", T.INT32, field("A", T.INT32)), "an INT32 has no fields"),
        (lambda: field("S", T.STRUCT, field("A", T.INT32, default=1)), "takes no default"),
    ],
)
def test_a_malformed_nested_column_is_refused_in_words(column: Any, words: str) -> None:
    error = bad_shape(
        lambda: c.CreateTable(name="T", columns=[key(), column()], primary_key=["ID"])
    )
    assert words in error.message


def test_a_nested_type_takes_no_default() -> None:
    error = bad_shape(lambda: field("S", T.STRUCT, field("A", T.INT32), default="x"))
    assert "takes no default" in error.message


def test_a_field_deeper_than_the_limit_is_refused_naming_its_path() -> None:
    inner = field("LEAF", T.INT32)
    for depth in range(MAX_DEPTH):
        inner = field(f"S{depth}", T.STRUCT, inner)
    create = c.CreateTable(name="DEEP", columns=[key(), inner], primary_key=["ID"])
    error = refused(catalog_with_default_zone(), ErrorCode.NESTED_TOO_DEEP, create)
    assert f"{MAX_DEPTH + 1} levels deep" in error.message
    assert error.message.startswith(f"field S{MAX_DEPTH - 1}.S{MAX_DEPTH - 2}.")


def test_nested_fields_count_toward_the_column_limit() -> None:
    wide = field("W", T.STRUCT, *(field(f"F{i}", T.INT32) for i in range(MAX_COLUMNS - 1)))
    create = c.CreateTable(name="WIDE", columns=[key(), wide], primary_key=["ID"])
    refused(catalog_with_default_zone(), ErrorCode.TOO_MANY_COLUMNS, create)


def test_keys_and_indexes_take_plain_columns_only() -> None:
    struct_key = field("K", T.STRUCT, field("A", T.INT32), nullable=False)
    create = lambda: c.CreateTable(name="T", columns=[struct_key], primary_key=["K"])  # noqa: E731
    error = bad_shape(create, ErrorCode.UNSUPPORTED_CHANGE)
    assert "column K is a STRUCT; a primary key takes only" in error.message
    index = c.CreateIndex(table="EV", name="BY_ATTRS", columns=["ATTRS"])
    assert "an index" in refused(events_table(), ErrorCode.UNSUPPORTED_CHANGE, index).message


def test_a_field_added_to_a_struct_takes_new_ids_and_the_entry_carries_it_alone() -> None:
    cat = events_table()
    add = c.AddColumns(
        table="EV",
        parent=["PAYLOAD", "ITEMS", "element"],
        columns=[field("TAGS", T.ARRAY, field("element", T.STRING))],
    )
    prepared = run(cat, add)
    assert entry_types(prepared) == ["new_nested_fields"]
    cat = prepared.catalog
    assert (
        at(cat, "PAYLOAD", "ITEMS", "element", "TAGS").id,
        at(cat, "PAYLOAD", "ITEMS", "element", "TAGS", "element").id,
    ) == (11, 12)
    assert cat.table("PUBLIC", "EV").next_column_id == 13
    assert describe(prepared.entries, events_table(), cat) == [
        "added column PAYLOAD.ITEMS.element.TAGS to PUBLIC.EV"
    ]


def test_one_field_added_to_a_struct_of_a_thousand_is_a_small_entry() -> None:
    wide = field(
        "W", T.STRUCT, *(field(f"FIELD_{i:04d}", T.STRING, length=40) for i in range(1000))
    )
    cat = apply(
        catalog_with_default_zone(),
        c.CreateTable(name="EV", columns=[key(), wide], primary_key=["ID"]),
    )
    prepared = run(cat, c.AddColumns(table="EV", parent=["W"], columns=[field("EXTRA", T.INT32)]))
    assert len(encode_entries(prepared.entries)) < 200
    (change,) = diff(cat, prepared.catalog)
    (column,) = change.columns
    assert (column.name, column.change) == ("W.EXTRA", ChangeKind.ADDED)


def test_a_dropped_nested_field_is_gone_and_its_id_is_never_given_again() -> None:
    cat = apply(events_table(), c.DropColumns(table="EV", fields=[["PAYLOAD", "SOURCE"]]))
    assert [f.name for f in at(cat, "PAYLOAD").fields] == ["N", "ITEMS"]
    cat = apply(
        cat, c.AddColumns(table="EV", parent=["PAYLOAD"], columns=[field("SOURCE", T.STRING)])
    )
    assert at(cat, "PAYLOAD", "SOURCE").id == 11


@pytest.mark.parametrize(
    ("path", "words"),
    [
        (["PAYLOAD", "ITEMS", "element"], "drop PAYLOAD.ITEMS itself"),
        (["ATTRS", "key"], "drop ATTRS itself"),
    ],
)
def test_the_fields_of_arrays_and_maps_go_only_with_them(path: list[str], words: str) -> None:
    error = refused(
        events_table(), ErrorCode.UNSUPPORTED_CHANGE, c.DropColumns(table="EV", fields=[path])
    )
    assert words in error.message


def test_a_struct_keeps_at_least_one_field() -> None:
    drop = c.DropColumns(
        table="EV",
        fields=[["PAYLOAD", "ITEMS", "element", "SKU"], ["PAYLOAD", "ITEMS", "element", "PRICE"]],
    )
    error = refused(events_table(), ErrorCode.UNSUPPORTED_CHANGE, drop)
    assert "drop the struct itself" in error.message


def test_a_missing_nested_field_is_not_found_unless_if_exists() -> None:
    drop = c.DropColumns(table="EV", fields=[["PAYLOAD", "NOPE"]])
    assert "PAYLOAD.NOPE" in refused(events_table(), ErrorCode.COLUMN_NOT_FOUND, drop).message
    quiet = c.DropColumns(table="EV", fields=[["PAYLOAD", "NOPE"]], if_exists=True)
    assert not run(events_table(), quiet).entries


def test_a_nested_field_is_renamed_widened_and_made_nullable_keeping_its_id() -> None:
    cat = events_table()
    cat = apply(
        cat, c.RenameColumn(table="EV", column="PAYLOAD", path=["SOURCE"], new_name="ORIGIN")
    )
    cat = apply(cat, c.AlterColumn(table="EV", column="PAYLOAD", path=["N"], type=T.INT64))
    cat = apply(cat, c.AlterColumn(table="EV", column="PAYLOAD", path=["ORIGIN"], length=20))
    price = ["ITEMS", "element", "PRICE"]
    prepared = run(cat, c.AlterColumn(table="EV", column="PAYLOAD", path=price, nullable=True))
    assert entry_types(prepared) == ["alter_nested_field"]
    cat = prepared.catalog
    assert (at(cat, "PAYLOAD", "ORIGIN").id, at(cat, "PAYLOAD", "ORIGIN").length) == (3, 20)
    assert (at(cat, "PAYLOAD", "N").id, at(cat, "PAYLOAD", "N").type) == (4, T.INT64)
    assert at(cat, "PAYLOAD", "ITEMS", "element", "PRICE").nullable
    assert cat.table("PUBLIC", "EV").schema_version == 5


@pytest.mark.parametrize(
    ("command", "code", "words"),
    [
        (
            c.AlterColumn(table="EV", column="PAYLOAD", path=["N"], type=T.INT16),
            ErrorCode.UNSUPPORTED_CHANGE,
            "cannot narrow",
        ),
        (
            c.AlterColumn(table="EV", column="PAYLOAD", path=["N"], nullable=False),
            ErrorCode.UNSUPPORTED_CHANGE,
            "NOT NULL",
        ),
        (
            c.AlterColumn(table="EV", column="ATTRS", path=["key"], length=10),
            ErrorCode.UNSUPPORTED_CHANGE,
            "map's key",
        ),
        (
            c.AlterColumn(table="EV", column="ATTRS", path=["key"], nullable=True),
            ErrorCode.UNSUPPORTED_CHANGE,
            "map's key",
        ),
        (
            c.AlterColumn(table="EV", column="PAYLOAD", path=["N"], default=1),
            ErrorCode.VALIDATION_ERROR,
            "no default",
        ),
        (
            c.RenameColumn(table="EV", column="ATTRS", path=["value"], new_name="V"),
            ErrorCode.UNSUPPORTED_CHANGE,
            "keep their names",
        ),
        (
            c.RenameColumn(table="EV", column="PAYLOAD", path=["N"], new_name="SOURCE"),
            ErrorCode.COLUMN_EXISTS,
            "PAYLOAD.SOURCE already exists",
        ),
        (
            c.AddColumns(table="EV", parent=["PAYLOAD"], columns=[field("N", T.INT32)]),
            ErrorCode.COLUMN_EXISTS,
            "PAYLOAD.N already exists",
        ),
        (
            c.AddColumns(
                table="EV", parent=["PAYLOAD"], columns=[field("M", T.INT32, nullable=False)]
            ),
            ErrorCode.UNSUPPORTED_CHANGE,
            "must be nullable",
        ),
        (
            c.AddColumns(table="EV", parent=["PAYLOAD", "ITEMS"], columns=[field("M", T.INT32)]),
            ErrorCode.UNSUPPORTED_CHANGE,
            "PAYLOAD.ITEMS.element",
        ),
        (
            c.AddColumns(table="EV", parent=["NOPE"], columns=[field("M", T.INT32)]),
            ErrorCode.COLUMN_NOT_FOUND,
            "field NOPE not found",
        ),
    ],
)
def test_nested_changes_are_refused_as_top_level_ones_are(
    command: Any, code: ErrorCode, words: str
) -> None:
    assert words in refused(events_table(), code, command).message


def test_dropping_a_column_and_a_field_inside_it_drops_the_column_once() -> None:
    drop = c.DropColumns(table="EV", columns=["PAYLOAD"], fields=[["PAYLOAD", "N"]])
    prepared = run(events_table(), drop)
    (entry,) = prepared.entries
    assert entry.model_dump()["column_ids"] == (1,)
    assert [col.name for col in prepared.catalog.table("PUBLIC", "EV").columns] == ["ID", "ATTRS"]


def test_nested_changes_diff_by_path_and_name_what_changed() -> None:
    before = events_table()
    after = apply(
        before,
        c.RenameColumn(table="EV", column="PAYLOAD", path=["SOURCE"], new_name="ORIGIN"),
        c.DropColumns(table="EV", fields=[["PAYLOAD", "ITEMS", "element", "SKU"]]),
    )
    (change,) = diff(before, after)
    found = {(col.name, col.change) for col in change.columns}
    assert found == {
        ("PAYLOAD.ORIGIN", ChangeKind.ALTERED),
        ("PAYLOAD.ITEMS.element.SKU", ChangeKind.DROPPED),
    }


def test_a_definition_nested_hundreds_deep_is_refused_before_it_is_read() -> None:
    raw: dict[str, Any] = {"name": "LEAF", "type": "INT32"}
    for depth in range(400):
        raw = {"name": f"S{depth}", "type": "STRUCT", "fields": [raw]}
    command = {"op": "create_table", "name": "T", "columns": [raw], "primary_key": ["S399"]}
    error = bad_shape(lambda: c.parse(command), ErrorCode.NESTED_TOO_DEEP)
    assert f"nested more than {MAX_DEPTH} levels deep" in error.message


def test_nested_ids_are_given_only_with_a_replace_and_never_twice() -> None:
    with_id = field("S", T.STRUCT, field("X", T.INT32, id=4))
    error = bad_shape(lambda: c.AddColumns(table="EV", columns=[with_id]))
    assert "only with replaces_rows" in error.message
    twice = field("S", T.STRUCT, field("X", T.INT32, id=500), field("Y", T.INT32, id=500))
    add = c.AddColumns(table="EV", columns=[twice], replaces_rows=True)
    assert "share an id" in refused(events_table(), ErrorCode.VALIDATION_ERROR, add).message


def test_a_nested_field_added_with_a_replace_moves_where_the_rows_count_from() -> None:
    required = field("R", T.INT32, nullable=False)
    add = c.AddColumns(table="EV", parent=["PAYLOAD"], columns=[required], replaces_rows=True)
    prepared = run(events_table(), add)
    assert entry_types(prepared) == ["new_nested_fields", "set_table_iceberg"]
    assert prepared.catalog.table("PUBLIC", "EV").rows_from == 2


def test_a_struct_and_fields_inside_it_drop_together() -> None:
    drop = c.DropColumns(
        table="EV",
        columns=["PAYLOAD"],
        fields=[["PAYLOAD", "ITEMS", "element", "SKU"], ["PAYLOAD", "ITEMS", "element", "PRICE"]],
    )
    prepared = run(events_table(), drop)
    assert [col.name for col in prepared.catalog.table("PUBLIC", "EV").columns] == ["ID", "ATTRS"]
    both = c.DropColumns(
        table="EV", fields=[["PAYLOAD", "ITEMS"], ["PAYLOAD", "ITEMS", "element", "SKU"]]
    )
    cat = apply(events_table(), both)
    assert [f.name for f in at(cat, "PAYLOAD").fields] == ["SOURCE", "N"]


def test_paths_are_told_apart_by_their_names_not_by_their_dotted_spelling() -> None:
    drop = c.DropColumns(table="EV", fields=[["A.B", "C"], ["A", "B.C"]], if_exists=True)
    assert not run(events_table(), drop).entries
    error = bad_shape(lambda: c.DropColumns(table="EV", fields=[["A", "B"], ["A", "B"]]))
    assert "A.B is given twice" in error.message


def test_fields_added_to_one_struct_in_one_command_have_distinct_names() -> None:
    twice = [field("Q", T.INT32), field("Q", T.INT64)]
    error = bad_shape(lambda: c.AddColumns(table="EV", parent=["PAYLOAD"], columns=twice))
    assert "Q" in error.message
