"""``commands.parse`` and ``commands.dump``: the public JSON shape of commands."""

from __future__ import annotations

import json
from typing import Any

import pytest

from catalog import Catalog, Collation, ColumnType, ErrorCode, IndexKind
from catalog import commands as c
from catalog.commands import CommandBase
from catalog.errors import ValidationError
from tests.unit.catalog.helpers import apply, bad_shape, col, create_table, key, run, with_table

EVERY_COMMAND: list[CommandBase] = [
    c.CreateSchema(name="S", if_not_exists=True),
    c.DropSchema(name="S", cascade=True, if_exists=True),
    create_table(
        schema="S",
        columns=(
            key("K", ColumnType.STRING, length=10),
            key("ID"),
            col("D", ColumnType.DECIMAL, precision=10, scale=2, default="1.5"),
        ),
        primary_key=("ID", "K"),
        primary_key_kind=IndexKind.SORTED,
        colocation_columns=("K",),
        zone="Z",
        if_not_exists=True,
    ),
    c.DropTable(name="T", if_exists=True),
    c.RenameTable(name="T", new_name="U"),
    c.AddColumns(table="T", columns=(col("X", ColumnType.BYTES, default="ff"),)),
    c.DropColumns(table="T", columns=("A", "B")),
    c.AlterColumn(table="T", column="A", type=ColumnType.INT64),
    c.AlterColumn(table="T", column="A", default=None),
    c.AlterColumn(table="T", column="A", nullable=True, default=3),
    c.AlterColumn(table="T", column="S", length=20),
    c.CreateIndex(
        table="T",
        name="I",
        columns=("A", c.IndexColumnSpec(name="B", collation=Collation.DESC_NULLS_LAST)),
        unique=True,
        if_not_exists=True,
    ),
    c.CreateIndex(table="T", name="H", columns=("A",), kind=IndexKind.HASH),
    c.DropIndex(name="I", if_exists=True),
    c.RenameIndex(name="I", new_name="J"),
    c.StartBuildingIndex(index_id=7),
    c.MakeIndexAvailable(index_id=7),
    c.RemoveIndex(index_id=7),
    c.CreateZone(
        name="Z", partitions=3, replicas=3, quorum=2, storage_profiles=("a", "b"), filter="$.a"
    ),
    c.AlterZone(name="Z", replicas=5, quorum=3, storage_profiles=("x",), filter="$.b"),
    c.AlterZone(name="Z", partitions=4),
    c.RenameZone(name="Z", new_name="Y", if_exists=True),
    c.DropZone(name="Z", if_exists=True),
    c.SetDefaultZone(name="Z"),
]

OPS = {
    "create_schema",
    "drop_schema",
    "create_table",
    "drop_table",
    "rename_table",
    "add_columns",
    "drop_columns",
    "alter_column",
    "create_index",
    "drop_index",
    "rename_index",
    "start_building_index",
    "make_index_available",
    "remove_index",
    "create_zone",
    "alter_zone",
    "rename_zone",
    "drop_zone",
    "set_default_zone",
}


def test_every_op_is_covered() -> None:
    assert {d["op"] for d in c.dump(EVERY_COMMAND)} == OPS


@pytest.mark.parametrize("command", EVERY_COMMAND, ids=lambda x: str(x.model_dump()["op"]))
def test_parse_dump_round_trip(command: CommandBase) -> None:
    dumped = c.dump([command])
    assert json.loads(json.dumps(dumped)) == dumped  # JSON-ready
    (parsed,) = c.parse(dumped)
    assert parsed == command
    assert type(parsed) is type(command)
    assert c.dump([parsed]) == dumped
    (single,) = c.parse(dumped[0])
    assert single == command


def test_parse_dump_round_trip_of_a_batch() -> None:
    dumped = c.dump(EVERY_COMMAND)
    assert c.parse(dumped) == EVERY_COMMAND
    assert c.parse(tuple(dumped)) == EVERY_COMMAND


def test_schema_field_is_spelled_schema() -> None:
    (dumped,) = c.dump([c.DropTable(schema="S", name="T")])
    assert dumped["schema"] == "S"
    assert "schema_" not in dumped
    bad_shape(lambda: c.parse({"op": "drop_table", "schema_": "S", "name": "T"}))


def test_alter_column_default_absent_null_and_set_survive_a_round_trip() -> None:
    # Absent keeps the default, null drops it: the dumped shape must tell them apart.
    cat = with_table(columns=(key(), col("A", ColumnType.INT8, default=5)))
    keep = c.AlterColumn(table="T", column="A", type=ColumnType.INT16)
    drop = c.AlterColumn(table="T", column="A", default=None)
    change = c.AlterColumn(table="T", column="A", default=6)
    for command, expected in ((keep, 5), (drop, None), (change, 6)):
        (parsed,) = c.parse(c.dump([command]))
        for cmd in (command, parsed):
            column = run(cat, cmd).catalog.table("PUBLIC", "T").column("A")
            assert column is not None
            assert column.default == expected
    assert "default" not in c.dump([keep])[0]
    assert c.dump([drop])[0]["default"] is None


