"""A new Iceberg schema's nested fields as catalog commands: matched by id at every depth."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import pytest

from api.iceberg.errors import IcebergError
from api.iceberg.evolution import schema_commands
from api.iceberg.metadata import table_metadata
from api.iceberg.models import IcebergSchema
from catalog import ColumnType
from catalog import commands as c
from catalog.catalog import Catalog
from catalog.commands import CommandBase
from catalog.commands.column_definitions import Column
from catalog.commands.iceberg_tables import IcebergTableSpec
from catalog.descriptors import TableDescriptor
from catalog.descriptors.nested import find_path, walk
from catalog.errors import ValidationError
from catalog.prepare import prepare

Body = dict[str, Any]


def _table() -> tuple[Catalog, TableDescriptor]:
    inner = Column(name="IN", type=ColumnType.STRUCT, fields=(Column(name="X", type="INT32"),))
    payload = Column(
        name="P",
        type=ColumnType.STRUCT,
        fields=(
            Column(name="S", type=ColumnType.STRING),
            Column(name="N", type=ColumnType.INT32, nullable=False),
            inner,
        ),
    )
    element = Column(
        name="element",
        type=ColumnType.STRUCT,
        fields=(Column(name="PRICE", type=ColumnType.DECIMAL, precision=10, scale=2),),
    )
    items = Column(name="L", type=ColumnType.ARRAY, fields=(element,))
    attrs = Column(
        name="M",
        type=ColumnType.MAP,
        fields=(
            Column(name="key", type=ColumnType.INT32, nullable=False),
            Column(name="value", type=ColumnType.INT64),
        ),
    )
    key = Column(name="K", type=ColumnType.INT64, nullable=False)
    create = c.CreateTable(
        name="T",
        columns=[key, payload, items, attrs],
        primary_key=["K"],
        iceberg=IcebergTableSpec(),
    )
    cat = prepare(Catalog.initial(), [create]).catalog
    return cat, cat.table("PUBLIC", "T")


def _served(table: TableDescriptor) -> Body:
    return table_metadata(table, "/w", 0).schemas[-1].model_dump(by_alias=True)


def _same(table: TableDescriptor, body: Body) -> bool:
    """Return whether the table serves the fields and identifier fields of ``body``."""
    served = _served(table)
    return all(served[k] == body[k] for k in ("fields", "identifier-field-ids"))


def _field(body: Body, *path: str) -> Body:
    """Return the field at ``path`` of a schema's body (through lists and maps by their names)."""
    fields: list[Body] = body["fields"]
    found: Body = {}
    for name in path:
        if name in ("element", "key", "value"):
            holder = found["type"]
            found = {"id": holder[f"{name}-id"], "name": name, "type": holder[name]}
            continue
        found = next(f for f in fields if f["name"] == name)
        kind = found["type"]
        fields = kind.get("fields", []) if isinstance(kind, dict) else []
    return found


def _struct(body: Body, *path: str) -> list[Body]:
    """Return the fields of the struct at ``path`` (a list's element struct: ``L, element``)."""
    if path[-1] == "element":
        held: list[Body] = _field(body, *path[:-1])["type"]["element"]["fields"]
        return held
    fields: list[Body] = _field(body, *path)["type"]["fields"]
    return fields


def _commands(table: TableDescriptor, body: Body, replace: bool = False) -> list[CommandBase]:
    return schema_commands("PUBLIC", table, IcebergSchema.model_validate(body), replace=replace)


def _applied(cat: Catalog, commands: list[CommandBase]) -> TableDescriptor:
    return prepare(cat, commands).catalog.table("PUBLIC", "T")


def _ids(table: TableDescriptor) -> dict[str, int]:
    return {".".join(path): column.id for path, column in walk(table.columns)}


def test_nested_adds_renames_drops_widenings_and_optionals_become_commands() -> None:
    cat, table = _table()
    before = _ids(table)
    body = _served(table)
    payload = _struct(body, "P")
    payload[0]["name"] = "SOURCE"  # rename P.S
    payload[1].update(type="long", required=False)  # widen and make optional P.N
    price = _struct(body, "L", "element")[0]
    price["type"] = "decimal(12, 2)"
    _field(body, "M")["type"]["value-required"] = False
    changed = copy.deepcopy(body)
    _struct(changed, "P").pop(2)  # and drop P.IN
    late = table.next_column_id
    _struct(changed, "P").append({"id": late, "name": "LATE", "required": False, "type": "date"})
    commands = _commands(table, changed)
    assert [type(command) for command in commands] == [
        c.DropColumnsCommand,
        c.RenameColumnCommand,
        c.AlterColumnCommand,
        c.AlterColumnCommand,
        c.AddColumnsCommand,
    ]
    after = _applied(cat, commands)
    ids = _ids(after)
    assert ids["P.SOURCE"] == before["P.S"] and ids["P.N"] == before["P.N"]
    assert ids["P.LATE"] == late == after.next_column_id - 1
    assert "P.IN" not in ids and "P.IN.X" not in ids
    n = find_path(after.columns, ("P", "N"))
    assert n is not None and (n.type, n.nullable) == (ColumnType.INT64, True)
    price_col = find_path(after.columns, ("L", "element", "PRICE"))
    assert price_col is not None and price_col.precision == 12
    assert _same(after, changed)  # the table serves the schema asked for, ids and all


