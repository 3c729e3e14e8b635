"""Nested evolution in SQL: ``ALTER TABLE`` naming a nested field by its path, as Spark does.

Each statement becomes the JSON command its change is (``parent``, ``fields``, ``path``), and
applied to a catalog it changes the field; ``element``, ``key`` and ``value`` name an array's
or a map's fields, and a quoted name holding a dot stays one name.
"""

from __future__ import annotations

import pytest

from api.sql import parse_sql
from catalog import Catalog, CatalogError, ColumnType, ErrorCode, ValidationError, prepare
from catalog import commands as c
from catalog.commands import CommandBase
from catalog.descriptors import ColumnDescriptor
from catalog.descriptors.nested import find_path
from tests.unit.catalog.helpers import catalog_with_default_zone

T = ColumnType
EV = """CREATE TABLE ev (
    id BIGINT PRIMARY KEY,
    n INT,
    payload STRUCT<source VARCHAR(10), n INT NOT NULL, "value" INT, "a.b" INT,
                   items ARRAY<STRUCT<price DECIMAL(10, 2)>>>,
    attrs MAP<VARCHAR(8), ROW(x INT)>
)"""


@pytest.fixture(scope="module")
def cat() -> Catalog:
    return prepare(catalog_with_default_zone(), parse_sql(EV)).catalog


def field(cat: Catalog, *path: str) -> ColumnDescriptor | None:
    return find_path(cat.table("PUBLIC", "EV").columns, path)


def add(parent: tuple[str, ...], *columns: c.Column, **kw: object) -> c.AddColumnsCommand:
    return c.AddColumns(table="EV", parent=parent, columns=columns, **kw)


def col(name: str, ctype: ColumnType = T.INT32, **kw: object) -> c.Column:
    return c.Column(name=name, type=ctype, **kw)


PARSED: list[tuple[str, list[CommandBase]]] = [
    (
        "ALTER TABLE ev ADD COLUMN payload.origin VARCHAR(20)",
        [add(("PAYLOAD",), col("ORIGIN", T.STRING, length=20))],
    ),
    (
        "ALTER TABLE ev ADD COLUMN IF NOT EXISTS payload.origin INT",
        [add(("PAYLOAD",), col("ORIGIN"), if_not_exists=True)],
    ),
    (  # through an array, by its element
        "ALTER TABLE ev ADD COLUMN payload.items.element.qty INT",
        [add(("PAYLOAD", "ITEMS", "element"), col("QTY"))],
    ),
    (  # through a map, by its value
        "ALTER TABLE ev ADD attrs.value.y STRUCT<z INT>",
        [add(("ATTRS", "value"), col("Y", T.STRUCT, fields=(col("Z"),)))],
    ),
    (  # fields of one struct make one command; another struct's, and columns, their own
        "ALTER TABLE ev ADD COLUMN payload.a INT, ADD COLUMN payload.b INT, "
        "ADD COLUMN payload.items.element.c INT, d INT",
        [
            add(("PAYLOAD",), col("A"), col("B")),
            add(("PAYLOAD", "ITEMS", "element"), col("C")),
            add((), col("D")),
        ],
    ),
    (  # a quoted name, dot and all
        'ALTER TABLE ev ADD COLUMN payload."x.y" INT',
        [add(("PAYLOAD",), col("x.y"))],
    ),
    (
        "ALTER TABLE ev ADD COLUMN IF NOT EXISTS payload.a INT, ADD COLUMN IF NOT EXISTS n INT",
        [add(("PAYLOAD",), col("A"), if_not_exists=True), add((), col("N"), if_not_exists=True)],
    ),
    (
        "ALTER TABLE ev ADD COLUMN (payload.a INT, payload.b BIGINT)",
        [add(("PAYLOAD",), col("A"), col("B", T.INT64))],
    ),
    (
        "ALTER TABLE ev DROP COLUMN payload.source",
        [c.DropColumns(table="EV", fields=(("PAYLOAD", "SOURCE"),))],
    ),
    (
        "ALTER TABLE IF EXISTS ev DROP COLUMN IF EXISTS payload.source, n",
        [
            c.DropColumns(
                table="EV",
                columns=("N",),
                fields=(("PAYLOAD", "SOURCE"),),
                if_exists=True,
                if_table_exists=True,
            )
        ],
    ),
    (  # quoted: the name as written, and "a.b" is one name
        'ALTER TABLE ev DROP (payload."value", "PAYLOAD"."a.b")',
        [c.DropColumns(table="EV", fields=(("PAYLOAD", "value"), ("PAYLOAD", "a.b")))],
    ),
    (
        "ALTER TABLE ev DROP payload.source, DROP COLUMN payload.items.element.price",
        [
            c.DropColumns(
                table="EV",
                fields=(("PAYLOAD", "SOURCE"), ("PAYLOAD", "ITEMS", "element", "PRICE")),
            )
        ],
    ),
    (
        "ALTER TABLE ev RENAME COLUMN payload.source TO origin",
        [c.RenameColumn(table="EV", column="PAYLOAD", path=("SOURCE",), new_name="ORIGIN")],
    ),
    (
        "ALTER TABLE ev ALTER COLUMN payload.n SET DATA TYPE BIGINT",
        [c.AlterColumn(table="EV", column="PAYLOAD", path=("N",), type=T.INT64)],
    ),
    (
        "ALTER TABLE ev ALTER payload.items.element.price TYPE DECIMAL(12, 2)",
        [
            c.AlterColumn(
                table="EV",
                column="PAYLOAD",
                path=("ITEMS", "element", "PRICE"),
                type=T.DECIMAL,
                precision=12,
                scale=2,
            )
        ],
    ),
    (
        "ALTER TABLE ev ALTER COLUMN payload.n DROP NOT NULL",
        [c.AlterColumn(table="EV", column="PAYLOAD", path=("N",), nullable=True)],
    ),
    (  # no path: the plain forms, as before
        "ALTER TABLE ev DROP COLUMN n",
        [c.DropColumns(table="EV", columns=("N",))],
    ),
    (  # a table renamed into its schema is no path
        "ALTER TABLE ev RENAME TO public.ev2",
        [c.RenameTable(name="EV", new_name="EV2")],
    ),
]


