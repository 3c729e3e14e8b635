"""Ports of Ignite's ``CatalogSchemaValidationTest``: CREATE and DROP SCHEMA refusals.

A schema name is taken once, a missing schema cannot be dropped (IF [NOT] EXISTS make both
no-ops), a name must not be empty, and the system schemas (``SYSTEM``,
``INFORMATION_SCHEMA``, ``DEFINITION_SCHEMA``) are reserved: never created nor dropped.
"""

from __future__ import annotations

import pytest

from catalog import Catalog, ErrorCode
from catalog import commands as c
from tests.unit.catalog.helpers import bad_shape, refused
from tests.unit.catalog.ignite.support import not_applied, sql_refused

RESERVED = ("SYSTEM", "INFORMATION_SCHEMA", "DEFINITION_SCHEMA")


def test_create_schema_with_existing_name() -> None:
    for command in (
        c.CreateSchema(name="PUBLIC"),
        c.CreateSchema(name="PUBLIC", if_not_exists=False),
    ):
        error = refused(Catalog.initial(), ErrorCode.SCHEMA_EXISTS, command)
        assert "schema PUBLIC already exists" in error.message
    not_applied(Catalog.initial(), "CREATE SCHEMA IF NOT EXISTS PUBLIC")


def test_drop_non_existing_schema() -> None:
    for command in (
        c.DropSchema(name="NON_EXISTING"),
        c.DropSchema(name="NON_EXISTING", if_exists=False),
    ):
        error = refused(Catalog.initial(), ErrorCode.SCHEMA_NOT_FOUND, command)
        assert "schema NON_EXISTING not found" in error.message
    not_applied(Catalog.initial(), "DROP SCHEMA IF EXISTS NON_EXISTING")


def test_create_schema_with_null_or_empty_name_is_rejected() -> None:
    error = bad_shape(lambda: c.CreateSchema(name=None))
    assert "name: Input should be a valid string" in str(error)
    error = bad_shape(lambda: c.CreateSchema(name=""))
    assert "name: a name must not be empty" in str(error)


@pytest.mark.parametrize("name", RESERVED)
def test_create_system_schema_is_rejected(name: str) -> None:
    error = refused(Catalog.initial(), ErrorCode.VALIDATION_ERROR, c.CreateSchema(name=name))
    assert f"{name} is a reserved system schema; it cannot be created" in error.message


@pytest.mark.parametrize("name", RESERVED)
def test_drop_system_schema_is_forbidden(name: str) -> None:
    error = refused(Catalog.initial(), ErrorCode.VALIDATION_ERROR, c.DropSchema(name=name))
    assert f"{name} is a system schema; it cannot be dropped" in error.message


@pytest.mark.parametrize("name", RESERVED)
def test_drop_not_exist_schemas(name: str) -> None:
    """The reserved names are exact: in lower case they name ordinary (here missing) schemas."""
    lower = name.lower()
    error = sql_refused(Catalog.initial(), ErrorCode.SCHEMA_NOT_FOUND, f'DROP SCHEMA "{lower}"')
    assert f"schema {lower} not found" in error.message
    refused(Catalog.initial(), ErrorCode.SCHEMA_NOT_FOUND, c.DropSchema(name=lower))


def test_drop_schema_with_null_or_empty_name_is_rejected() -> None:
    error = bad_shape(lambda: c.DropSchema(name=None))
    assert "name: Input should be a valid string" in str(error)
    error = bad_shape(lambda: c.DropSchema(name=""))
    assert "name: a name must not be empty" in str(error)
