"""Ports of Ignite's ``CatalogZoneTest`` and, from ``commands/``,
``CreateZoneCommandValidationTest``, ``AlterZoneCommandValidationTest``,
``RenameZoneCommandValidationTest``, ``DropZoneCommandValidationTest`` and
``CreateSchemaCommandValidationTest``.

What ``test_catalog_zone.py`` and ``test_catalog_schema.py`` port already is left out (node
filters, storage profiles, schemas that exist). The catalog here starts with the zone
``Default`` (Ignite creates it with the first table); versions and activation are the nodes'
business, so "the catalog from the past" is the catalog a command was prepared against.
"""

from __future__ import annotations

from typing import Any

import pytest

from catalog import Catalog, CatalogError, CatalogEvent, ErrorCode
from catalog import commands as c
from tests.unit.catalog.helpers import (
    apply,
    bad_shape,
    catalog_with_default_zone,
    entry_types,
    events,
    refused,
    run,
)
from tests.unit.catalog.ignite.support import SIMPLE_TABLE, applied, not_applied, sql, sql_refused

PROFILES = "STORAGE PROFILES ['default']"
NULL_AND_BLANK = [None, "", " ", "  "]
"""Ignite's ``nullAndBlankStrings``."""

QUORUM_TABLE = [
    # replicas (None: not given), default quorum, minimum quorum, maximum quorum
    (None, 1, 1, 1),
    (1, 1, 1, 1),
    (2, 2, 2, 2),
    (3, 2, 2, 2),
    (4, 2, 2, 2),
    (5, 3, 2, 3),
    (6, 3, 2, 3),
    (7, 3, 2, 4),
    (8, 3, 2, 4),
    (9, 3, 2, 5),
    (10, 3, 2, 5),
]
"""Ignite's ``quorumTable`` (the consensus group size, ``2 * quorum - 1``, is not held here)."""


def _catalog_with_default_zone_table() -> Catalog:
    """``CatalogZoneTest``'s set-up: a table in the default zone."""
    return applied(Catalog.initial(), SIMPLE_TABLE.format(name="DEFAULT_ZONE_TABLE"))


def _bad_name(command: dict[str, Any]) -> str:
    """Return the message of the refusal of a JSON command with a bad name."""
    error = bad_shape(lambda: c.parse(command))
    assert "name" in error.message, error.message
    return error.message


def _zone_sql(zone: str, replicas: int | None, quorum: int | None = None) -> str:
    """Return CREATE ZONE with the replicas and quorum given (none when None)."""
    elements = [f"REPLICAS {replicas}"] if replicas is not None else []
    elements += [f"QUORUM SIZE {quorum}"] if quorum is not None else []
    listed = f" ({', '.join(elements)})" if elements else ""
    return f"CREATE ZONE {zone}{listed} {PROFILES}"


# -- CatalogZoneTest -------------------------------------------------------------------------


def test_create_zone() -> None:
    before = _catalog_with_default_zone_table()
    cat = applied(
        before,
        "CREATE ZONE TEST_ZONE_NAME (PARTITIONS 42, REPLICAS 15, NODES FILTER '$.expression') "
        "STORAGE PROFILES ['test_profile']",
    )
    assert before.find_zone("TEST_ZONE_NAME") is None
    zone = cat.zone("TEST_ZONE_NAME")
    assert (zone.name, zone.partitions, zone.replicas) == ("TEST_ZONE_NAME", 42, 15)
    assert zone.filter == "$.expression"
    assert zone.storage_profiles == ("test_profile",)


def test_set_default_zone() -> None:
    cat = _catalog_with_default_zone_table()
    initial_default = cat.default_zone()
    assert initial_default is not None
    cat = applied(cat, "CREATE ZONE TEST_ZONE_NAME STORAGE PROFILES ['test_profile']")
    assert cat.default_zone() == initial_default

    before = cat
    cat = applied(cat, "ALTER ZONE TEST_ZONE_NAME SET DEFAULT")
    default = cat.default_zone()
    assert default is not None and default.name == "TEST_ZONE_NAME"
    assert before.default_zone() == initial_default  # history is not affected
    assert default.id != initial_default.id

    cat = applied(cat, SIMPLE_TABLE.format(name="TEST_TABLE"))
    assert cat.table("PUBLIC", "TEST_TABLE").zone_id == default.id

    not_applied(cat, "ALTER ZONE TEST_ZONE_NAME SET DEFAULT")

    cat = applied(cat, "DROP TABLE DEFAULT_ZONE_TABLE")
    cat = applied(cat, f'DROP ZONE "{initial_default.name}"')
    assert cat.find_zone(initial_default.name) is None


