"""Ports of Ignite's ``CatalogSchemaTest`` and ``CreateSchemaCommandValidationTest``.

Schemas are created and dropped by users, ``PUBLIC`` included; the system schemas
(``SYSTEM``, ``INFORMATION_SCHEMA``, ``DEFINITION_SCHEMA``) are reserved.
"""

from __future__ import annotations

import pytest

from catalog import Catalog, ErrorCode
from tests.unit.catalog.ignite.support import applied, not_applied, sql_refused

RESERVED = ("SYSTEM", "INFORMATION_SCHEMA", "DEFINITION_SCHEMA")


def test_create_schema() -> None:
    cat = applied(Catalog.initial(), "CREATE SCHEMA S1")
    assert cat.find_schema("S1") is not None and cat.find_schema("PUBLIC") is not None
    error = sql_refused(cat, ErrorCode.SCHEMA_EXISTS, "CREATE SCHEMA S1")
    assert "schema S1 already exists" in error.message
    not_applied(cat, "CREATE SCHEMA IF NOT EXISTS S1")


def test_create_schema_if_not_exists() -> None:
    cat = applied(Catalog.initial(), "CREATE SCHEMA IF NOT EXISTS S1")
    cat = applied(cat, "CREATE SCHEMA S1_1")
    assert cat.find_schema("S1") is not None and cat.find_schema("S1_1") is not None
    not_applied(cat, "CREATE SCHEMA IF NOT EXISTS S1_1")


def test_drop_empty() -> None:
    initial = Catalog.initial()
    cat = applied(initial, "CREATE SCHEMA S1")
    assert len(cat.schemas()) == len(initial.schemas()) + 1
    cat = applied(cat, "DROP SCHEMA S1")
    assert cat.find_schema("S1") is None and len(cat.schemas()) == len(initial.schemas())
    sql_refused(cat, ErrorCode.SCHEMA_NOT_FOUND, "DROP SCHEMA S1")


def test_drop_if_exists() -> None:
    not_applied(Catalog.initial(), "DROP SCHEMA IF EXISTS S1")
    sql_refused(Catalog.initial(), ErrorCode.SCHEMA_NOT_FOUND, "DROP SCHEMA S1")
    cat = applied(Catalog.initial(), "CREATE SCHEMA S1")
    assert applied(cat, "DROP SCHEMA IF EXISTS S1").find_schema("S1") is None


def test_drop_non_empty() -> None:
    cat = applied(
        Catalog.initial(),
        "CREATE SCHEMA S1; CREATE TABLE S1.T1 (ID INT PRIMARY KEY, V INT); "
        "CREATE INDEX I1 ON S1.T1 (V)",
    )
    error = sql_refused(cat, ErrorCode.SCHEMA_NOT_EMPTY, "DROP SCHEMA S1")
    assert "use CASCADE" in error.message
    assert len(cat.tables()) == 1 and len(cat.indexes()) == 2
    cat = applied(cat, "DROP SCHEMA S1 CASCADE")
    assert cat.find_schema("S1") is None
    assert not cat.tables() and not cat.indexes()


def test_same_table_name_in_different_schemas() -> None:
    cat = applied(
        Catalog.initial(),
        "CREATE SCHEMA S1; CREATE TABLE S1.T1 (ID INT PRIMARY KEY); "
        "CREATE SCHEMA S2; CREATE TABLE S2.T1 (ID INT PRIMARY KEY)",
    )
    assert cat.table("S1", "T1").id != cat.table("S2", "T1").id


def test_same_index_name_in_different_schemas() -> None:
    cat = applied(
        Catalog.initial(),
        "CREATE SCHEMA S1; CREATE TABLE S1.T1 (ID INT PRIMARY KEY, V INT); "
        "CREATE INDEX I1 ON S1.T1 USING HASH (V); "
        "CREATE SCHEMA S2; CREATE TABLE S2.T1 (ID INT PRIMARY KEY, V INT); "
        "CREATE INDEX I1 ON S2.T1 USING HASH (V)",
    )
    assert cat.index("S1", "I1").id != cat.index("S2", "I1").id


def test_drop_create_empty_default_schema() -> None:
    public = Catalog.initial().schema("PUBLIC")
    cat = applied(Catalog.initial(), "DROP SCHEMA PUBLIC")
    assert cat.find_schema("PUBLIC") is None
    sql_refused(cat, ErrorCode.SCHEMA_NOT_FOUND, "CREATE TABLE T (ID INT PRIMARY KEY)")
    cat = applied(cat, "CREATE SCHEMA PUBLIC")
    assert cat.schema("PUBLIC").id != public.id
    assert applied(cat, "CREATE TABLE T (ID INT PRIMARY KEY)").find_table("PUBLIC", "T")


def test_public_schema_is_dropped_as_any_other() -> None:
    cat = applied(Catalog.initial(), "CREATE TABLE T (ID INT PRIMARY KEY)")
    sql_refused(cat, ErrorCode.SCHEMA_NOT_EMPTY, "DROP SCHEMA PUBLIC")
    assert applied(cat, "DROP SCHEMA PUBLIC CASCADE").find_schema("PUBLIC") is None


@pytest.mark.parametrize("name", RESERVED)
def test_reserved_system_schema_cannot_be_created(name: str) -> None:
    """``CreateSchemaCommandValidationTest``: reserved names, even with IF NOT EXISTS."""
    for text in (f"CREATE SCHEMA {name}", f"CREATE SCHEMA IF NOT EXISTS {name}"):
        error = sql_refused(Catalog.initial(), ErrorCode.VALIDATION_ERROR, text)
        assert f"{name} is a reserved system schema" in error.message


@pytest.mark.parametrize("name", RESERVED)
def test_system_schema_cannot_be_dropped(name: str) -> None:
    for text in (f"DROP SCHEMA {name}", f"DROP SCHEMA IF EXISTS {name} CASCADE"):
        error = sql_refused(Catalog.initial(), ErrorCode.VALIDATION_ERROR, text)
        assert f"{name} is a system schema; it cannot be dropped" in error.message


@pytest.mark.parametrize("name", RESERVED)
def test_no_objects_in_system_schemas(name: str) -> None:
    """``exceptionIsThrownIfSchemaIsReserved``: refused whether the schema exists or not."""
    for text in (
        f"CREATE TABLE {name}.T (ID INT PRIMARY KEY)",
        f"DROP TABLE IF EXISTS {name}.T",
        f"CREATE INDEX I ON {name}.T (ID)",
        f"DROP INDEX IF EXISTS {name}.I",
        f"ALTER TABLE IF EXISTS {name}.T ADD COLUMN C INT",
    ):
        error = sql_refused(Catalog.initial(), ErrorCode.VALIDATION_ERROR, text)
        assert f"objects in system schema {name} cannot be changed" in error.message