def test_added_nested_fields_take_the_ids_iceberg_clients_give_them() -> None:
    cat, table = _table()
    body = _served(table)
    nxt = table.next_column_id
    # As Java's and PyIceberg's UpdateSchema give them: each field, then its own fields.
    body["fields"].append(
        {
            "id": nxt,
            "name": "A",
            "required": False,
            "type": {
                "type": "struct",
                "fields": [{"id": nxt + 1, "name": "A1", "required": False, "type": "int"}],
            },
        }
    )
    body["fields"].append({"id": nxt + 2, "name": "B", "required": False, "type": "string"})
    _struct(body, "P").append(
        {
            "id": nxt + 3,
            "name": "Q",
            "required": False,
            "type": {
                "type": "list",
                "element-id": nxt + 4,
                "element": "int",
                "element-required": False,
            },
        }
    )
    _struct(body, "L", "element").append(
        {"id": nxt + 5, "name": "R", "required": False, "type": "int"}
    )
    _struct(body, "P").append({"id": nxt + 6, "name": "Z", "required": False, "type": "int"})
    _struct(body, "P").append({"id": nxt + 7, "name": "Z2", "required": False, "type": "int"})
    commands = _commands(table, body)
    assert [(type(x), getattr(x, "parent", ())) for x in commands] == [
        (c.AddColumnsCommand, ()),  # A and its A1 (B cannot follow: the catalog numbers
        (c.AddColumnsCommand, ()),  # one command's fields first)
        (c.AddColumnsCommand, ("P",)),
        (c.AddColumnsCommand, ("L", "element")),
        (c.AddColumnsCommand, ("P",)),  # Z and Z2 in one
    ]
    after = _applied(cat, commands)
    assert _same(after, body)
    assert after.next_column_id == nxt + 8


@pytest.mark.parametrize(
    ("change", "refusal"),
    [
        (
            lambda b: _field(b, "M")["type"].update(key="long"),
            "the key of map M cannot change its type",
        ),
        (
            lambda b: b.update({"identifier-field-ids": [1, _field(b, "P", "N")["id"]]}),
            r"identifier field P\.N \(id \d+\) is a nested field",
        ),
        (
            lambda b: _struct(b, "P").reverse(),
            "cannot reorder the fields of struct P",
        ),
        (
            lambda b: _struct(b, "P", "IN").append(_struct(b, "P").pop(0)),
            r"field P\.S cannot move to P\.IN\.S",
        ),
        (
            lambda b: _field(b, "P", "IN").update(
                type={"type": "list", "element-id": 99, "element": "int"}
            ),
            r"field P\.IN is a STRUCT and cannot become an ARRAY",
        ),
        (
            lambda b: _field(b, "L")["type"].update({"element-id": 99}),
            r"the fields of ARRAY L keep their ids \(element \d+\)",
        ),
        (
            lambda b: _struct(b, "P").append(
                {"id": 40, "name": "FAR", "required": False, "type": "int"}
            ),
            r"take the ids after last-column-id \d+ in order .* field P\.FAR would get",
        ),
        (
            lambda b: _field(b, "P", "N").update(type="string"),
            r"field P\.N: cannot change column type INT32 to STRING",
        ),
    ],
)
def test_nested_changes_the_catalog_cannot_make_are_refused_by_path(
    change: Callable[[Body], object], refusal: str
) -> None:
    cat, table = _table()
    body = _served(table)
    change(body)
    with pytest.raises((IcebergError, ValidationError), match=refusal):
        _applied(cat, _commands(table, body))


def test_a_dropped_nested_fields_id_is_never_given_again() -> None:
    cat, table = _table()
    body = _served(table)
    dropped = _applied(cat, [c.DropColumnsCommand(table="T", fields=[("P", "IN")])])
    with pytest.raises(IcebergError, match=r"field P\.IN of table T has id \d+, given out before"):
        _commands(dropped, body)


@pytest.mark.parametrize(
    ("change", "refusal"),
    [
        (
            lambda b: _field(b, "P", "S").update(required=True),
            r"cannot set NOT NULL on existing field P\.S",
        ),
        (
            lambda b: _struct(b, "P").append(
                {"id": 13, "name": "NEW", "required": True, "type": "int"}
            ),
            r"field P\.NEW must be nullable",
        ),
    ],
)
def test_what_rows_already_written_forbid_is_refused_but_a_replace_makes_it(
    change: Callable[[Body], object], refusal: str
) -> None:
    cat, table = _table()
    body = _served(table)
    change(body)
    with pytest.raises(ValidationError, match=refusal):
        _applied(cat, _commands(table, body))
    replaced = _applied(cat, _commands(table, body, replace=True))
    assert _same(replaced, body)
    assert replaced.iceberg is not None and replaced.iceberg.rows_from is not None


def test_a_replace_drops_nested_fields_last_under_their_structs_new_names() -> None:
    cat, table = _table()
    body = _served(table)
    _field(body, "P")["name"] = "PAYLOAD"
    _struct(body, "PAYLOAD").pop(0)  # drop P.S
    commands = _commands(table, body, replace=True)
    drops = [x for x in commands if isinstance(x, c.DropColumnsCommand)]
    assert [d.fields for d in drops] == [(("PAYLOAD", "S"),)]
    last = [x for x in commands if x not in drops] + drops  # as ``commits`` orders a replace's
    assert _same(_applied(cat, last), body)
