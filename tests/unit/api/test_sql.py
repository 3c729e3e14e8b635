"""``parse_sql``: DDL text → the catalog's own commands; batches, names, and an end-to-end run."""

from __future__ import annotations

import pytest

from api.sql import parse_sql
from catalog import Catalog, ColumnType, ErrorCode, IndexKind, ValidationError, prepare
from catalog import commands as c
from catalog.commands import CommandBase, IndexColumnSpec
from catalog.descriptors import Collation

T = ColumnType


def col(name: str, ctype: ColumnType = T.INT32, **kw: object) -> c.Column:
    return c.Column(name=name, type=ctype, **kw)


def key(name: str = "ID", ctype: ColumnType = T.INT32) -> c.Column:
    return c.Column(name=name, type=ctype, nullable=False)


def table(
    name: str = "T", *columns: c.Column, pk: tuple[str, ...] = ("ID",), **kw: object
) -> c.CreateTableCommand:
    return c.CreateTable(name=name, columns=columns or (key(),), primary_key=pk, **kw)


def alter(column: str = "C", **kw: object) -> c.AlterColumnCommand:
    return c.AlterColumn(table="T", column=column, **kw)


def spec(name: str, collation: Collation) -> IndexColumnSpec:
    return IndexColumnSpec(name=name, collation=collation)


