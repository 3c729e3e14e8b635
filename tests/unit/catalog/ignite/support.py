"""What the ported Ignite suites share: DDL in SQL against an in-memory catalog.

Each test is named after the Ignite test whose behaviour it checks (``testDropIfExists`` →
``test_drop_if_exists``) and goes through this project's SQL or JSON commands.
"""

from __future__ import annotations

from api.sql.statements import parse_sql
from catalog import Catalog, CatalogError, ErrorCode, Prepared
from tests.unit.catalog.helpers import refused, run

SIMPLE_TABLE = (
    "CREATE TABLE {name} (ID INT NOT NULL, VAL INT, VAL_NOT_NULL INT NOT NULL DEFAULT 1, "
    "DEC DECIMAL(10, 2), STR VARCHAR(100), DEC_SCALE DECIMAL(10, 5), PRIMARY KEY (ID))"
)
"""Ignite's ``simpleTable``: six columns, keyed by ID."""


def sql(cat: Catalog, text: str) -> Prepared:
    """Prepare the statements of ``text`` as one batch against ``cat``."""
    return run(cat, *parse_sql(text))


def applied(cat: Catalog, text: str) -> Catalog:
    """Return ``cat`` after ``text``, which must change it (``tryApplyAndExpectApplied``)."""
    prepared = sql(cat, text)
    assert prepared.entries, f"{text!r} changed nothing"
    return prepared.catalog


def not_applied(cat: Catalog, text: str) -> None:
    """Check that ``text`` is accepted and changes nothing (``tryApplyAndExpectNotApplied``)."""
    prepared = sql(cat, text)
    assert not prepared.entries, f"{text!r} changed the catalog"
    assert not any(prepared.applied)


def sql_refused(cat: Catalog, code: ErrorCode, text: str) -> CatalogError:
    """Check that ``text`` is refused with ``code`` and changes nothing."""
    return refused(cat, code, *parse_sql(text))


def simple_table(name: str = "TEST_TABLE") -> Catalog:
    """Return the initial catalog with Ignite's ``simpleTable`` named ``name``."""
    return applied(Catalog.initial(), SIMPLE_TABLE.format(name=name))
