"""Views in SQL: ``CREATE [OR REPLACE] VIEW`` typed against a catalog, ``DROP VIEW``, renames."""

from __future__ import annotations

import pytest

from api.sql import parse_sql
from catalog import Catalog, ColumnType, ErrorCode, ValidationError, prepare
from catalog import commands as c
from catalog.commands import ViewColumnSpec
from tests.unit.catalog.helpers import catalog_with_default_zone

T = ColumnType

TABLES = """
CREATE TABLE t (id BIGINT PRIMARY KEY, price DECIMAL(10, 2), name VARCHAR, d DATE, ok BOOLEAN);
CREATE SCHEMA s;
CREATE TABLE s.u (id INT PRIMARY KEY, x DOUBLE, small SMALLINT);
CREATE TABLE s.t (id INT PRIMARY KEY, only_in_s TINYINT)
"""


@pytest.fixture(scope="module")
def cat() -> Catalog:
    """Tables PUBLIC.T, S.U and S.T (which shares PUBLIC.T's name)."""
    return prepare(catalog_with_default_zone(), parse_sql(TABLES)).catalog


def view(sql: str, catalog: Catalog) -> c.CreateViewCommand:
    """Return the one command of a CREATE VIEW statement."""
    (command,) = parse_sql(sql, catalog)
    assert isinstance(command, c.CreateViewCommand)
    return command


def typed(sql: str, catalog: Catalog) -> list[tuple[str, ColumnType, int | None, int | None]]:
    """Return each column of a view as (name, type, precision, scale)."""
    return [(col.name, col.type, col.precision, col.scale) for col in view(sql, catalog).columns]


def refusal(sql: str, catalog: Catalog | None) -> str:
    """Return the message a refused statement gets, without its ``statement 1 "..."`` prefix."""
    with pytest.raises(ValidationError) as caught:
        parse_sql(sql, catalog)
    assert caught.value.code is ErrorCode.VALIDATION_ERROR
    message = caught.value.message
    prefix = f'statement 1 "{" ".join(sql.split())}": '
    assert message.startswith(prefix), message
    return message[len(prefix) :]


# -- typing ------------------------------------------------------------------------------------


def test_columns_are_typed_from_the_tables_read(cat: Catalog) -> None:
    sql = "CREATE VIEW v AS SELECT id, price, name, d, ok FROM t"
    assert typed(sql, cat) == [
        ("ID", T.INT64, None, None),
        ("PRICE", T.DECIMAL, 10, 2),
        ("NAME", T.STRING, None, None),
        ("D", T.DATE, None, None),
        ("OK", T.BOOLEAN, None, None),
    ]
    assert typed("CREATE VIEW v AS SELECT * FROM s.u", cat) == [
        ("ID", T.INT32, None, None),
        ("X", T.FLOAT64, None, None),
        ("SMALL", T.INT16, None, None),
    ]


def test_expressions_are_typed(cat: Catalog) -> None:
    sql = (
        "CREATE VIEW v AS SELECT count(*) AS n, id + 1 AS next, avg(id) AS mean, "
        "CAST(id AS DECIMAL(5, 1)) AS dec, CAST(id AS DECIMAL) AS wide, 'x' AS label, "
        "CAST(NULL AS INT) AS nothing, d + INTERVAL '1' DAY AS tomorrow FROM t GROUP BY id, d"
    )
    assert typed(sql, cat) == [
        ("N", T.INT64, None, None),
        ("NEXT", T.INT64, None, None),
        ("MEAN", T.FLOAT64, None, None),
        ("DEC", T.DECIMAL, 5, 1),
        ("WIDE", T.DECIMAL, 38, 0),
        ("LABEL", T.STRING, None, None),
        ("NOTHING", T.INT32, None, None),
        ("TOMORROW", T.DATE, None, None),
    ]