ACCEPTED: list[tuple[str, list[CommandBase]]] = [
    # --- schemas
    ("CREATE SCHEMA sales", [c.CreateSchema(name="SALES")]),
    ("create schema if not exists sales", [c.CreateSchema(name="SALES", if_not_exists=True)]),
    ("DROP SCHEMA sales", [c.DropSchema(name="SALES")]),
    (
        'DROP SCHEMA IF EXISTS "Sales" CASCADE',
        [c.DropSchema(name="Sales", cascade=True, if_exists=True)],
    ),
    # --- CREATE TABLE: keys, nullability, schema, IF NOT EXISTS
    ("CREATE TABLE t (id INT PRIMARY KEY)", [table()]),
    ("CREATE TABLE t (id INT NOT NULL PRIMARY KEY)", [table()]),
    (
        "CREATE TABLE IF NOT EXISTS s.t (id INT, v INT NULL, w INT NOT NULL, PRIMARY KEY (id))",
        [
            c.CreateTable(
                schema="S",
                name="T",
                columns=(key(), col("V"), col("W", nullable=False)),
                primary_key=("ID",),
                if_not_exists=True,
            )
        ],
    ),
    (
        "CREATE TABLE t (a INT, b BIGINT, c VARCHAR, CONSTRAINT pk PRIMARY KEY (b, a))",
        [
            table(
                "T",
                key("A"),
                key("B", T.INT64),
                col("C", T.STRING),
                pk=("B", "A"),
                primary_key_name="PK",
            )
        ],
    ),
    # --- CREATE TABLE: Ignite clauses after the column list
    (
        "CREATE TABLE t (a INT, b INT, PRIMARY KEY (a, b)) COLOCATE BY (b) ZONE z1",
        [table("T", key("A"), key("B"), pk=("A", "B"), colocation_columns=("B",), zone="Z1")],
    ),
    (
        'CREATE TABLE t (id INT PRIMARY KEY) ZONE "Zone1" COLOCATE (id)',
        [table(colocation_columns=("ID",), zone="Zone1")],
    ),
    ("CREATE TABLE t (id INT PRIMARY KEY) WITH (PRIMARY_ZONE='Z2')", [table(zone="Z2")]),
    ("CREATE TABLE t (id INT PRIMARY KEY) WITH zone = 'z2'", [table(zone="z2")]),
    ("CREATE TABLE t (id INT PRIMARY KEY) WITH (zone = z2)", [table(zone="Z2")]),
    (
        "CREATE TABLE t (id INT, PRIMARY KEY USING SORTED (id))",
        [table(primary_key_kind=IndexKind.SORTED)],
    ),
    (
        "CREATE TABLE t (id INT, PRIMARY KEY USING HASH (id))",
        [table(primary_key_kind=IndexKind.HASH)],
    ),
    # --- column types
    (
        "CREATE TABLE t (id INT PRIMARY KEY, a BOOLEAN, b TINYINT, c SMALLINT, d INTEGER,"
        " e BIGINT, f REAL, g FLOAT, h DOUBLE, i DOUBLE PRECISION, j DATE, k UUID)",
        [
            table(
                "T",
                key(),
                col("A", T.BOOLEAN),
                col("B", T.INT8),
                col("C", T.INT16),
                col("D", T.INT32),
                col("E", T.INT64),
                col("F", T.FLOAT32),
                col("G", T.FLOAT32),
                col("H", T.FLOAT64),
                col("I", T.FLOAT64),
                col("J", T.DATE),
                col("K", T.UUID),
            )
        ],
    ),
    (
        "CREATE TABLE t (id INT PRIMARY KEY, a DECIMAL, b DECIMAL(10), c NUMERIC(10, 2),"
        " d VARCHAR, e VARCHAR(20), f CHAR(3), g STRING, h VARBINARY(8), i BINARY, j BYTES)",
        [
            table(
                "T",
                key(),
                col("A", T.DECIMAL),
                col("B", T.DECIMAL, precision=10),
                col("C", T.DECIMAL, precision=10, scale=2),
                col("D", T.STRING),
                col("E", T.STRING, length=20),
                col("F", T.STRING, length=3),
                col("G", T.STRING),
                col("H", T.BYTES, length=8),
                col("I", T.BYTES),
                col("J", T.BYTES),
            )
        ],
    ),
    (
        "CREATE TABLE t (id INT PRIMARY KEY, a TIME, b TIME(3), c TIMESTAMP, d TIMESTAMP(9),"
        " e TIMESTAMP WITH LOCAL TIME ZONE, f TIMESTAMP(3) WITH LOCAL TIME ZONE, g TIMESTAMPTZ)",
        [
            table(
                "T",
                key(),
                col("A", T.TIME),
                col("B", T.TIME, precision=3),
                col("C", T.TIMESTAMP),
                col("D", T.TIMESTAMP, precision=9),
                col("E", T.TIMESTAMP_TZ),
                col("F", T.TIMESTAMP_TZ, precision=3),
                col("G", T.TIMESTAMP_TZ),
            )
        ],
    ),
    # --- constant defaults
    (
        "CREATE TABLE t (id INT PRIMARY KEY, a INT NOT NULL DEFAULT -5, b BOOLEAN DEFAULT TRUE,"
        " c VARCHAR(10) DEFAULT 'it''s', d DECIMAL(20, 2) DEFAULT 123456789012345678.25,"
        " e DOUBLE DEFAULT -1.5e-3, f REAL DEFAULT (2.5), g VARCHAR DEFAULT NULL)",
        [
            table(
                "T",
                key(),
                col("A", nullable=False, default=-5),
                col("B", T.BOOLEAN, default=True),
                col("C", T.STRING, length=10, default="it's"),
                col("D", T.DECIMAL, precision=20, scale=2, default="123456789012345678.25"),
                col("E", T.FLOAT64, default=-0.0015),
                col("F", T.FLOAT32, default=2.5),
                col("G", T.STRING),
            )
        ],
    ),
    (
        "CREATE TABLE t (id INT PRIMARY KEY, a DATE DEFAULT DATE '2024-01-31',"
        " b TIME DEFAULT TIME '10:11:12', c TIMESTAMP DEFAULT TIMESTAMP '2024-01-31 10:11:12',"
        " d TIMESTAMP WITH LOCAL TIME ZONE DEFAULT TIMESTAMP '2024-01-31 10:11:12+02:00',"
        " e BYTES DEFAULT X'0A0b', f UUID DEFAULT '7d444840-9dc0-11d1-b245-5ffdce74fad2')",
        [
            table(
                "T",
                key(),
                col("A", T.DATE, default="2024-01-31"),
                col("B", T.TIME, default="10:11:12"),
                col("C", T.TIMESTAMP, default="2024-01-31 10:11:12"),
                col("D", T.TIMESTAMP_TZ, default="2024-01-31 10:11:12+02:00"),
                col("E", T.BYTES, default="0A0b"),
                col("F", T.UUID, default="7d444840-9dc0-11d1-b245-5ffdce74fad2"),
            )
        ],
    ),
    # --- DROP TABLE
    ("DROP TABLE t", [c.DropTable(name="T")]),
    (
        "DROP TABLE IF EXISTS s.t, u",
        [c.DropTable(schema="S", name="T", if_exists=True), c.DropTable(name="U", if_exists=True)],
    ),
    # --- ALTER TABLE ADD
    ("ALTER TABLE t ADD COLUMN c INT", [c.AddColumns(table="T", columns=(col("C"),))]),
    (
        "ALTER TABLE s.t ADD c INT NOT NULL DEFAULT 1, ADD COLUMN d VARCHAR(5)",
        [
            c.AddColumns(
                schema="S",
                table="T",
                columns=(col("C", nullable=False, default=1), col("D", T.STRING, length=5)),
            )
        ],
    ),
    (
        "ALTER TABLE t ADD COLUMN (c INT, d DATE DEFAULT DATE '2024-01-01')",
        [c.AddColumns(table="T", columns=(col("C"), col("D", T.DATE, default="2024-01-01")))],
    ),
    ("ALTER TABLE t ADD (c INT)", [c.AddColumns(table="T", columns=(col("C"),))]),
    # --- ALTER TABLE DROP
    ("ALTER TABLE t DROP COLUMN c", [c.DropColumns(table="T", columns=("C",))]),
    (
        "ALTER TABLE t DROP COLUMN IF EXISTS c",
        [c.DropColumns(table="T", columns=("C",), if_exists=True)],
    ),
    ("ALTER TABLE t DROP COLUMN (c, d)", [c.DropColumns(table="T", columns=("C", "D"))]),
    ("ALTER TABLE t DROP (c, d)", [c.DropColumns(table="T", columns=("C", "D"))]),
    (
        "ALTER TABLE t DROP COLUMN c, DROP COLUMN d",
        [c.DropColumns(table="T", columns=("C", "D"))],
    ),
    ("ALTER TABLE t DROP c, d", [c.DropColumns(table="T", columns=("C", "D"))]),
    (
        "ALTER TABLE t DROP IF EXISTS c, DROP d",
        [c.DropColumns(table="T", columns=("C", "D"), if_exists=True)],
    ),
    # --- ALTER TABLE RENAME COLUMN
    (
        'ALTER TABLE s.t RENAME COLUMN c TO "d"',
        [c.RenameColumn(schema="S", table="T", column="C", new_name="d")],
    ),
    # --- ALTER TABLE ALTER COLUMN
    ("ALTER TABLE t ALTER COLUMN c SET DATA TYPE BIGINT", [alter(type=T.INT64)]),
    ("ALTER TABLE t ALTER COLUMN c TYPE VARCHAR(100)", [alter(type=T.STRING, length=100)]),
    (
        "ALTER TABLE t ALTER c SET DATA TYPE DECIMAL(12, 2)",
        [alter(type=T.DECIMAL, precision=12, scale=2)],
    ),
    ("ALTER TABLE t ALTER COLUMN c DROP NOT NULL", [alter(nullable=True)]),
    ("ALTER TABLE t ALTER COLUMN c SET NOT NULL", [alter(nullable=False)]),
    ("ALTER TABLE t ALTER COLUMN c SET DEFAULT 5", [alter(default=5)]),
    ("ALTER TABLE t ALTER COLUMN c SET DEFAULT 'x'", [alter(default="x")]),
    ("ALTER TABLE t ALTER COLUMN c SET DEFAULT 0.25", [alter(default=0.25)]),
    # More digits than a float holds: kept exact, for a DECIMAL column.
    (
        "ALTER TABLE t ALTER COLUMN c SET DEFAULT 12345678901234567890.125",
        [alter(default="12345678901234567890.125")],
    ),
    ("ALTER TABLE t ALTER COLUMN c SET DEFAULT NULL", [alter(default=None)]),
    ("ALTER TABLE t ALTER COLUMN c DROP DEFAULT", [alter(default=None)]),
    # --- ALTER TABLE RENAME, several actions
    ("ALTER TABLE t RENAME TO u", [c.RenameTable(name="T", new_name="U")]),
    ("ALTER TABLE s.t RENAME TO s.u", [c.RenameTable(schema="S", name="T", new_name="U")]),
    # --- indexes
    ("CREATE INDEX i ON t (a)", [c.CreateIndex(table="T", name="I", columns=("A",))]),
    (
        "CREATE UNIQUE INDEX IF NOT EXISTS i ON s.t USING HASH (a, b)",
        [
            c.CreateIndex(
                schema="S",
                table="T",
                name="I",
                columns=("A", "B"),
                kind=IndexKind.HASH,
                unique=True,
                if_not_exists=True,
            )
        ],
    ),
    (
        "CREATE INDEX i ON t USING SORTED (a ASC, b DESC, c NULLS LAST, d DESC NULLS FIRST,"
        " e ASC NULLS FIRST, f DESC NULLS LAST, g)",
        [
            c.CreateIndex(
                table="T",
                name="I",
                columns=(
                    spec("A", Collation.ASC_NULLS_FIRST),
                    spec("B", Collation.DESC_NULLS_LAST),
                    spec("C", Collation.ASC_NULLS_LAST),
                    spec("D", Collation.DESC_NULLS_FIRST),
                    spec("E", Collation.ASC_NULLS_FIRST),
                    spec("F", Collation.DESC_NULLS_LAST),
                    "G",
                ),
            )
        ],
    ),
    ("CREATE INDEX i ON t USING TREE (a)", [c.CreateIndex(table="T", name="I", columns=("A",))]),
    ("DROP INDEX i", [c.DropIndex(name="I")]),
    ("DROP INDEX IF EXISTS s.i", [c.DropIndex(schema="S", name="I", if_exists=True)]),
    ("ALTER INDEX i RENAME TO j", [c.RenameIndex(name="I", new_name="J")]),
    ("ALTER INDEX s.i RENAME TO j", [c.RenameIndex(schema="S", name="I", new_name="J")]),
    # --- zones (read from tokens: sqlglot does not parse them)
    ("CREATE ZONE z", [c.CreateZone(name="Z")]),
    (
        "CREATE ZONE IF NOT EXISTS z WITH (PARTITIONS=4, REPLICAS=3, QUORUM_SIZE=2,"
        " STORAGE_PROFILES='default, ssd', DATA_NODES_FILTER='$[?(@.region == \"EU\")]')",
        [
            c.CreateZone(
                name="Z",
                partitions=4,
                replicas=3,
                quorum=2,
                storage_profiles=("default", "ssd"),
                filter='$[?(@.region == "EU")]',
                if_not_exists=True,
            )
        ],
    ),
    ("CREATE ZONE z WITH partitions = 2", [c.CreateZone(name="Z", partitions=2)]),
    ('CREATE ZONE "z" (REPLICAS=2)', [c.CreateZone(name="z", replicas=2)]),
    ("ALTER ZONE z SET (REPLICAS=5)", [c.AlterZone(name="Z", replicas=5)]),
    (
        "ALTER ZONE IF EXISTS z SET REPLICAS = 3, QUORUM_SIZE = 2, DATA_NODES_FILTER = '$..*'",
        [c.AlterZone(name="Z", replicas=3, quorum=2, filter="$..*", if_exists=True)],
    ),
    ("ALTER ZONE z SET PARTITIONS = 3", [c.AlterZone(name="Z", partitions=3)]),
    ("ALTER ZONE z RENAME TO y", [c.RenameZone(name="Z", new_name="Y")]),
    ("ALTER ZONE IF EXISTS z RENAME TO y", [c.RenameZone(name="Z", new_name="Y", if_exists=True)]),
    ("ALTER ZONE z SET DEFAULT", [c.SetDefaultZone(name="Z")]),
    ("DROP ZONE z", [c.DropZone(name="Z")]),
    ("DROP ZONE IF EXISTS z", [c.DropZone(name="Z", if_exists=True)]),
]


