"""``parse_sql`` refusals: every unsupported or invalid statement is named in the error."""

from __future__ import annotations

import pytest

from api.sql import parse_sql
from catalog import ErrorCode, ValidationError

REFUSED: list[tuple[str, str]] = [
    # not DDL, or DDL the catalog does not have
    ("SELECT 1", "SELECT is not a supported DDL statement"),
    ("INSERT INTO t VALUES (1)", "INSERT is not a supported DDL statement"),
    ("UPDATE t SET a = 1", "UPDATE is not a supported DDL statement"),
    ("DELETE FROM t", "DELETE is not a supported DDL statement"),
    ("GRANT SELECT ON t TO u", "GRANT: expected USER or ROLE after TO"),
    ("EXPLAIN SELECT 1", "unsupported statement"),
    ("TRUNCATE TABLE t", "TRUNCATE"),
    ("CREATE MATERIALIZED VIEW v AS SELECT 1", "CREATE MATERIALIZED VIEW is not supported"),
    ("CREATE VIEW v AS SELECT 1", "CREATE VIEW is typed against the catalog; send it to a server"),
    ("DROP VIEW v CASCADE", "DROP VIEW: unsupported clause CASCADE"),
    ("CREATE SEQUENCE q", "CREATE SEQUENCE is not supported"),
    ("FOO BAR", "FOO is not a supported DDL statement"),
    # syntax errors
    ("CREATE TABLE t (id INT PRIMARY KEY,", "syntax error at line 1"),
    ("CREATE INDEX i ON t (", "end of statement"),
    ("CREATE TABLE t (id INT PRIMARY KEY, PRIMARY KEY (id DESC))", "PRIMARY KEY USING SORTED"),
    # schemas
    ("CREATE SCHEMA a.b", "takes no qualifier"),
    ("CREATE SCHEMA s AUTHORIZATION u", "unsupported statement"),
    # CREATE TABLE
    ("CREATE TABLE t (a INT)", "needs a PRIMARY KEY"),
    ("CREATE TABLE t (a INT PRIMARY KEY, b INT PRIMARY KEY)", "more than one PRIMARY KEY"),
    ("CREATE TABLE t (a INT PRIMARY KEY, PRIMARY KEY (a))", "more than one PRIMARY KEY"),
    ("CREATE TABLE t (a INT NULL PRIMARY KEY)", "primary-key column A cannot be NULL"),
    ("CREATE TABLE t (a INT NULL, PRIMARY KEY (a))", "primary-key column A cannot be NULL"),
    ("CREATE TABLE t (a INT NOT NULL NULL PRIMARY KEY)", "NULL / NOT NULL given twice"),
    ("CREATE TABLE t (a INT PRIMARY KEY DEFAULT 1 DEFAULT 2)", "DEFAULT given twice"),
    ("CREATE OR REPLACE TABLE t (a INT PRIMARY KEY)", "unsupported clause REPLACE"),
    ("CREATE TEMPORARY TABLE t (a INT PRIMARY KEY)", "unsupported clause PROPERTIES"),
    ("CREATE TABLE t AS SELECT 1", "AS SELECT is not supported"),
    ("CREATE TABLE c.s.t (a INT PRIMARY KEY)", "only [schema.]name"),
    ("CREATE TABLE t (a INT PRIMARY KEY, b INT UNIQUE)", "unsupported column constraint UNIQUE"),
    ("CREATE TABLE t (a INT PRIMARY KEY, CHECK (a > 0))", "unsupported table element"),
    ("CREATE TABLE t (a INT PRIMARY KEY, b INT CHECK (b > 0))", "constraint CHECK"),
    ("CREATE TABLE t (a INT PRIMARY KEY, b INT, UNIQUE (b))", "unsupported table element"),
    ("CREATE TABLE t (a INT PRIMARY KEY) ZONE", "expected a zone name"),
    ("CREATE TABLE t (a INT PRIMARY KEY) COLOCATE BY a", "expected '(' before"),
    ("CREATE TABLE t (a INT PRIMARY KEY) COLOCATE (a) COLOCATE (a)", "COLOCATE BY given twice"),
    ("CREATE TABLE t (a INT PRIMARY KEY) ZONE z WITH (ZONE = 'y')", "zone is given twice"),
    ("CREATE TABLE t (a INT PRIMARY KEY) WITH (REPLICAS = 3)", "unsupported table option"),
    ("CREATE TABLE t (a INT, PRIMARY KEY USING BTREE (a))", "expected HASH or SORTED"),
    ("CREATE TABLE t (a INT PRIMARY KEY, b INT, c INT) COLOCATE BY (b)", "not a primary-key"),
    # column types
    ("CREATE TABLE t (a INT PRIMARY KEY, b DATETIME)", "unsupported column type DATETIME"),
    ("CREATE TABLE t (a INT PRIMARY KEY, b GEOMETRY)", "unsupported column type GEOMETRY"),
    ("CREATE TABLE t (a INT PRIMARY KEY, b JSON)", "unsupported column type JSON"),
    ("CREATE TABLE t (a INT PRIMARY KEY, b TIMESTAMP WITH TIME ZONE(3, 1))", "syntax error"),
    ("CREATE TABLE t (a INT PRIMARY KEY, b FLOAT(10))", "takes no such parameters"),
    ("CREATE TABLE t (a INT PRIMARY KEY, b INT(11))", "takes no such parameters"),
    ("CREATE TABLE t (a INT PRIMARY KEY, b VARCHAR(MAX))", "parameters must be integers"),
    ("CREATE TABLE t (a INT PRIMARY KEY, b VARCHAR(0))", "length of STRING"),
    ("CREATE TABLE t (a INT PRIMARY KEY, b DECIMAL(50))", "precision of DECIMAL"),
    ("CREATE TABLE t (a INT PRIMARY KEY, b)", "unsupported table element"),
    # defaults
    ("CREATE TABLE t (a INT PRIMARY KEY, b INT DEFAULT 1 + 2)", "must be a constant literal"),
    ("CREATE TABLE t (a INT PRIMARY KEY, b INT DEFAULT rand())", "must be a constant literal"),
    ("CREATE TABLE t (a INT PRIMARY KEY, b UUID DEFAULT gen_random_uuid())", "constant literal"),
    ("CREATE TABLE t (a INT PRIMARY KEY, b TIMESTAMP DEFAULT CURRENT_TIMESTAMP)", "constant"),
    ("CREATE TABLE t (a INT PRIMARY KEY, b INT DEFAULT a)", "must be a constant literal"),
    ("CREATE TABLE t (a INT PRIMARY KEY, b INT DEFAULT 1.5)", "expected an integer"),
    ("CREATE TABLE t (a INT PRIMARY KEY, b TINYINT DEFAULT 300)", "out of range"),
    ("CREATE TABLE t (a INT PRIMARY KEY, b VARCHAR(2) DEFAULT 'abc')", "longer than 2"),
    ("CREATE TABLE t (a INT PRIMARY KEY, b DECIMAL(5, 1) DEFAULT 1.25)", "fractional digits"),
    ("CREATE TABLE t (a INT PRIMARY KEY, b DATE DEFAULT 'not a date')", "does not fit"),
    (
        "CREATE TABLE t (a INT PRIMARY KEY, b DATE DEFAULT TIMESTAMP '2024-01-01 00:00:00')",
        "a TIMESTAMP literal is not a DATE default",
    ),
    ("CREATE TABLE t (a INT PRIMARY KEY, b BYTES DEFAULT 'ab')", "hex literal"),
    ("CREATE TABLE t (a INT PRIMARY KEY, b VARCHAR DEFAULT X'ab')", "not a STRING default"),
    ("CREATE TABLE t (a INT PRIMARY KEY, b BOOLEAN DEFAULT 1)", "expected a boolean"),
    # bad names surface as the command's own shape error
    ('CREATE TABLE "" (a INT PRIMARY KEY)', "a name must not be empty"),
    ('CREATE SCHEMA "   "', "a name must not be blank"),
    ("CREATE TABLE t (a INT PRIMARY KEY, A INT)", "duplicate column name: A"),
    ("CREATE TABLE t ('a' INT PRIMARY KEY)", "expected a simple name"),
    # DROP
    ("DROP TABLE t CASCADE", "DROP TABLE: unsupported clause CASCADE"),
    ("DROP TABLE c.s.t", "only [schema.]name"),
    # ALTER TABLE
    ("ALTER TABLE t ADD COLUMN c INT PRIMARY KEY", "cannot be a PRIMARY KEY"),
    ("ALTER TABLE t ADD COLUMN (c INT PRIMARY KEY)", "cannot be a PRIMARY KEY"),
    ("ALTER TABLE t ADD COLUMN (c INT, PRIMARY KEY (c))", "expected a column definition"),
    ("ALTER TABLE t ADD COLUMN (c INT) foo", "expected end of statement"),
    ("ALTER TABLE t ADD COLUMN c INT NOT NULL", "NOT NULL column C needs a default"),
    ("ALTER TABLE t ADD c INT, DROP COLUMN d", "one kind of action per statement"),
    ("ALTER TABLE t DROP COLUMN c, ADD d INT", "one kind of action per statement"),
    ("ALTER TABLE t FROBNICATE", "one kind of action per statement"),
    ("ALTER TABLE t DROP c d", "expected end of statement"),
    ("ALTER TABLE t DROP COLUMN c, c", "duplicate column name: C"),
    ("ALTER TABLE t DROP CONSTRAINT pk", "unsupported"),
    ("ALTER TABLE t RENAME COLUMN IF EXISTS a TO b", "RENAME COLUMN IF EXISTS A is not supported"),
    ("ALTER TABLE t RENAME TO s.u", "cannot move to another schema"),
    ("ALTER TABLE t ALTER COLUMN c SET DEFAULT CURRENT_DATE", "must be a constant literal"),
    ("ALTER TABLE t ALTER COLUMN c SET DATA TYPE JSON", "unsupported column type JSON"),
    ("ALTER TABLE t ALTER COLUMN c TYPE INT USING c::INT", "unsupported clause USING"),
    ("ALTER TABLE t ALTER COLUMN c SET VISIBLE", "unsupported"),
    # indexes
    ("CREATE INDEX ON t (a)", "an index needs a name"),
    ("CREATE INDEX s.i ON t (a)", "expected ON [schema.]table"),
    ("CREATE INDEX i ON t USING GIN (a)", "unsupported index type GIN"),
    ("CREATE INDEX i ON t USING HASH (a DESC)", "a hash index takes no ASC/DESC/NULLS"),
    ("CREATE INDEX i ON t USING HASH (a NULLS FIRST)", "a hash index takes no ASC/DESC/NULLS"),
    ("CREATE INDEX i ON t (a) WHERE a > 0", "unsupported clause WHERE"),
    ("CREATE INDEX i ON t (a) INCLUDE (b)", "unsupported clause INCLUDE"),
    ("CREATE INDEX i ON t (a + 1)", "expected a simple name for an index column"),
    ("CREATE INDEX i ON t (a, a)", "duplicate index column: A"),
    ("ALTER INDEX i RENAME TO s.j", "cannot move to another schema"),
    # zones
    ("CREATE ZONE", "expected a zone name"),
    ("CREATE ZONE z WITH (FOO=1)", "unsupported zone option FOO"),
    ("CREATE ZONE z WITH (DATA_NODES_AUTO_ADJUST=10)", "unsupported zone option"),
    ("CREATE ZONE z WITH (PARTITIONS='4')", "expected an integer for PARTITIONS"),
    ("CREATE ZONE z WITH (PARTITIONS=-4)", "expected an integer for PARTITIONS"),
    ("CREATE ZONE z WITH (PARTITIONS=2.5)", "expected an integer for PARTITIONS"),
    ("CREATE ZONE z WITH (STORAGE_PROFILES=ssd)", "a string literal for STORAGE_PROFILES"),
    ("CREATE ZONE z WITH (PARTITIONS 4)", "expected '=' after PARTITIONS"),
    ("CREATE ZONE z WITH (PARTITIONS=4", "expected ',' or ')'"),
    ("CREATE ZONE z WITH (PARTITIONS=4) extra", "expected end of statement, found 'extra'"),
    ("CREATE ZONE z WITH (REPLICAS=1, REPLICAS=2)", "zone option REPLICAS given twice"),
    ("CREATE ZONE z WITH (PARTITIONS=0)", "partitions"),
    ("CREATE ZONE z WITH (REPLICAS=3, QUORUM_SIZE=7)", "quorum 7 is out of range"),
    ("CREATE ZONE z WITH (DATA_NODES_FILTER='region = EU')", "is not a valid JSONPath"),
    ("CREATE ZONE z WITH (STORAGE_PROFILES='a,,b')", "a name must not be empty"),
    ("ALTER ZONE z", "expected SET"),
    ("ALTER ZONE z SET", "expected a zone option"),
    ("ALTER ZONE z RENAME y", "expected SET"),
    ("DROP ZONE z CASCADE", "expected end of statement, found 'CASCADE'"),
    ("DROP ZONE s.z", "expected end of statement, found '.'"),
]