def test_drop_zone() -> None:
    before = applied(_catalog_with_default_zone_table(), f"CREATE ZONE TEST_ZONE_NAME {PROFILES}")
    cat = applied(before, "DROP ZONE TEST_ZONE_NAME")

    zone = before.zone("TEST_ZONE_NAME")
    assert zone.name == "TEST_ZONE_NAME"
    assert before.zone_by_id(zone.id) == zone

    assert cat.find_zone("TEST_ZONE_NAME") is None
    with pytest.raises(CatalogError) as by_id:
        cat.zone_by_id(zone.id)
    assert by_id.value.code is ErrorCode.ZONE_NOT_FOUND
    assert f"zone with id {zone.id}" in by_id.value.message

    error = sql_refused(cat, ErrorCode.ZONE_NOT_FOUND, "DROP ZONE TEST_ZONE_NAME")
    assert "zone TEST_ZONE_NAME not found" in error.message


def test_drop_default_zone_is_rejected() -> None:
    cat = _catalog_with_default_zone_table()
    error = sql_refused(cat, ErrorCode.ZONE_IN_USE, 'DROP ZONE "Default"')
    assert "zone Default is the default zone" in error.message

    # A renamed default zone is still the default, and still cannot be dropped.
    default = cat.default_zone()
    cat = applied(cat, 'ALTER ZONE "Default" RENAME TO TEST_ZONE_NAME')
    assert cat.find_zone("Default") is None
    assert cat.default_zone() == cat.zone("TEST_ZONE_NAME")
    assert default is not None and cat.zone("TEST_ZONE_NAME").id == default.id
    error = sql_refused(cat, ErrorCode.ZONE_IN_USE, "DROP ZONE TEST_ZONE_NAME")
    assert "zone TEST_ZONE_NAME is the default zone" in error.message
    assert cat.default_zone() == cat.zone("TEST_ZONE_NAME")


def test_rename_zone() -> None:
    before = applied(
        _catalog_with_default_zone_table(),
        f"CREATE ZONE TEST_ZONE_NAME (PARTITIONS 42, REPLICAS 15) {PROFILES}",
    )
    prepared = sql(before, 'ALTER ZONE TEST_ZONE_NAME RENAME TO "RenamedZone"')
    assert entry_types(prepared) == ["alter_zone"]
    cat = prepared.catalog

    old = before.zone("TEST_ZONE_NAME")
    assert old.name == "TEST_ZONE_NAME" and before.zone_by_id(old.id) == old

    zone = cat.zone("RenamedZone")
    assert cat.find_zone("TEST_ZONE_NAME") is None
    assert zone.name == "RenamedZone" and zone.id == old.id
    assert (zone.partitions, zone.replicas) == (42, 15)


def test_rename_default_zone() -> None:
    cat = _catalog_with_default_zone_table()
    default = cat.default_zone()
    assert default is not None and default.name != "TEST_ZONE_NAME"
    cat = applied(cat, f'ALTER ZONE "{default.name}" RENAME TO TEST_ZONE_NAME')
    renamed = cat.default_zone()
    assert renamed is not None
    assert (renamed.name, renamed.id) == ("TEST_ZONE_NAME", default.id)


def test_default_zone() -> None:
    cat = _catalog_with_default_zone_table()
    default = cat.zone("Default")
    error = sql_refused(
        cat, ErrorCode.ZONE_EXISTS, f'CREATE ZONE "Default" (PARTITIONS 42, REPLICAS 15) {PROFILES}'
    )
    assert "zone Default already exists" in error.message
    assert cat.zone("Default") == default


def test_alter_zone() -> None:
    before = applied(
        _catalog_with_default_zone_table(),
        "CREATE ZONE TEST_ZONE_NAME (PARTITIONS 42, REPLICAS 15, NODES FILTER '$.expression') "
        f"{PROFILES}",
    )
    prepared = sql(
        before,
        "ALTER ZONE TEST_ZONE_NAME SET (REPLICAS 2, QUORUM SIZE 2, "
        "NODES FILTER '$.newExpression', STORAGE_PROFILES = 'test_profile')",
    )
    assert entry_types(prepared) == ["alter_zone"]  # one entry: one new version
    cat = prepared.catalog
    zone = cat.zone("TEST_ZONE_NAME")
    assert zone.id == before.zone("TEST_ZONE_NAME").id
    assert (zone.name, zone.partitions, zone.replicas, zone.quorum) == ("TEST_ZONE_NAME", 42, 2, 2)
    assert zone.filter == "$.newExpression"
    assert zone.storage_profiles == ("test_profile",)
    assert before.zone("TEST_ZONE_NAME").replicas == 15