@pytest.mark.parametrize(("sql", "expected"), ACCEPTED, ids=[s for s, _ in ACCEPTED])
def test_statement_gives_commands(sql: str, expected: list[CommandBase]) -> None:
    produced = parse_sql(sql)
    assert c.dump(produced) == c.dump(expected)
    assert produced == expected


def test_alter_column_keeps_an_absent_default_apart_from_a_dropped_one() -> None:
    (set_type,) = c.dump(parse_sql("ALTER TABLE t ALTER COLUMN c SET DATA TYPE BIGINT"))
    (dropped,) = c.dump(parse_sql("ALTER TABLE t ALTER COLUMN c DROP DEFAULT"))
    assert "default" not in set_type
    assert dropped["default"] is None


# --- batches ----------------------------------------------------------------------------------


def test_several_statements_are_one_batch_in_order() -> None:
    sql = """
        -- a comment before the first statement
        CREATE SCHEMA s;;
        CREATE TABLE s.t (id INT PRIMARY KEY, v VARCHAR(10)); /* block comment; with a ; */
        CREATE INDEX t_v ON s.t (v);
        DROP INDEX s.t_v;
    """
    assert parse_sql(sql) == [
        c.CreateSchema(name="S"),
        c.CreateTable(
            schema="S",
            name="T",
            columns=(key(), col("V", T.STRING, length=10)),
            primary_key=("ID",),
        ),
        c.CreateIndex(schema="S", table="T", name="T_V", columns=("V",)),
        c.DropIndex(schema="S", name="T_V"),
    ]