@pytest.mark.parametrize(("sql", "reason"), REFUSED, ids=[s for s, _ in REFUSED])
def test_unsupported_statement_is_refused_naming_it(sql: str, reason: str) -> None:
    with pytest.raises(ValidationError) as caught:
        parse_sql(sql)
    message = caught.value.message
    shown = " ".join(sql.split())[:40]
    assert message.startswith(f'statement 1 "{shown}'), message
    assert reason in message
    assert caught.value.code is ErrorCode.VALIDATION_ERROR


def test_refusal_names_the_statement_by_position_in_the_script() -> None:
    sql = "CREATE SCHEMA a;\n\nCREATE SCHEMA b; ;\n  SELECT *\n  FROM t;\nCREATE SCHEMA c"
    with pytest.raises(ValidationError) as caught:
        parse_sql(sql)
    assert caught.value.message.startswith('statement 3 "SELECT * FROM t": ')


def test_long_statement_is_shown_truncated() -> None:
    columns = ", ".join(f"c{i} INT" for i in range(40))
    sql = f"CREATE TABLE wide ({columns})"
    with pytest.raises(ValidationError) as caught:
        parse_sql(f"CREATE SCHEMA x; {sql}")
    message = caught.value.message
    shown = message.split('"')[1]
    assert message.startswith('statement 2 "CREATE TABLE wide (c0 INT, c1 INT')
    assert shown.endswith("...") and len(shown) == 80
    assert "needs a PRIMARY KEY" in message


