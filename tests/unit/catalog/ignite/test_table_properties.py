"""Ports of Ignite's table properties and table storage profiles.

From ``CatalogTableTest`` (``createTableWithStalenessConfiguration``,
``alterTableStalenessConfiguration``), ``AlterTableSetPropertyCommandValidationTest`` and
``CreateTableCommandValidationTest.exceptionIsThrownIfZoneDoesNotContainTableStorageProfile``.
"""

from __future__ import annotations

import pytest

from catalog import Catalog, CatalogEvent, ErrorCode
from catalog import commands as c
from catalog.descriptors.tables import DEFAULT_MIN_STALE_ROWS_COUNT, DEFAULT_STALE_ROWS_FRACTION
from catalog.snapshots import decode_snapshot, encode_snapshot
from tests.unit.catalog.helpers import bad_shape, events
from tests.unit.catalog.ignite.support import applied, not_applied, sql, sql_refused

TABLE = "CREATE TABLE {name} (ID INT PRIMARY KEY, VAL INT)"


def _properties(cat: Catalog, name: str) -> tuple[float, int]:
    table = cat.table("PUBLIC", name)
    return table.stale_rows_fraction, table.min_stale_rows_count


def test_create_table_with_staleness_configuration() -> None:
    cat = applied(Catalog.initial(), TABLE.format(name="DEFAULTS"))
    cat = applied(cat, TABLE.format(name="STALE_ROWS") + " WITH (STALE ROWS FRACTION 0.8)")
    cat = applied(cat, TABLE.format(name="MIN_ROWS") + " WITH (MIN STALE ROWS 2000)")
    cat = applied(
        cat,
        TABLE.format(name="EVERYTHING") + " WITH (MIN STALE ROWS 2000, STALE ROWS FRACTION 0.8)",
    )
    defaults = (DEFAULT_STALE_ROWS_FRACTION, DEFAULT_MIN_STALE_ROWS_COUNT)
    assert _properties(cat, "DEFAULTS") == defaults == (0.2, 500)
    assert _properties(cat, "STALE_ROWS") == (0.8, DEFAULT_MIN_STALE_ROWS_COUNT)
    assert _properties(cat, "MIN_ROWS") == (DEFAULT_STALE_ROWS_FRACTION, 2000)
    assert _properties(cat, "EVERYTHING") == (0.8, 2000)


def test_alter_table_staleness_configuration() -> None:
    before = applied(Catalog.initial(), TABLE.format(name="T"))
    prepared = sql(before, "ALTER TABLE T SET (STALE ROWS FRACTION 0.8, MIN STALE ROWS 2000)")
    cat = prepared.catalog
    assert _properties(cat, "T") == (0.8, 2000)
    assert events(prepared) == [CatalogEvent.TABLE_ALTER]
    assert cat.table("PUBLIC", "T").schema_version == before.table("PUBLIC", "T").schema_version
    cat = applied(cat, "ALTER TABLE T SET STALE ROWS FRACTION 0.1")
    assert _properties(cat, "T") == (0.1, 2000)
    cat = applied(cat, "ALTER TABLE T SET MIN STALE ROWS 0")
    assert _properties(cat, "T") == (0.1, 0)
    not_applied(cat, "ALTER TABLE T SET MIN STALE ROWS 0")  # unchanged: no version
    assert _properties(before, "T") == (0.2, 500)  # the earlier version keeps its values


@pytest.mark.parametrize("fraction", [-0.1, 1.01, float("inf"), float("nan")])
def test_stale_rows_fraction_should_be_in_valid_range(fraction: float) -> None:
    bad_shape(lambda: c.AlterTableProperties(table="T", stale_rows_fraction=fraction))
    bad_shape(
        lambda: c.CreateTable(
            name="T", columns=[], primary_key=["ID"], stale_rows_fraction=fraction
        )
    )


def test_min_stale_rows_count_should_be_non_negative() -> None:
    bad_shape(lambda: c.AlterTableProperties(table="T", min_stale_rows_count=-1))
    bad_shape(lambda: applied(Catalog.initial(), "ALTER TABLE T SET MIN STALE ROWS -1"))


def test_alter_table_properties_exception_is_thrown_if_schema_not_exists() -> None:
    text = "ALTER TABLE NOPE.T SET MIN STALE ROWS 1"
    sql_refused(Catalog.initial(), ErrorCode.SCHEMA_NOT_FOUND, text)
    not_applied(Catalog.initial(), text.replace("TABLE NOPE", "TABLE IF EXISTS NOPE"))


def test_alter_table_properties_exception_is_thrown_if_table_not_exists() -> None:
    sql_refused(Catalog.initial(), ErrorCode.TABLE_NOT_FOUND, "ALTER TABLE T SET MIN STALE ROWS 1")
    not_applied(Catalog.initial(), "ALTER TABLE IF EXISTS T SET MIN STALE ROWS 1")


def test_alter_table_properties_exception_is_thrown_if_schema_is_reserved() -> None:
    text = "ALTER TABLE SYSTEM.T SET MIN STALE ROWS 1"
    error = sql_refused(Catalog.initial(), ErrorCode.VALIDATION_ERROR, text)
    assert "system schema SYSTEM" in error.message


def test_exception_is_thrown_if_zone_does_not_contain_table_storage_profile() -> None:
    cat = applied(Catalog.initial(), "CREATE ZONE Z STORAGE PROFILES ['default', 'ssd']")
    error = sql_refused(
        cat,
        ErrorCode.VALIDATION_ERROR,
        TABLE.format(name="T") + " ZONE Z STORAGE PROFILE 'slow'",
    )
    assert "zone Z has no storage profile slow; its profiles are default, ssd" in error.message
    cat = applied(cat, TABLE.format(name="T") + " ZONE Z STORAGE PROFILE 'ssd'")
    assert cat.table("PUBLIC", "T").storage_profile == "ssd"
    cat = applied(cat, TABLE.format(name="U") + " ZONE Z")
    assert cat.table("PUBLIC", "U").storage_profile is None  # the zone's first, its default


def test_table_properties_survive_a_snapshot() -> None:
    cat = applied(Catalog.initial(), "CREATE ZONE Z STORAGE PROFILES ['default', 'ssd']")
    cat = applied(
        cat, TABLE.format(name="T") + " ZONE Z STORAGE PROFILE 'ssd' WITH (MIN STALE ROWS 7)"
    )
    again = decode_snapshot(encode_snapshot(cat))
    assert again.digest() == cat.digest()
    table = again.table("PUBLIC", "T")
    assert (table.storage_profile, table.min_stale_rows_count) == ("ssd", 7)
