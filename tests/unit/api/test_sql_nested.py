"""Nested column types in SQL: STRUCT, ROW, ARRAY and MAP in CREATE TABLE and ADD COLUMN.

Each statement becomes the same command its JSON spelling is (``Column.fields``), and applied to
a catalog it gives the table the nested fields with their ids; bad nested types are refused
in words that name the column or field.
"""

from __future__ import annotations

import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from api.sql import parse_sql
from catalog import Catalog, CatalogError, ColumnType, ErrorCode, ValidationError, prepare
from catalog import commands as c
from catalog.commands import CommandBase, dump, parse
from catalog.descriptors.nested import MAX_DEPTH, walk
from tests.unit.catalog.helpers import catalog_with_default_zone

T = ColumnType


def col(name: str, ctype: ColumnType, *fields: c.Column, **kw: object) -> c.Column:
    return c.Column(name=name, type=ctype, fields=fields, **kw)


ID = col("ID", T.INT64, nullable=False)


def created(*columns: c.Column) -> list[CommandBase]:
    return [c.CreateTable(name="EV", columns=(ID, *columns), primary_key=("ID",))]


ACCEPTED: list[tuple[str, list[CommandBase]]] = [
    (
        "STRUCT<source VARCHAR(10), n INT NOT NULL>",
        created(
            col(
                "P",
                T.STRUCT,
                col("SOURCE", T.STRING, length=10),
                col("N", T.INT32, nullable=False),
            )
        ),
    ),
    (  # Spark's spelling, with a colon
        "STRUCT<source: VARCHAR(10), n: INT NOT NULL>",
        created(
            col(
                "P",
                T.STRUCT,
                col("SOURCE", T.STRING, length=10),
                col("N", T.INT32, nullable=False),
            )
        ),
    ),
    (  # Trino's
        "ROW(source VARCHAR(10), inner ROW(d DATE))",
        created(
            col(
                "P",
                T.STRUCT,
                col("SOURCE", T.STRING, length=10),
                col("INNER", T.STRUCT, col("D", T.DATE)),
            )
        ),
    ),
    ("ARRAY<BIGINT>", created(col("P", T.ARRAY, col("element", T.INT64)))),
    ("BIGINT ARRAY", created(col("P", T.ARRAY, col("element", T.INT64)))),
    ("BIGINT[]", created(col("P", T.ARRAY, col("element", T.INT64)))),
    (
        "MAP<VARCHAR(8), DECIMAL(10, 2)>",
        created(
            col(
                "P",
                T.MAP,
                col("key", T.STRING, length=8, nullable=False),
                col("value", T.DECIMAL, precision=10, scale=2),
            )
        ),
    ),
    (
        "ARRAY<STRUCT<price DECIMAL(10, 2), tags MAP<STRING, ARRAY<INT>>>>",
        created(
            col(
                "P",
                T.ARRAY,
                col(
                    "element",
                    T.STRUCT,
                    col("PRICE", T.DECIMAL, precision=10, scale=2),
                    col(
                        "TAGS",
                        T.MAP,
                        col("key", T.STRING, nullable=False),
                        col("value", T.ARRAY, col("element", T.INT32)),
                    ),
                ),
            )
        ),
    ),
    (  # a quoted name keeps its case and its dot: one name
        'STRUCT<"a.b" INT, "Mixed" INT>',
        created(col("P", T.STRUCT, col("a.b", T.INT32), col("Mixed", T.INT32))),
    ),
]


@pytest.mark.parametrize(("written", "expected"), ACCEPTED, ids=[w for w, _ in ACCEPTED])
def test_nested_types_in_create_table(written: str, expected: list[CommandBase]) -> None:
    assert parse_sql(f"CREATE TABLE ev (id BIGINT PRIMARY KEY, p {written})") == expected


def test_a_nested_column_is_not_null_as_a_whole() -> None:
    (command,) = parse_sql("CREATE TABLE ev (id BIGINT PRIMARY KEY, p STRUCT<a INT> NOT NULL)")
    assert isinstance(command, c.CreateTableCommand)
    assert command.columns[1] == col("P", T.STRUCT, col("A", T.INT32), nullable=False)


def test_the_table_gets_every_field_with_ids_numbered_as_iceberg_does() -> None:
    sql = (
        "CREATE TABLE ev (id BIGINT PRIMARY KEY, payload STRUCT<source VARCHAR(10), "
        "items ARRAY<STRUCT<price DECIMAL(10, 2)>>>, attrs MAP<STRING, BIGINT>)"
    )
    table = prepare(catalog_with_default_zone(), parse_sql(sql)).catalog.table("PUBLIC", "EV")
    ids = {".".join(path): f.id for path, f in walk(table.columns)}
    # Top-level columns first, then each struct's own fields, then theirs.
    assert ids == {
        "ID": 0,
        "PAYLOAD": 1,
        "ATTRS": 2,
        "PAYLOAD.SOURCE": 3,
        "PAYLOAD.ITEMS": 4,
        "PAYLOAD.ITEMS.element": 5,
        "PAYLOAD.ITEMS.element.PRICE": 6,
        "ATTRS.key": 7,
        "ATTRS.value": 8,
    }
    assert table.next_column_id == 9