@pytest.mark.parametrize(("sql", "expected"), PARSED, ids=[s for s, _ in PARSED])
def test_nested_alter_becomes_the_json_command(
    sql: str, expected: list[CommandBase], cat: Catalog
) -> None:
    assert parse_sql(sql, cat) == expected


def test_element_key_and_value_name_fields_only_after_an_array_or_a_map() -> None:
    struct = "CREATE TABLE ev (id INT PRIMARY KEY, s STRUCT<value INT, element INT>)"
    cat = prepare(catalog_with_default_zone(), parse_sql(struct)).catalog
    # After a STRUCT, an unquoted word is folded as any name: its field VALUE.
    assert parse_sql("ALTER TABLE ev RENAME COLUMN s.value TO v", cat) == [
        c.RenameColumn(table="EV", column="S", path=("VALUE",), new_name="V")
    ]
    # Without the table at hand, the three words name an array's or a map's fields.
    assert parse_sql("ALTER TABLE ev ALTER COLUMN m.value DROP NOT NULL") == [
        c.AlterColumn(table="EV", column="M", path=("value",), nullable=True)
    ]
    # The name a field is added under is folded, whatever the word.
    assert parse_sql("ALTER TABLE ev ADD COLUMN s.key INT", cat) == [add(("S",), col("KEY"))]


def test_each_change_applies_to_the_field(cat: Catalog) -> None:
    script = ";".join(
        [
            "ALTER TABLE ev ADD COLUMN payload.origin VARCHAR(20)",
            "ALTER TABLE ev ADD COLUMN payload.items.element.qty INT",
            "ALTER TABLE ev ALTER COLUMN payload.n SET DATA TYPE BIGINT",
            "ALTER TABLE ev ALTER COLUMN payload.n DROP NOT NULL",
            "ALTER TABLE ev ALTER COLUMN payload.source SET DATA TYPE VARCHAR(40)",
            "ALTER TABLE ev RENAME COLUMN payload.items.element.price TO amount",
            'ALTER TABLE ev DROP COLUMN payload."a.b"',
        ]
    )
    after = prepare(cat, parse_sql(script, cat)).catalog
    payload = field(after, "PAYLOAD")
    assert payload is not None
    assert [f.name for f in payload.fields] == ["SOURCE", "N", "value", "ITEMS", "ORIGIN"]
    n, source = field(after, "PAYLOAD", "N"), field(after, "PAYLOAD", "SOURCE")
    assert n is not None and (n.type, n.nullable) == (T.INT64, True)
    assert source is not None and source.length == 40
    element = field(after, "PAYLOAD", "ITEMS", "element")
    assert element is not None and [f.name for f in element.fields] == ["AMOUNT", "QTY"]
    before_price = field(cat, "PAYLOAD", "ITEMS", "element", "PRICE")
    amount = field(after, "PAYLOAD", "ITEMS", "element", "AMOUNT")
    assert before_price is not None and amount is not None and amount.id == before_price.id
    origin = field(after, "PAYLOAD", "ORIGIN")
    assert origin is not None and origin.id >= cat.table("PUBLIC", "EV").next_column_id


