"""Hostile SQL: any text parses into commands or is refused with a ValidationError, never a crash.

Two generators: arbitrary text, and statements assembled from DDL keywords, names, types,
numbers and punctuation, which reach deep into the parser far more often than random text.
"""

from __future__ import annotations

import re

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from api.sql import parse_sql
from catalog.catalog import Catalog
from catalog.commands import CommandBase, dump, parse
from catalog.errors import CatalogError, ValidationError
from catalog.prepare import prepare
from catalog.request_ids import commands_digest

INITIAL = Catalog.initial()

WORDS = [
    "CREATE",
    "ALTER",
    "DROP",
    "TABLE",
    "INDEX",
    "ZONE",
    "SCHEMA",
    "IF",
    "NOT",
    "EXISTS",
    "PRIMARY",
    "KEY",
    "ADD",
    "COLUMN",
    "RENAME",
    "TO",
    "SET",
    "DATA",
    "TYPE",
    "DEFAULT",
    "NULL",
    "ON",
    "USING",
    "HASH",
    "SORTED",
    "ASC",
    "DESC",
    "NULLS",
    "FIRST",
    "LAST",
    "WITH",
    "STORAGE_PROFILES",
    "PARTITIONS",
    "REPLICAS",
    "CASCADE",
    "COLOCATE",
    "BY",
    "INT",
    "BIGINT",
    "VARCHAR",
    "DECIMAL",
    "TIMESTAMP",
    "TIME",
    "DATE",
    "UUID",
    "BOOLEAN",
    "BINARY",
    "DOUBLE",
    "REAL",
    "SMALLINT",
    "TINYINT",
    "ZONE",
    "T",
    "S.T",
    '"q t"',
    "c1",
    "PUBLIC",
    "(",
    ")",
    ",",
    ";",
    "=",
    "'x'",
    "1",
    "-1",
    "0",
    "65001",
    "1e309",
    "''",
    "'2026-01-01'",
    "TRUE",
    "FALSE",
    "*",
    ".",
    "--",
    "/*",
    "*/",
    "\\x00",
    "ü",
]


_INTERNALS = re.compile(r"Token\(|<class |sqlglot|Traceback|object at 0x|Expression\(|exp\.")


def _plain(message: str) -> None:
    """A refusal speaks to a person: words, no internal class names or reprs."""
    assert message.strip(), "an empty message"
    assert not _INTERNALS.search(message), message


def _check(text: str) -> None:
    try:
        commands = parse_sql(text)
    except ValidationError as e:
        _plain(e.message)
        return
    assert commands and all(isinstance(c, CommandBase) for c in commands)
    assert len(commands) <= text.count(";") + 1  # one command per statement at most
    # What parses is what a client could send as JSON: it survives that shape unchanged ...
    assert parse(dump(commands)) == commands
    assert len(commands_digest(commands)) == 32  # and can be recorded with a request id
    # ... and applies, or is refused with a catalog error in plain words, nothing else.
    try:
        prepared = prepare(INITIAL, commands)
    except CatalogError as e:
        _plain(e.message)
        return
    assert len(prepared.applied) == len(commands)
    assert bool(prepared.entries) == any(prepared.applied)


@settings(max_examples=600, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.text(max_size=120))
def test_arbitrary_text(text: str) -> None:
    _check(text)


@settings(max_examples=1500, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.lists(st.sampled_from(WORDS), min_size=1, max_size=25))
def test_statements_made_of_ddl_words(words: list[str]) -> None:
    _check(" ".join(words))


TYPES = ["INT", "BIGINT", "VARCHAR", "DECIMAL", "TIMESTAMP", "TIME", "DATE", "UUID", "BOOLEAN"]
TYPES += ["VARBINARY", "DOUBLE", "REAL", "SMALLINT", "TINYINT", "CHAR", "FLOAT", "NUMERIC"]
NUMBERS = st.integers(min_value=-(2**70), max_value=2**70).map(str)
LITERALS = st.one_of(
    NUMBERS,
    st.text(max_size=8).map(lambda t: "'" + t.replace("'", "''") + "'"),
    st.sampled_from(["NULL", "TRUE", "1.5e400", "'2026-02-30'", "'25:00:00'", "X'00ff'"]),
)


@st.composite
def create_table(draw: st.DrawFn) -> str:
    columns = []
    for i in range(draw(st.integers(1, 4))):
        ctype = draw(st.sampled_from(TYPES))
        params = draw(st.lists(NUMBERS, max_size=3))
        spec = f"{ctype}({', '.join(params)})" if params else ctype
        default = f" DEFAULT {draw(LITERALS)}" if draw(st.booleans()) else ""
        null = draw(st.sampled_from(["", " NOT NULL", " NULL"]))
        columns.append(f"C{i} {spec}{null}{default}")
    key = draw(
        st.sampled_from(["", ", PRIMARY KEY (C0)", ", PRIMARY KEY (C9)", ", PRIMARY KEY ()"])
    )
    return f"CREATE TABLE T ({', '.join(columns)}{key})"


@settings(max_examples=800, deadline=None, suppress_health_check=list(HealthCheck))
@given(create_table())
def test_create_table_with_random_types_parameters_and_defaults(text: str) -> None:
    _check(text)