def test_create_zone_with_same_name() -> None:
    cat = applied(
        _catalog_with_default_zone_table(),
        f"CREATE ZONE TEST_ZONE_NAME (PARTITIONS 42, REPLICAS 15) {PROFILES}",
    )
    error = sql_refused(
        cat,
        ErrorCode.ZONE_EXISTS,
        f"CREATE ZONE TEST_ZONE_NAME (PARTITIONS 8, REPLICAS 1) {PROFILES}",
    )
    assert "zone TEST_ZONE_NAME already exists" in error.message
    zone = cat.zone("TEST_ZONE_NAME")
    assert cat.zone_by_id(zone.id) == zone
    assert (zone.name, zone.partitions, zone.replicas) == ("TEST_ZONE_NAME", 42, 15)


def test_create_zone_drop_zone_reuse_name() -> None:
    cat = applied(
        _catalog_with_default_zone_table(),
        f"CREATE ZONE TEST_ZONE_NAME (PARTITIONS 42, REPLICAS 15) {PROFILES}",
    )
    zone = cat.zone("TEST_ZONE_NAME")
    cat = applied(cat, "DROP ZONE TEST_ZONE_NAME")
    cat = applied(cat, f"CREATE ZONE TEST_ZONE_NAME (PARTITIONS 10, REPLICAS 5) {PROFILES}")
    new = cat.zone("TEST_ZONE_NAME")
    assert new.id != zone.id
    assert cat.zone_by_id(new.id) == new
    assert (new.name, new.partitions, new.replicas) == ("TEST_ZONE_NAME", 10, 5)


def test_create_zone_events() -> None:
    created = sql(_catalog_with_default_zone_table(), f"CREATE ZONE TEST_ZONE_NAME {PROFILES}")
    assert [e for e in events(created) if e is not None] == [CatalogEvent.ZONE_CREATE]
    dropped = sql(created.catalog, "DROP ZONE TEST_ZONE_NAME")
    assert [e for e in events(dropped) if e is not None] == [CatalogEvent.ZONE_DROP]


def test_create_zone_with_defaults() -> None:
    cat = applied(_catalog_with_default_zone_table(), f"CREATE ZONE TEST_ZONE_NAME {PROFILES}")
    zone = cat.zone("TEST_ZONE_NAME")
    assert (zone.partitions, zone.replicas, zone.quorum) == (25, 1, 1)
    assert zone.filter == "$..*"
    assert zone.storage_profiles == ("default",)


# -- CreateZoneCommandValidationTest ---------------------------------------------------------


@pytest.mark.parametrize("name", NULL_AND_BLANK)
def test_create_zone_zone_name_must_not_be_null_or_blank(name: str | None) -> None:
    _bad_name({"op": "create_zone", "name": name})


def test_create_zone_zone_partitions() -> None:
    for partitions in (-1, 0, 65001):
        error = bad_shape(lambda p=partitions: c.CreateZone(name="Z", partitions=p))  # type: ignore[misc]
        assert "partitions" in error.message
    for partitions in (1, 65000, 10, 25):
        cat = applied(
            catalog_with_default_zone(), f"CREATE ZONE Z (PARTITIONS {partitions}) {PROFILES}"
        )
        assert cat.zone("Z").partitions == partitions


def test_create_zone_zone_replicas() -> None:
    for replicas in (-1, 0):
        error = bad_shape(lambda r=replicas: c.CreateZone(name="Z", replicas=r))  # type: ignore[misc]
        assert "replicas" in error.message
    for replicas in (1, 2**31 - 1):
        cat = applied(
            catalog_with_default_zone(), f"CREATE ZONE Z (REPLICAS {replicas}) {PROFILES}"
        )
        assert cat.zone("Z").replicas == replicas


@pytest.mark.parametrize("quorum", [-1, 0])
def test_create_zone_zone_invalid_quorum_size(quorum: int) -> None:
    error = bad_shape(lambda: c.CreateZone(name="Z", quorum=quorum))
    assert "quorum" in error.message