SQL_REFUSED: list[tuple[str, str]] = [
    ("ALTER TABLE ev ADD COLUMN payload.x INT, DROP COLUMN n", "one kind of action"),
    ("ALTER TABLE ev DROP COLUMN payload.source, ADD x INT", "one kind of action"),
    ("ALTER TABLE ev ADD COLUMN payload.x", "ADD COLUMN PAYLOAD.x needs a type"),
    (
        "ALTER TABLE ev ADD COLUMN payload.x INT, ADD COLUMN IF NOT EXISTS payload.y INT",
        "IF NOT EXISTS is said once, after the first ADD",
    ),
    ("ALTER TABLE ev ADD COLUMN payload.x INT PRIMARY KEY", "cannot be a PRIMARY KEY"),
    ("ALTER TABLE ev ADD COLUMN payload.x INT DEFAULT 1", "a nested field takes no default"),
    ("ALTER TABLE ev ADD COLUMN payload.x MAP<INT>", "field PAYLOAD.X: a MAP has a key type"),
    ("ALTER TABLE ev DROP COLUMN payload.source.", "expected a field name after source."),
    ("ALTER TABLE ev RENAME COLUMN payload.source TO a.b", "expected end of statement"),
    (
        "ALTER TABLE ev ALTER COLUMN payload.n SET DATA TYPE STRUCT<a INT>",
        "SET DATA TYPE takes a plain type, not a STRUCT",
    ),
]


@pytest.mark.parametrize(("sql", "reason"), SQL_REFUSED, ids=[s for s, _ in SQL_REFUSED])
def test_bad_nested_alter_is_refused_by_the_parser(sql: str, reason: str, cat: Catalog) -> None:
    with pytest.raises(ValidationError) as caught:
        parse_sql(sql, cat)
    assert caught.value.message.startswith('statement 1 "ALTER TABLE ev'), caught.value.message
    assert reason in caught.value.message


CATALOG_REFUSED: list[tuple[str, ErrorCode, str]] = [
    (
        "ALTER TABLE ev ADD COLUMN payload.x INT NOT NULL",
        ErrorCode.UNSUPPORTED_CHANGE,
        "field PAYLOAD.X must be nullable",
    ),
    (
        "ALTER TABLE ev ADD COLUMN payload.source INT",
        ErrorCode.COLUMN_EXISTS,
        "field PAYLOAD.SOURCE already exists",
    ),
    ("ALTER TABLE ev ADD COLUMN nope.x INT", ErrorCode.COLUMN_NOT_FOUND, "field NOPE not found"),
    ("ALTER TABLE ev ADD COLUMN payload.items.x INT", ErrorCode.UNSUPPORTED_CHANGE, "element"),
    (
        "ALTER TABLE ev DROP COLUMN payload.items.element",
        ErrorCode.UNSUPPORTED_CHANGE,
        "drop PAYLOAD.ITEMS itself",
    ),
    (
        "ALTER TABLE ev ALTER COLUMN payload.n SET DATA TYPE SMALLINT",
        ErrorCode.UNSUPPORTED_CHANGE,
        "field PAYLOAD.N",
    ),
    (
        "ALTER TABLE ev ALTER COLUMN attrs.key SET DATA TYPE VARCHAR(20)",
        ErrorCode.UNSUPPORTED_CHANGE,
        "a map's key keeps its type",
    ),
    (
        "ALTER TABLE ev RENAME COLUMN payload.items.element TO e",
        ErrorCode.UNSUPPORTED_CHANGE,
        "keep their names",
    ),
    (
        "ALTER TABLE ev ALTER COLUMN payload.n SET DEFAULT 1",
        ErrorCode.VALIDATION_ERROR,
        "field PAYLOAD.N: a nested field takes no default",
    ),
]


@pytest.mark.parametrize(
    ("sql", "code", "reason"), CATALOG_REFUSED, ids=[s for s, _, _ in CATALOG_REFUSED]
)
def test_bad_nested_alter_is_refused_by_the_catalog(
    sql: str, code: ErrorCode, reason: str, cat: Catalog
) -> None:
    commands = parse_sql(sql, cat)
    with pytest.raises(CatalogError) as caught:
        prepare(cat, commands)
    assert caught.value.code is code, caught.value
    assert reason in caught.value.message