@pytest.mark.parametrize(
    ("sql", "number", "start"),
    [
        ("CREATE SCHEMA a; CREATE SCHEMA 'unterminated", 2, "CREATE SCHEMA 'unterminated"),
        ('CREATE SCHEMA a; ; DROP TABLE "unterminated', 2, 'DROP TABLE "unterminated'),
        ("CREATE SCHEMA a; /* unterminated comment", 2, "/* unterminated comment"),
        ("DROP TABLE 'x", 1, "DROP TABLE 'x"),
    ],
)
def test_unreadable_text_names_the_statement(sql: str, number: int, start: str) -> None:
    with pytest.raises(ValidationError) as caught:
        parse_sql(sql)
    assert caught.value.message.startswith(f'statement {number} "{start}": cannot read SQL: ')


def test_shape_error_keeps_the_command_details() -> None:
    with pytest.raises(ValidationError) as caught:
        parse_sql(
            "CREATE SCHEMA ok; CREATE TABLE t (a INT PRIMARY KEY, b VARCHAR(2) DEFAULT 'abc')"
        )
    error = caught.value
    assert error.message.startswith('statement 2 "CREATE TABLE t ')
    assert "longer than 2 characters" in error.message
    assert error.details, "the command's per-field details are kept"
    assert isinstance(error.__cause__, ValidationError)