def test_semicolons_inside_strings_and_quoted_names_do_not_split() -> None:
    produced = parse_sql(
        "CREATE TABLE \"a;b\" (id INT PRIMARY KEY, v VARCHAR DEFAULT ';') ; CREATE SCHEMA x"
    )
    assert produced == [
        table("a;b", key(), col("V", T.STRING, default=";")),
        c.CreateSchema(name="X"),
    ]


@pytest.mark.parametrize("sql", ["", "   ", ";", " ; ;", "-- only a comment", "/* c */ ;"])
def test_no_statement_is_refused(sql: str) -> None:
    with pytest.raises(ValidationError, match="no SQL statement"):
        parse_sql(sql)


# --- identifiers ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("sql", "schema", "name"),
    [
        ("DROP TABLE orders", "PUBLIC", "ORDERS"),
        ("DROP TABLE Orders", "PUBLIC", "ORDERS"),
        ('DROP TABLE "Orders"', "PUBLIC", "Orders"),
        ('DROP TABLE "orders"', "PUBLIC", "orders"),
        ('DROP TABLE sales."Orders"', "SALES", "Orders"),
        ('DROP TABLE "Sales".orders', "Sales", "ORDERS"),
        ('DROP TABLE "my.schema"."a ""quoted"" name"', "my.schema", 'a "quoted" name'),
        ("DROP TABLE bücher", "PUBLIC", "BÜCHER"),
        ('DROP TABLE "PUBLIC"."T"', "PUBLIC", "T"),
    ],
)
def test_unquoted_names_are_upper_cased_quoted_ones_kept(sql: str, schema: str, name: str) -> None:
    assert parse_sql(sql) == [c.DropTable(schema=schema, name=name)]