def test_add_column_of_a_nested_type() -> None:
    assert parse_sql("ALTER TABLE ev ADD COLUMN (tags ARRAY<VARCHAR(8)>, m MAP<INT, INT>)") == [
        c.AddColumns(
            table="EV",
            columns=(
                col("TAGS", T.ARRAY, col("element", T.STRING, length=8)),
                col("M", T.MAP, col("key", T.INT32, nullable=False), col("value", T.INT32)),
            ),
        )
    ]
    assert parse_sql("ALTER TABLE ev ADD r ROW(a INT)") == [
        c.AddColumns(table="EV", columns=(col("R", T.STRUCT, col("A", T.INT32)),))
    ]


def _wide(fields: int) -> list[CommandBase]:
    named = ", ".join(f"f{i} INT" for i in range(fields))
    return parse_sql(f"CREATE TABLE ev (id BIGINT PRIMARY KEY, p STRUCT<{named}>)")


def test_nested_fields_count_toward_the_column_limit() -> None:
    prepare(catalog_with_default_zone(), _wide(4094))  # ID, P and 4,094 fields: 4,096
    with pytest.raises(ValidationError) as caught:
        prepare(catalog_with_default_zone(), _wide(4095))
    assert caught.value.code is ErrorCode.TOO_MANY_COLUMNS
    assert "4097" in caught.value.message


def _nested(depth: int) -> str:
    """An ARRAY column whose innermost element sits ``depth`` levels deep."""
    return "ARRAY<" * (depth - 1) + "INT" + ">" * (depth - 1)


def test_the_deepest_field_is_16_levels_deep() -> None:
    ok = parse_sql(f"CREATE TABLE ev (id BIGINT PRIMARY KEY, p {_nested(MAX_DEPTH)})")
    prepare(catalog_with_default_zone(), ok)
    deep = parse_sql(f"CREATE TABLE ev (id BIGINT PRIMARY KEY, p {_nested(MAX_DEPTH + 1)})")
    with pytest.raises(ValidationError) as caught:
        prepare(catalog_with_default_zone(), deep)
    assert caught.value.code is ErrorCode.NESTED_TOO_DEEP
    assert "P" + ".element" * MAX_DEPTH in caught.value.message


def test_types_nested_beyond_what_the_parser_is_asked_to_read_are_refused_before_it() -> None:
    with pytest.raises(ValidationError) as caught:
        parse_sql(f"CREATE TABLE ev (id BIGINT PRIMARY KEY, p {_nested(500)})")
    assert caught.value.code is ErrorCode.NESTED_TOO_DEEP
    assert "nest 499 deep; a field sits at most 16 levels deep" in caught.value.message


REFUSED: list[tuple[str, str]] = [
    ("p MAP<STRING>", "column P: a MAP has a key type and a value type, MAP<key type, value type>"),
    ("p MAP<INT, INT, INT>", "column P: a MAP has a key type and a value type"),
    ("p MAP", "found 0 types"),
    ("p ARRAY<INT, INT>", "column P: an ARRAY has one element type, ARRAY<type>; found 2 types"),
    ("p STRUCT<INT>", "column P: a STRUCT names each of its fields and gives its type"),
    ("p STRUCT", "STRUCT<name type, ...>, STRUCT<name: type, ...> or ROW(name type, ...)"),
    ("p ROW()", "column P: a STRUCT names each of its fields"),
    ("p STRUCT<a INT, A INT>", "the STRUCT has two fields named A"),
    ("p STRUCT<a JSON>", "field P.A: unsupported column type JSON"),
    ("p STRUCT<a STRUCT<b VARCHAR(0)>>", "field P.A.B: length of STRING"),
    ("p MAP<INT, ARRAY<DECIMAL(50)>>", "field P.value.element: precision of DECIMAL"),
    ("p STRUCT<a INT DEFAULT 1>", "field P.A: a nested field takes only NULL or NOT NULL"),
    ("p STRUCT<a INT COMMENT 'c'>", "field P.A: a nested field takes only NULL or NOT NULL"),
    ("p STRUCT<a INT PRIMARY KEY>", "field P.A: a nested field takes only NULL or NOT NULL"),
    ("p STRUCT<a INT NOT NULL NULL>", "field P.A: NULL / NOT NULL given twice"),
    ("p STRUCT<a INT> DEFAULT 'x'", "a STRUCT column takes no default"),
]


