"""Strict reading of sqlglot syntax trees: names, qualified names, clauses we do not support.

sqlglot parses far more than the catalog can do; every node we read is checked for arguments
we do not handle, so that ``CREATE OR REPLACE TABLE`` or ``CREATE INDEX ... WHERE`` is refused
rather than silently read as something else.
"""

from __future__ import annotations

from collections.abc import Iterable

from sqlglot import exp

from api.sql.tokens import DIALECT
from catalog.descriptors.schemas import PUBLIC_SCHEMA
from catalog.errors import ValidationError
from catalog.identifiers import fold


def sql_of(node: exp.Expr) -> str:
    """Return ``node`` written back as SQL (for error messages)."""
    return node.sql(dialect=DIALECT)


def _is_set(value: object) -> bool:
    return value is not None and value is not False and value != []


def check_args(node: exp.Expr, allowed: Iterable[str], what: str) -> None:
    """Check that ``node`` sets no argument outside ``allowed``.

    Raises:
        ValidationError: naming the first unsupported clause and where it was found.
    """
    known = set(allowed)
    for key, value in node.args.items():
        if key in known or not _is_set(value):
            continue
        clause = key.upper().rstrip("_").replace("_", " ")
        if isinstance(value, exp.Expr):
            clause = f"{clause} ({sql_of(value)})"
        raise ValidationError(f"{what}: unsupported clause {clause}")


def name_of(node: exp.Expr | str | None, what: str) -> str:
    """Return the object name of an identifier: quoted as written, unquoted upper-cased.

    Raises:
        ValidationError: ``node`` is not a plain identifier (or a column naming one).
    """
    if isinstance(node, exp.Column):
        check_args(node, {"this"}, what)
        node = node.this
    if isinstance(node, exp.Identifier):
        text = node.this
        if isinstance(text, str):
            return fold(text, quoted=bool(node.quoted))
    shown = "nothing" if node is None else node if isinstance(node, str) else sql_of(node)
    raise ValidationError(f"expected a simple name for {what}, found {shown}")


def qualified_name(table: exp.Expr | None, what: str) -> tuple[str, str]:
    """Return ``(schema, name)`` of ``[schema.]name``; the schema defaults to PUBLIC.

    Raises:
        ValidationError: not a table reference, or one with a catalog part or other clauses.
    """
    if not isinstance(table, exp.Table):
        shown = "nothing" if table is None else sql_of(table)
        raise ValidationError(f"expected [schema.]name for {what}, found {shown}")
    if table.args.get("catalog") is not None:
        raise ValidationError(f"{what} {sql_of(table)}: only [schema.]name is supported")
    check_args(table, {"this", "db"}, what)
    db = table.args.get("db")
    schema = PUBLIC_SCHEMA if db is None else name_of(db, f"the schema of the {what}")
    return schema, name_of(table.this, what)


def schema_name(table: exp.Expr | None) -> str:
    """Return the schema named by ``CREATE/DROP SCHEMA``'s target (sqlglot puts it in ``db``).

    Raises:
        ValidationError: a qualified or missing schema name.
    """
    if not isinstance(table, exp.Table) or table.args.get("this") is not None:
        raise ValidationError("expected a schema name")
    if table.args.get("catalog") is not None:
        raise ValidationError(f"a schema name takes no qualifier: {sql_of(table)}")
    check_args(table, {"db"}, "schema name")
    return name_of(table.args.get("db"), "the schema")