def test_quoting_applies_to_every_kind_of_name() -> None:
    sql = (
        'CREATE TABLE "Sales"."Orders" ("Id" INT, amount INT, PRIMARY KEY ("Id"))'
        ' COLOCATE BY ("Id") ZONE "EuZone";'
        ' CREATE INDEX "ByAmount" ON "Sales"."Orders" (amount DESC);'
        ' ALTER TABLE "Sales"."Orders" ALTER COLUMN "AMOUNT" SET DEFAULT 0;'
        " CREATE ZONE \"EuZone\" WITH (STORAGE_PROFILES='Ssd')"
    )
    assert parse_sql(sql) == [
        c.CreateTable(
            schema="Sales",
            name="Orders",
            columns=(key("Id"), col("AMOUNT")),
            primary_key=("Id",),
            colocation_columns=("Id",),
            zone="EuZone",
        ),
        c.CreateIndex(
            schema="Sales",
            table="Orders",
            name="ByAmount",
            columns=(spec("AMOUNT", Collation.DESC_NULLS_LAST),),
        ),
        c.AlterColumn(schema="Sales", table="Orders", column="AMOUNT", default=0),
        c.CreateZone(name="EuZone", storage_profiles=("Ssd",)),
    ]


# --- end to end: the commands prepare against a real catalog ----------------------------------