@pytest.mark.parametrize(("replicas", "default", "low", "high"), QUORUM_TABLE)
def test_create_zone_zone_quorum_size(
    replicas: int | None, default: int, low: int, high: int
) -> None:
    initial = catalog_with_default_zone()
    below = bad_shape(lambda: applied(initial, _zone_sql("Z", replicas, low - 1)))
    above = bad_shape(lambda: applied(initial, _zone_sql("Z", replicas, high + 1)))
    assert "quorum" in below.message
    assert "is out of range" in above.message and "quorum" in above.message
    assert applied(initial, _zone_sql("Z", replicas)).zone("Z").quorum == default
    for quorum in range(low, high + 1):
        assert applied(initial, _zone_sql("Z", replicas, quorum)).zone("Z").quorum == quorum


def test_extreme_quorum_size() -> None:
    replicas = 2**31 - 1  # Ignite's REPLICAS ALL
    high = round(replicas / 2)
    error = bad_shape(
        lambda: applied(catalog_with_default_zone(), _zone_sql("Z", replicas, high + 1))
    )
    assert "is out of range" in error.message
    assert applied(catalog_with_default_zone(), _zone_sql("Z", replicas)).zone("Z").quorum == 3
    cat = applied(catalog_with_default_zone(), _zone_sql("Z", replicas, high - 1))
    assert cat.zone("Z").quorum == high - 1


def test_exception_is_thrown_if_zone_already_exist() -> None:
    cat = applied(catalog_with_default_zone(), f'CREATE ZONE "some_zone" {PROFILES}')
    error = refused(cat, ErrorCode.ZONE_EXISTS, c.CreateZone(name="some_zone"))
    assert "zone some_zone already exists" in error.message


# -- AlterZoneCommandValidationTest ----------------------------------------------------------


@pytest.mark.parametrize("name", NULL_AND_BLANK)
def test_alter_zone_zone_name_must_not_be_null_or_blank(name: str | None) -> None:
    _bad_name({"op": "alter_zone", "name": name})


def test_alter_non_existing_zone() -> None:
    error = sql_refused(
        catalog_with_default_zone(),
        ErrorCode.ZONE_NOT_FOUND,
        'ALTER ZONE "not_existing_zone" SET REPLICAS 2',
    )
    assert "zone not_existing_zone not found" in error.message


def test_alter_zone_zone_partitions() -> None:
    for text in (
        'ALTER ZONE "Default" SET PARTITIONS 42',
        'ALTER ZONE "Default" SET PARTITIONS = 42',
    ):
        error = sql_refused(catalog_with_default_zone(), ErrorCode.UNSUPPORTED_CHANGE, text)
        assert "partitions of a zone cannot change" in error.message


def test_alter_zone_zone_replicas() -> None:
    for replicas in (-1, 0):
        error = bad_shape(lambda r=replicas: c.AlterZone(name="Default", replicas=r))  # type: ignore[misc]
        assert "replicas" in error.message
    for replicas in (2**31 - 1, 3):
        cat = applied(catalog_with_default_zone(), f'ALTER ZONE "Default" SET REPLICAS {replicas}')
        assert cat.zone("Default").replicas == replicas
    # The default zone already has one replica: setting it again changes nothing.
    not_applied(catalog_with_default_zone(), 'ALTER ZONE "Default" SET REPLICAS 1')


@pytest.mark.parametrize(
    ("replicas", "quorum", "target_replicas", "target_quorum"),
    [
        (1, 1, 2, 2),
        (2, 2, 1, 1),
        (2, 2, 3, 2),
        (2, 2, 4, 2),
        (2, 2, 5, 2),
        (3, 2, 1, 1),
        (5, 3, 4, 2),
        (5, 2, 4, 2),
        (5, 2, 6, 2),
        (5, 2, 7, 2),
        (6, 3, 4, 2),
    ],
)
def test_adjust_quorum_size(
    replicas: int, quorum: int, target_replicas: int, target_quorum: int
) -> None:
    text = f'ALTER ZONE "Default" SET (REPLICAS {replicas}, QUORUM SIZE {quorum})'
    cat = sql(catalog_with_default_zone(), text).catalog
    assert (cat.zone("Default").replicas, cat.zone("Default").quorum) == (replicas, quorum)
    cat = applied(cat, f'ALTER ZONE "Default" SET REPLICAS {target_replicas}')
    assert cat.zone("Default").quorum == target_quorum