def test_a_with_clause_and_subqueries_are_typed(cat: Catalog) -> None:
    with_clause = "CREATE VIEW v AS WITH c AS (SELECT id, x FROM s.u) SELECT x FROM c"
    assert typed(with_clause, cat) == [("X", T.FLOAT64, None, None)]
    # a WITH query named as a table hides the table
    shadow = "CREATE VIEW v AS WITH t AS (SELECT 1.5 AS z) SELECT z FROM t"
    assert typed(shadow, cat) == [("Z", T.FLOAT64, None, None)]
    sub = "CREATE VIEW v AS SELECT q.n FROM (SELECT price AS n FROM t) q WHERE q.n > 1"
    assert typed(sub, cat) == [("N", T.DECIMAL, 10, 2)]
    union = "CREATE VIEW v AS SELECT id FROM t UNION ALL SELECT id FROM t"
    assert typed(union, cat) == [("ID", T.INT64, None, None)]


def test_columns_qualified_by_table_name_or_alias(cat: Catalog) -> None:
    joined = "CREATE VIEW v AS SELECT t.id, u.x FROM t JOIN s.u ON t.id = u.id"
    assert typed(joined, cat) == [("ID", T.INT64, None, None), ("X", T.FLOAT64, None, None)]
    aliased = "CREATE VIEW v AS SELECT a.name, b.small FROM t a JOIN s.u AS b ON a.id = b.id"
    assert typed(aliased, cat) == [("NAME", T.STRING, None, None), ("SMALL", T.INT16, None, None)]
    assert typed("CREATE VIEW v AS SELECT public.t.ok FROM public.t", cat) == [
        ("OK", T.BOOLEAN, None, None)
    ]
    # two tables of one name, from two schemas; and the name again in a subquery
    both = "CREATE VIEW v AS SELECT public.t.ok, s.t.only_in_s FROM public.t JOIN s.t USING (id)"
    assert typed(both, cat) == [("OK", T.BOOLEAN, None, None), ("ONLY_IN_S", T.INT8, None, None)]
    nested = "CREATE VIEW v AS SELECT t.d FROM t WHERE t.id IN (SELECT t.id FROM s.t)"
    assert typed(nested, cat) == [("D", T.DATE, None, None)]


def test_unqualified_names_resolve_in_the_views_schema(cat: Catalog) -> None:
    command = view("CREATE VIEW s.w AS SELECT * FROM t", cat)  # S.T, not PUBLIC.T
    assert (command.schema_, command.name) == ("S", "W")
    assert [(col.name, col.type) for col in command.columns] == [
        ("ID", T.INT32),
        ("ONLY_IN_S", T.INT8),
    ]
    assert command.version.default_namespace is None  # the view's own schema
    other = "CREATE VIEW s.w AS SELECT id FROM public.t"
    assert typed(other, cat) == [("ID", T.INT64, None, None)]


def test_a_quoted_view_name_keeps_its_case(cat: Catalog) -> None:
    command = view('CREATE VIEW "Mixed" AS SELECT id, price AS p FROM t', cat)
    assert command.name == "Mixed"
    assert [col.name for col in command.columns] == ["ID", "P"]


def test_a_query_quoting_a_name_is_refused_as_spark_and_trino_quote_differently(
    cat: Catalog,
) -> None:
    with pytest.raises(ValidationError) as caught:
        parse_sql('CREATE VIEW v AS SELECT "ID" FROM t', cat)
    assert 'quotes the name "ID"' in caught.value.message
    assert "JSON command create_view" in caught.value.message


def test_a_name_with_the_engines_catalog_types_as_the_schema_and_table(cat: Catalog) -> None:
    command = view("CREATE VIEW v AS SELECT id FROM lake.public.t", cat)
    assert [col.name for col in command.columns] == ["ID"]
    assert command.version.queries[0].sql == "SELECT id FROM lake.public.t"


def test_a_whole_number_beyond_32_bits_is_a_64_bit_column(cat: Catalog) -> None:
    assert typed("CREATE VIEW v AS SELECT 10000000000 AS b, 7 AS s", cat) == [
        ("B", T.INT64, None, None),
        ("S", T.INT32, None, None),
    ]