def test_parse_a_create_table_from_json() -> None:
    text = """
    {"op": "create_table", "schema": "PUBLIC", "name": "ORDERS",
     "columns": [{"name": "ID", "type": "INT64", "nullable": false},
                 {"name": "AMOUNT", "type": "DECIMAL", "precision": 18, "scale": 2,
                  "default": "0"}],
     "primary_key": ["ID"], "primary_key_kind": "sorted"}
    """
    (cmd,) = c.parse(json.loads(text))
    assert isinstance(cmd, c.CreateTable)
    cat = apply(Catalog.initial(), cmd)
    table = cat.table("PUBLIC", "ORDERS")
    amount = table.column("AMOUNT")
    assert amount is not None
    assert (amount.precision, amount.scale, amount.default) == (18, 2, "0.00")
    assert cat.index("PUBLIC", "ORDERS_PK").kind is IndexKind.SORTED


def test_parse_defaults() -> None:
    (cmd,) = c.parse({"op": "create_index", "table": "T", "name": "I", "columns": ["A"]})
    assert isinstance(cmd, c.CreateIndex)
    assert (cmd.schema_, cmd.kind, cmd.unique, cmd.if_not_exists) == (
        "PUBLIC",
        IndexKind.SORTED,
        False,
        False,
    )


@pytest.mark.parametrize(
    ("obj", "loc"),
    [
        ({"op": "create_schemas", "name": "S"}, None),
        ({"name": "S"}, None),
        ({"op": "create_schema", "name": "S", "cascade": True}, "cascade"),
        ({"op": "create_schema", "name": "S", "extra": 1}, "extra"),
        ({"op": "create_schema"}, "name"),
        ({"op": "create_schema", "name": 5}, "name"),
        ({"op": "create_schema", "name": None}, "name"),
        ({"op": "create_schema", "name": "S", "if_not_exists": [1]}, "if_not_exists"),
        ({"op": "create_zone", "name": "Z", "partitions": "many"}, "partitions"),
        ({"op": "create_zone", "name": "Z", "partitions": 1.5}, "partitions"),
        ({"op": "drop_columns", "table": "T", "columns": "A"}, "columns"),
        ({"op": "start_building_index", "index_id": "x"}, "index_id"),
        (
            {"op": "create_index", "table": "T", "name": "I", "columns": ["A"], "kind": "btree"},
            "kind",
        ),
        (
            {
                "op": "create_table",
                "name": "T",
                "columns": [{"name": "ID", "type": "INT65", "nullable": False}],
                "primary_key": ["ID"],
            },
            "type",
        ),
        (
            {
                "op": "create_table",
                "name": "T",
                "columns": [{"name": "ID", "type": "INT64", "nullable": False, "size": 3}],
                "primary_key": ["ID"],
            },
            "size",
        ),
    ],
)
def test_parse_refuses_bad_shapes(obj: dict[str, Any], loc: str | None) -> None:
    error = bad_shape(lambda: c.parse(obj))
    assert isinstance(error, ValidationError)
    assert error.details
    for detail in error.details:
        assert {"loc", "msg"} <= set(detail)
        assert isinstance(detail["loc"], list)
    if loc is not None:
        assert any(loc in detail["loc"] for detail in error.details), error.details


def test_parse_in_a_list_reports_the_position() -> None:
    error = bad_shape(
        lambda: c.parse([{"op": "create_schema", "name": "S"}, {"op": "drop_schema", "nam": "S"}])
    )
    assert isinstance(error, ValidationError)
    assert all(detail["loc"][0] == "1" for detail in error.details)


def test_parse_nested_problem_is_located() -> None:
    error = bad_shape(
        lambda: c.parse(
            {
                "op": "add_columns",
                "table": "T",
                "columns": [
                    {"name": "A", "type": "INT8"},
                    {"name": "B", "type": "INT8", "default": 1000},
                ],
            }
        )
    )
    assert isinstance(error, ValidationError)
    assert any(detail["loc"][:3] == ["add_columns", "columns", "1"] for detail in error.details)


@pytest.mark.parametrize("obj", ["create_schema", 5, None, b"{}"])
def test_parse_refuses_what_is_not_a_command(obj: Any) -> None:
    bad_shape(lambda: c.parse(obj))


def test_parse_empty_list() -> None:
    assert c.parse([]) == []


def test_errors_are_catalog_errors_with_a_stable_code() -> None:
    error = bad_shape(lambda: c.parse({"op": "nope"}))
    assert error.code is ErrorCode.VALIDATION_ERROR
    assert str(error).startswith("[VALIDATION_ERROR] ")


@pytest.mark.parametrize(
    ("build", "named"),
    [
        (lambda: c.CreateTable(name="T", columns=[], primary_key=["A"]), "create_table command"),
        (lambda: c.Column(name="A", type="NOPE"), "column"),
        (lambda: c.AddColumns(table="T", columns=[]), "add_columns command"),
    ],
)
def test_refusals_name_what_the_user_wrote_not_a_class(build: Any, named: str) -> None:
    with pytest.raises(ValidationError) as refused:
        build()
    assert refused.value.message.startswith(f"invalid {named}: ")
    assert "Command" not in refused.value.message and "Column:" not in refused.value.message