SCRIPT = """
CREATE ZONE eu WITH (PARTITIONS=8, REPLICAS=3, STORAGE_PROFILES='default',
                     DATA_NODES_FILTER='$[?(@.region == "eu")]');
CREATE SCHEMA shop;
CREATE TABLE shop.customers (
    id         BIGINT PRIMARY KEY,
    email      VARCHAR(320) NOT NULL,
    "Name"     VARCHAR(100),
    vip        BOOLEAN NOT NULL DEFAULT FALSE,
    created_at TIMESTAMP(3) NOT NULL DEFAULT TIMESTAMP '2024-01-01 00:00:00'
) ZONE eu;
CREATE TABLE shop.orders (
    customer_id BIGINT,
    order_id    UUID,
    amount      DECIMAL(12, 2) NOT NULL DEFAULT 0,
    note        VARCHAR,
    placed_on   DATE DEFAULT DATE '2024-01-31',
    payload     VARBINARY(64) DEFAULT X'00ff',
    PRIMARY KEY (customer_id, order_id)
) COLOCATE BY (customer_id) ZONE eu;
CREATE UNIQUE INDEX customers_email ON shop.customers USING HASH (id, email);
CREATE INDEX orders_by_amount ON shop.orders (amount DESC, placed_on);
ALTER TABLE shop.orders ADD COLUMN (status VARCHAR(16) NOT NULL DEFAULT 'new', shipped DATE);
ALTER TABLE shop.orders ALTER COLUMN amount SET DATA TYPE DECIMAL(18, 2);
ALTER TABLE shop.orders ALTER COLUMN note SET DEFAULT 'none';
ALTER TABLE shop.orders DROP COLUMN shipped;
ALTER TABLE shop.customers RENAME TO clients;
ALTER ZONE eu SET (REPLICAS=5);
ALTER ZONE eu SET DEFAULT;
"""


def test_realistic_script_prepares_against_the_initial_catalog() -> None:
    commands = parse_sql(SCRIPT)
    assert len(commands) == 13
    prepared = prepare(Catalog.initial(), commands)
    assert all(prepared.applied)
    cat = prepared.catalog

    zone = cat.zone("EU")
    assert (zone.partitions, zone.replicas, zone.filter) == (8, 5, '$[?(@.region == "eu")]')
    assert cat.default_zone() == zone

    clients = cat.table("SHOP", "CLIENTS")
    assert cat.find_table("SHOP", "CUSTOMERS") is None
    assert [c.name for c in clients.columns] == ["ID", "EMAIL", "Name", "VIP", "CREATED_AT"]
    created = clients.column("CREATED_AT")
    assert created is not None and created.default == "2024-01-01T00:00:00"
    assert clients.zone_id == zone.id

    orders = cat.table("SHOP", "ORDERS")
    names = [c.name for c in orders.columns]
    assert names == ["CUSTOMER_ID", "ORDER_ID", "AMOUNT", "NOTE", "PLACED_ON", "PAYLOAD", "STATUS"]
    assert orders.column_names(orders.primary_key) == ["CUSTOMER_ID", "ORDER_ID"]
    assert orders.column_names(orders.colocation_columns) == ["CUSTOMER_ID"]
    amount, note, payload = orders.column("AMOUNT"), orders.column("NOTE"), orders.column("PAYLOAD")
    assert amount is not None and (amount.precision, amount.scale, amount.default) == (
        18,
        2,
        "0.00",
    )
    assert note is not None and note.default == "none"
    assert payload is not None and payload.default == "00ff"

    by_amount = cat.index("SHOP", "ORDERS_BY_AMOUNT")
    assert [c.collation for c in by_amount.columns] == [
        Collation.DESC_NULLS_LAST,
        Collation.ASC_NULLS_FIRST,
    ]
    email = cat.index("SHOP", "CUSTOMERS_EMAIL")
    assert email.kind is IndexKind.HASH and email.unique


def test_set_not_null_parses_and_the_catalog_refuses_it() -> None:
    setup = parse_sql("CREATE TABLE t (id INT PRIMARY KEY, c INT)")
    cat = prepare(Catalog.initial(), setup).catalog
    with pytest.raises(ValidationError) as caught:
        prepare(cat, parse_sql("ALTER TABLE t ALTER COLUMN c SET NOT NULL"))
    assert caught.value.code is ErrorCode.UNSUPPORTED_CHANGE


def test_alter_zone_partitions_parses_and_the_catalog_refuses_it() -> None:
    with pytest.raises(ValidationError) as caught:
        prepare(Catalog.initial(), parse_sql("CREATE ZONE z; ALTER ZONE z SET PARTITIONS = 3"))
    assert caught.value.code is ErrorCode.UNSUPPORTED_CHANGE