def test_a_view_over_a_view(cat: Catalog) -> None:
    base = prepare(cat, parse_sql("CREATE VIEW v AS SELECT price * 2 AS p, id FROM t", cat))
    over = base.catalog
    assert typed("CREATE VIEW w AS SELECT p FROM v WHERE id > 0", over) == [("P", T.DECIMAL, 10, 2)]


def test_a_view_typed_against_tables_created_earlier_in_the_script(cat: Catalog) -> None:
    script = (
        "CREATE TABLE z (id INT PRIMARY KEY, q SMALLINT);\n"
        "CREATE VIEW vz AS SELECT q FROM z;\n"
        "CREATE VIEW vv (renamed) AS SELECT q FROM vz"
    )
    commands = parse_sql(script, cat)
    assert [type(x) for x in commands] == [
        c.CreateTableCommand,
        c.CreateViewCommand,
        c.CreateViewCommand,
    ]
    last = commands[-1]
    assert isinstance(last, c.CreateViewCommand)
    assert [(col.name, col.type) for col in last.columns] == [("RENAMED", T.INT16)]
    after = prepare(cat, commands).catalog
    assert [col.name for col in after.view("PUBLIC", "VZ").columns] == ["Q"]
    assert after.view("PUBLIC", "VV").columns[0].type is T.INT16
    assert cat.find_table("PUBLIC", "Z") is None


def test_a_table_dropped_earlier_in_the_script_is_not_read(cat: Catalog) -> None:
    with pytest.raises(ValidationError) as caught:
        parse_sql("DROP TABLE s.u; CREATE VIEW v AS SELECT x FROM s.u", cat)
    assert caught.value.message == (
        'statement 2 "CREATE VIEW v AS SELECT x FROM s.u": view V reads S.U, which is no table '
        "or view of the catalog"
    )


# -- the text and the command ------------------------------------------------------------


def test_the_text_is_kept_as_written_for_spark_and_trino(cat: Catalog) -> None:
    text = "select  id, -- the key\n  name\n  FROM t /* all */ where ok"
    command = view(f"CREATE VIEW v AS {text}", cat)
    assert [(q.dialect, q.sql) for q in command.version.queries] == [
        ("spark", text),
        ("trino", text),
    ]
    assert command.version.schema_id == -1
    assert command.field_ids == ()
    assert (command.or_replace, command.if_not_exists, command.properties) == (False, False, {})
    (trailing,) = parse_sql("CREATE VIEW v AS (SELECT 1 AS a) ;", cat)
    assert isinstance(trailing, c.CreateViewCommand)
    assert trailing.version.queries[0].sql == "(SELECT 1 AS a)"


def test_or_replace_and_if_not_exists(cat: Catalog) -> None:
    replace = view("CREATE OR REPLACE VIEW s.v AS SELECT 1 AS a", cat)
    assert (replace.schema_, replace.or_replace, replace.if_not_exists) == ("S", True, False)
    keep = view("create view if not exists v as select 1 as a", cat)
    assert (keep.or_replace, keep.if_not_exists) == (False, True)


def test_a_column_list_renames_and_comments(cat: Catalog) -> None:
    sql = (
        "CREATE VIEW v (key COMMENT 'the id', \"Cost\" COMMENT 'it''s net', n) "
        "AS SELECT id, price, name FROM t"
    )
    assert view(sql, cat).columns == (
        ViewColumnSpec(name="KEY", type=T.INT64, doc="the id"),
        ViewColumnSpec(name="Cost", type=T.DECIMAL, precision=10, scale=2, doc="it's net"),
        ViewColumnSpec(name="N", type=T.STRING),
    )
    # named by the list, an expression needs no alias
    assert typed("CREATE VIEW v (total) AS SELECT id + 1 FROM t", cat) == [
        ("TOTAL", T.INT64, None, None)
    ]