@pytest.mark.parametrize(("column", "reason"), REFUSED, ids=[s for s, _ in REFUSED])
def test_bad_nested_types_are_refused_naming_the_field(column: str, reason: str) -> None:
    sql = f"CREATE TABLE ev (id BIGINT PRIMARY KEY, {column})"
    with pytest.raises(ValidationError) as caught:
        parse_sql(sql)
    assert caught.value.message.startswith('statement 1 "CREATE TABLE ev'), caught.value.message
    assert reason in caught.value.message
    assert caught.value.position is not None and caught.value.position.statement == 1


def test_the_refusal_says_where_the_statement_stands_in_the_script() -> None:
    with pytest.raises(ValidationError) as caught:
        parse_sql("CREATE SCHEMA s;\n\nCREATE TABLE s.ev (id INT PRIMARY KEY, m MAP<INT>)")
    position = caught.value.position
    assert position is not None and (position.statement, position.line, position.column) == (
        2,
        3,
        1,
    )


def test_a_key_or_an_index_of_a_nested_column_is_refused() -> None:
    with pytest.raises(ValidationError) as caught:
        parse_sql("CREATE TABLE ev (id STRUCT<a INT> PRIMARY KEY)")
    assert "a primary key takes only columns of plain values" in caught.value.message
    cat = prepare(
        catalog_with_default_zone(),
        parse_sql("CREATE TABLE ev (id INT PRIMARY KEY, p ARRAY<INT>)"),
    ).catalog
    with pytest.raises(ValidationError) as indexed:
        prepare(cat, parse_sql("CREATE INDEX ev_p ON ev (p)"))
    assert indexed.value.code is ErrorCode.UNSUPPORTED_CHANGE


def test_row_stays_a_word_outside_table_statements() -> None:
    cat = prepare(Catalog.initial(), parse_sql("CREATE TABLE t (id INT PRIMARY KEY)")).catalog
    sql = (
        "CREATE VIEW v AS SELECT id, sum(id) OVER (ORDER BY id ROWS BETWEEN UNBOUNDED PRECEDING "
        "AND CURRENT ROW) AS running FROM t"
    )
    (command,) = parse_sql(sql, cat)
    assert isinstance(command, c.CreateViewCommand)
    assert [v.name for v in command.columns] == ["ID", "RUNNING"]


def test_a_view_reads_a_struct_field_and_refuses_a_whole_struct() -> None:
    cat = prepare(
        catalog_with_default_zone(),
        parse_sql(
            "CREATE TABLE ev (id BIGINT PRIMARY KEY, payload STRUCT<source VARCHAR(10), "
            "items ARRAY<STRUCT<price DECIMAL(10, 2)>>>)"
        ),
    ).catalog
    (command,) = parse_sql(
        "CREATE VIEW v AS SELECT payload.source AS src, payload.items[0].price AS p FROM ev", cat
    )
    assert isinstance(command, c.CreateViewCommand)
    assert [(v.name, v.type) for v in command.columns] == [("SRC", T.STRING), ("P", T.DECIMAL)]
    with pytest.raises(ValidationError) as caught:
        parse_sql("CREATE VIEW v AS SELECT payload FROM ev", cat)
    assert "column PAYLOAD has STRUCT<" in caught.value.message
    assert "which the catalog cannot type" in caught.value.message


NESTED_WORDS = ["STRUCT<", "ROW(", "ARRAY<", "MAP<", "<", ">", "(", ")", ",", ":", "a", "b"]
NESTED_WORDS += ["INT", "VARCHAR(3)", "DECIMAL(5, 2)", "NOT NULL", "NULL", "DEFAULT 1", '"x.y"']
NESTED_WORDS += ["element", "key", "value", ".", "BIGINT[]", "INT ARRAY", "COMMENT 'c'"]


@settings(max_examples=1000, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    st.lists(st.sampled_from(NESTED_WORDS), min_size=1, max_size=20),
    st.sampled_from(["CREATE TABLE ev (id INT PRIMARY KEY, p {})", "ALTER TABLE ev ADD p {}"]),
)
def test_any_nested_type_text_parses_or_is_refused_in_words(words: list[str], form: str) -> None:
    text = form.format(" ".join(words))
    try:
        commands = parse_sql(text)
    except ValidationError as e:
        assert e.message.startswith('statement 1 "'), e.message
        assert not re.search(r"Token\(|<class |sqlglot|Traceback|exp\.", e.message), e.message
        return
    assert parse(dump(commands)) == commands
    try:
        prepare(catalog_with_default_zone(), commands)
    except CatalogError as e:
        assert e.message.strip()