def test_default_zone_replicas() -> None:
    cat = sql(catalog_with_default_zone(), 'ALTER ZONE "Default" SET REPLICAS 1').catalog
    assert (cat.zone("Default").replicas, cat.zone("Default").quorum) == (1, 1)


@pytest.mark.parametrize("quorum", [-1, 0])
def test_alter_zone_zone_invalid_quorum_size(quorum: int) -> None:
    error = bad_shape(lambda: c.AlterZone(name="Default", quorum=quorum))
    assert "quorum" in error.message


@pytest.mark.parametrize(("replicas", "default", "low", "high"), QUORUM_TABLE)
def test_alter_zone_zone_quorum_size(
    replicas: int | None, default: int, low: int, high: int
) -> None:
    del default  # the table is shared with create_zone, as in Ignite

    def alter(quorum: int) -> c.AlterZoneCommand:
        return c.AlterZone(name="Default", replicas=replicas, quorum=quorum)

    initial = catalog_with_default_zone()
    if low > 1:
        below = refused(initial, ErrorCode.VALIDATION_ERROR, alter(low - 1))
        assert "is out of range" in below.message
    else:
        bad_shape(lambda: alter(low - 1))
    above = refused(initial, ErrorCode.VALIDATION_ERROR, alter(high + 1))
    assert "is out of range" in above.message
    for quorum in range(low, high + 1):
        assert apply(initial, alter(quorum)).zone("Default").quorum == quorum


# -- RenameZoneCommandValidationTest ---------------------------------------------------------


@pytest.mark.parametrize("name", NULL_AND_BLANK)
def test_src_dest_zone_names_must_not_be_null_or_blank(name: str | None) -> None:
    assert "rename_zone.name" in _bad_name({"op": "rename_zone", "name": name, "new_name": "z"})
    message = _bad_name({"op": "rename_zone", "name": "test_zone", "new_name": name})
    assert "rename_zone.new_name" in message


def test_rename_zone_exception_is_thrown_if_zone_with_given_name_not_found() -> None:
    error = sql_refused(
        catalog_with_default_zone(),
        ErrorCode.ZONE_NOT_FOUND,
        'ALTER ZONE "some_zone" RENAME TO "some_zone1"',
    )
    assert "zone some_zone not found" in error.message


def test_exception_is_thrown_if_zone_to_rename_already_exist() -> None:
    cat = applied(
        catalog_with_default_zone(),
        f'CREATE ZONE "some_zone" {PROFILES}; CREATE ZONE "some_zone1" {PROFILES}',
    )
    error = sql_refused(cat, ErrorCode.ZONE_EXISTS, 'ALTER ZONE "some_zone" RENAME TO "some_zone1"')
    assert "zone some_zone1 already exists" in error.message


# -- DropZoneCommandValidationTest -----------------------------------------------------------


@pytest.mark.parametrize("name", NULL_AND_BLANK)
def test_drop_zone_zone_name_must_not_be_null_or_blank(name: str | None) -> None:
    _bad_name({"op": "drop_zone", "name": name})


def test_reject_to_drop_default_zone() -> None:
    cat = catalog_with_default_zone()
    default = cat.default_zone()
    assert default is not None
    error = refused(cat, ErrorCode.ZONE_IN_USE, c.DropZone(name=default.name))
    assert "is the default zone" in error.message


def test_reject_to_drop_zone_with_table() -> None:
    cat = applied(
        catalog_with_default_zone(),
        f'CREATE ZONE "zone1" {PROFILES}; '
        'CREATE TABLE "table1" (ID INT PRIMARY KEY, VAL INT) ZONE "zone1"',
    )
    error = sql_refused(cat, ErrorCode.ZONE_IN_USE, 'DROP ZONE "zone1"')
    assert "zone zone1 holds tables" in error.message
    assert cat.find_zone("zone1") is not None


def test_drop_zone_exception_is_thrown_if_zone_with_given_name_not_found() -> None:
    error = sql_refused(
        catalog_with_default_zone(), ErrorCode.ZONE_NOT_FOUND, 'DROP ZONE "some_zone"'
    )
    assert "zone some_zone not found" in error.message
    assert run(
        catalog_with_default_zone(), c.DropZone(name="some_zone", if_exists=True)
    ).applied == (False,)


# -- CreateSchemaCommandValidationTest -------------------------------------------------------


@pytest.mark.parametrize("name", NULL_AND_BLANK)
def test_schema_name_must_not_be_null_or_blank(name: str | None) -> None:
    _bad_name({"op": "create_schema", "name": name})