def test_sql_views_apply_end_to_end(cat: Catalog) -> None:
    after = prepare(cat, parse_sql("CREATE VIEW s.w (k COMMENT 'key') AS SELECT id FROM u", cat))
    made = after.catalog.view("S", "W")
    assert [(col.id, col.name, col.type, col.doc) for col in made.columns] == [
        (1, "K", T.INT32, "key")
    ]
    assert made.current.default_namespace == ("S",)
    assert [r.dialect for r in made.current.representations] == ["spark", "trino"]


# -- refusals ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("sql", "message"),
    [
        (
            "CREATE VIEW v AS SELECT id FROM missing",
            "view V reads PUBLIC.MISSING, which is no table or view of the catalog",
        ),
        (
            "CREATE VIEW s.v AS SELECT id FROM nope.t",
            "view V reads NOPE.T, which is no table or view of the catalog",
        ),
        (
            "CREATE VIEW v AS SELECT id + 1 FROM t",
            'view V: its column 1 ("T"."ID" + 1 AS "_col_0") has no name; name it with AS',
        ),
        (
            "CREATE VIEW v AS SELECT NULL AS n FROM t",
            "view V: column N has UNKNOWN, which the catalog cannot type; cast it (CAST(... AS "
            "type)), or give the view's columns with the JSON command create_view",
        ),
        (
            "CREATE VIEW v AS SELECT ARRAY[1, 2] AS a",
            "view V: column A has ARRAY<INT>, which the catalog cannot type; cast it (CAST(... AS "
            "type)), or give the view's columns with the JSON command create_view",
        ),
        (
            "CREATE VIEW v (a, b) AS SELECT id FROM t",
            "view V names 2 columns but its query yields 1",
        ),
        (
            "CREATE VIEW v (a) AS SELECT id, d FROM t",
            "view V names 1 columns but its query yields 2",
        ),
        (
            "CREATE VIEW v (a NOT NULL) AS SELECT id FROM t",
            "view V: a column takes only COMMENT, not NOT NULL",
        ),
        (
            "CREATE VIEW v AS SELECT id, id FROM t",
            "invalid create_view command: duplicate column name in view V: ID",
        ),
        ("ALTER VIEW v AS SELECT 1", "ALTER VIEW supports RENAME TO [schema.]name only"),
    ],
)
def test_refusals(cat: Catalog, sql: str, message: str) -> None:
    assert refusal(sql, cat) == message


def test_an_unknown_column_is_refused(cat: Catalog) -> None:
    message = refusal("CREATE VIEW v AS SELECT nope FROM t", cat)
    assert message.startswith("view V: Column 'NOPE' could not be resolved"), message


def test_a_view_needs_a_catalog() -> None:
    assert refusal("CREATE VIEW v AS SELECT 1 AS a", None) == (
        "CREATE VIEW is typed against the catalog; send it to a server"
    )


# -- DROP VIEW and ALTER VIEW ... RENAME TO ----------------------------------------------------


@pytest.mark.parametrize(
    ("sql", "expected"),
    [
        ("DROP VIEW v", [c.DropView(name="V")]),
        (
            'DROP VIEW IF EXISTS s.v, "w"',
            [
                c.DropView(schema="S", name="V", if_exists=True),
                c.DropView(name="w", if_exists=True),
            ],
        ),
        ("ALTER VIEW v RENAME TO w", [c.RenameView(name="V", new_name="W")]),
        (
            "ALTER VIEW s.v RENAME TO public.w",
            [c.RenameView(schema="S", name="V", new_name="W", new_schema="PUBLIC")],
        ),
        (
            "ALTER VIEW IF EXISTS s.v RENAME TO w",
            [c.RenameView(schema="S", name="V", new_name="W", if_exists=True)],
        ),
    ],
)
def test_drop_and_rename(sql: str, expected: list[c.CommandBase]) -> None:
    assert parse_sql(sql) == expected  # no catalog needed
