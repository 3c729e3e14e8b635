"""create_zone, alter_zone, rename_zone, drop_zone and set_default_zone."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from catalog import CatalogEvent, ErrorCode
from catalog import commands as c
from catalog.descriptors.zones import MAX_PARTITIONS, default_quorum, quorum_range
from tests.unit.catalog.helpers import (
    DEFAULT_ZONE_ID,
    FIRST_FREE_ID,
    apply,
    bad_shape,
    catalog_with_default_zone,
    create_table,
    entry_types,
    events,
    refused,
    run,
)

# -- create_zone -----------------------------------------------------------------------------


def test_create_zone_with_defaults() -> None:
    cat = catalog_with_default_zone()
    prepared = run(cat, c.CreateZone(name="Z"))
    assert prepared.applied == (True,)
    assert entry_types(prepared) == ["new_zone", "object_id_gen"]
    assert events(prepared) == [CatalogEvent.ZONE_CREATE, None]
    new = prepared.catalog
    zone = new.zone("Z")
    assert zone.id == FIRST_FREE_ID
    assert new.zone_by_id(zone.id) == zone
    assert new.object_id_gen == FIRST_FREE_ID + 1
    assert (zone.partitions, zone.replicas, zone.quorum) == (25, 1, 1)
    assert zone.storage_profiles == ("default",)
    assert zone.filter == "$..*"
    assert new.default_zone_id == DEFAULT_ZONE_ID  # a new zone is not the default
    assert new.zone_tables(zone.id) == []


def test_create_zone_with_everything() -> None:
    cat = apply(
        catalog_with_default_zone(),
        c.CreateZone(
            name="Z",
            partitions=MAX_PARTITIONS,
            replicas=5,
            quorum=2,
            storage_profiles=("fast", "slow"),
            filter="$[?(@.region == 'eu')]",
        ),
    )
    zone = cat.zone("Z")
    assert (zone.partitions, zone.replicas, zone.quorum) == (65000, 5, 2)
    assert zone.storage_profiles == ("fast", "slow")
    assert zone.filter == "$[?(@.region == 'eu')]"


@pytest.mark.parametrize(
    ("replicas", "low", "high", "default"),
    [
        (1, 1, 1, 1),
        (2, 2, 2, 2),
        (3, 2, 2, 2),
        (4, 2, 2, 2),
        (5, 2, 3, 3),
        (6, 2, 3, 3),
        (7, 2, 4, 3),
        (10, 2, 5, 3),
    ],
)
def test_quorum_range_per_replica_count(replicas: int, low: int, high: int, default: int) -> None:
    # Ignite: [min(replicas, 2), max(min, round(replicas / 2))]; default min(r, 2) up to 4, else 3.
    assert quorum_range(replicas) == (low, high)
    assert default_quorum(replicas) == default
    cat = apply(catalog_with_default_zone(), c.CreateZone(name="Z", replicas=replicas))
    assert cat.zone("Z").quorum == default
    for quorum in range(low, high + 1):
        c.CreateZone(name="Z", replicas=replicas, quorum=quorum)
    bad_shape(lambda: c.CreateZone(name="Z", replicas=replicas, quorum=high + 1))
    if low > 1:
        bad_shape(lambda: c.CreateZone(name="Z", replicas=replicas, quorum=low - 1))


@pytest.mark.parametrize(
    "build",
    [
        pytest.param(lambda: c.CreateZone(name="Z", partitions=0), id="partitions-0"),
        pytest.param(lambda: c.CreateZone(name="Z", partitions=65001), id="partitions-65001"),
        pytest.param(lambda: c.CreateZone(name="Z", partitions=-1), id="partitions-negative"),
        pytest.param(lambda: c.CreateZone(name="Z", replicas=0), id="replicas-0"),
        pytest.param(lambda: c.CreateZone(name="Z", quorum=0), id="quorum-0"),
        pytest.param(lambda: c.CreateZone(name="Z", storage_profiles=()), id="no-profiles"),
        pytest.param(lambda: c.CreateZone(name="Z", storage_profiles=("a", "a")), id="dup-profile"),
        pytest.param(lambda: c.CreateZone(name="Z", storage_profiles=("",)), id="empty-profile"),
        pytest.param(lambda: c.CreateZone(name="Z", filter="region == eu"), id="bad-filter"),
        pytest.param(lambda: c.CreateZone(name="Z", filter=""), id="empty-filter"),
    ],
)
def test_create_zone_refused_by_its_shape(build: Callable[[], object]) -> None:
    bad_shape(build)


@pytest.mark.parametrize("partitions", [1, 2, 25, 64999, 65000])
def test_partition_bounds(partitions: int) -> None:
    cat = apply(catalog_with_default_zone(), c.CreateZone(name="Z", partitions=partitions))
    assert cat.zone("Z").partitions == partitions


def test_create_existing_zone() -> None:
    cat = apply(catalog_with_default_zone(), c.CreateZone(name="Z"))
    refused(cat, ErrorCode.ZONE_EXISTS, c.CreateZone(name="Z"))
    refused(cat, ErrorCode.ZONE_EXISTS, c.CreateZone(name="Default"))
    prepared = run(cat, c.CreateZone(name="Z", partitions=7, if_not_exists=True))
    assert prepared.applied == (False,)
    assert prepared.catalog.zone("Z").partitions == 25
    # Zone names are case-sensitive.
    cat = apply(cat, c.CreateZone(name="z"))
    assert cat.zone("z").id != cat.zone("Z").id


def test_zone_and_table_names_are_separate_namespaces() -> None:
    cat = apply(catalog_with_default_zone(), c.CreateZone(name="T"), create_table(zone="T"))
    assert cat.table("PUBLIC", "T").zone_id == cat.zone("T").id


# -- alter_zone ------------------------------------------------------------------------------


def test_alter_zone() -> None:
    cat = apply(catalog_with_default_zone(), c.CreateZone(name="Z", partitions=7))
    zone = cat.zone("Z")
    prepared = run(
        cat,
        c.AlterZone(name="Z", replicas=5, quorum=3, storage_profiles=("p",), filter="$.x"),
    )
    assert entry_types(prepared) == ["alter_zone"]
    assert events(prepared) == [CatalogEvent.ZONE_ALTER]
    altered = prepared.catalog.zone("Z")
    assert altered == zone.model_copy(
        update={"replicas": 5, "quorum": 3, "storage_profiles": ("p",), "filter": "$.x"}
    )
    assert prepared.catalog.object_id_gen == cat.object_id_gen


@pytest.mark.parametrize(
    ("replicas", "quorum", "new_replicas", "expected"),
    [
        (5, 3, 3, 2),  # above the new maximum: lowered
        (1, 1, 5, 2),  # below the new minimum: raised
        (7, 4, 9, 4),  # still in range: kept
        (5, 2, 1, 1),
        (10, 5, 2, 2),
    ],
)
def test_alter_zone_adjusts_the_quorum_when_replicas_change(
    replicas: int, quorum: int, new_replicas: int, expected: int
) -> None:
    cat = apply(
        catalog_with_default_zone(), c.CreateZone(name="Z", replicas=replicas, quorum=quorum)
    )
    cat = apply(cat, c.AlterZone(name="Z", replicas=new_replicas))
    zone = cat.zone("Z")
    assert (zone.replicas, zone.quorum) == (new_replicas, expected)


def test_alter_zone_explicit_quorum_must_be_in_range() -> None:
    cat = apply(catalog_with_default_zone(), c.CreateZone(name="Z", replicas=5))
    refused(cat, ErrorCode.VALIDATION_ERROR, c.AlterZone(name="Z", quorum=4))
    refused(cat, ErrorCode.VALIDATION_ERROR, c.AlterZone(name="Z", replicas=3, quorum=3))
    refused(cat, ErrorCode.VALIDATION_ERROR, c.AlterZone(name="Z", replicas=9, quorum=1))
    cat = apply(cat, c.AlterZone(name="Z", quorum=2))
    assert cat.zone("Z").quorum == 2


@pytest.mark.parametrize("partitions", [1, 25, 100])
def test_partitions_are_immutable(partitions: int) -> None:
    cat = apply(catalog_with_default_zone(), c.CreateZone(name="Z"))
    command = c.AlterZone(name="Z", partitions=partitions)
    refused(cat, ErrorCode.UNSUPPORTED_CHANGE, command)
    refused(
        cat,
        ErrorCode.UNSUPPORTED_CHANGE,
        c.AlterZone(name="Z", partitions=partitions, if_exists=True),
    )
    parsed = c.parse({"op": "alter_zone", "name": "Z", "partitions": partitions})
    refused(cat, ErrorCode.UNSUPPORTED_CHANGE, *parsed)


@pytest.mark.parametrize(
    "build",
    [
        pytest.param(lambda: c.AlterZone(name="Z", replicas=0), id="replicas-0"),
        pytest.param(lambda: c.AlterZone(name="Z", quorum=0), id="quorum-0"),
        pytest.param(lambda: c.AlterZone(name="Z", storage_profiles=()), id="no-profiles"),
        pytest.param(lambda: c.AlterZone(name="Z", storage_profiles=("a", "a")), id="dup-profile"),
        pytest.param(lambda: c.AlterZone(name="Z", filter="x ="), id="bad-filter"),
    ],
)
def test_alter_zone_refused_by_its_shape(build: Callable[[], object]) -> None:
    bad_shape(build)


def test_alter_zone_without_a_change_is_a_no_op() -> None:
    cat = catalog_with_default_zone()
    for command in (
        c.AlterZone(name="Default"),
        c.AlterZone(name="Default", replicas=1, quorum=1),
        c.AlterZone(name="Default", filter="$..*", storage_profiles=("default",)),
    ):
        prepared = run(cat, command)
        assert prepared.applied == (False,)
        assert prepared.entries == ()


def test_alter_missing_zone() -> None:
    cat = catalog_with_default_zone()
    refused(cat, ErrorCode.ZONE_NOT_FOUND, c.AlterZone(name="Z", replicas=2))
    refused(cat, ErrorCode.ZONE_NOT_FOUND, c.AlterZone(name="default", replicas=2))
    prepared = run(cat, c.AlterZone(name="Z", replicas=2, if_exists=True))
    assert prepared.applied == (False,)


def test_alter_zone_with_tables() -> None:
    cat = apply(catalog_with_default_zone(), create_table())
    cat = apply(cat, c.AlterZone(name="Default", replicas=3))
    assert cat.zone("Default").replicas == 3
    assert cat.table("PUBLIC", "T").zone_id == DEFAULT_ZONE_ID


# -- rename_zone -----------------------------------------------------------------------------


def test_rename_zone() -> None:
    cat = apply(catalog_with_default_zone(), create_table())
    prepared = run(cat, c.RenameZone(name="Default", new_name="Main"))
    assert entry_types(prepared) == ["alter_zone"]
    assert events(prepared) == [CatalogEvent.ZONE_ALTER]
    new = prepared.catalog
    assert new.find_zone("Default") is None
    zone = new.zone("Main")
    assert zone == cat.zone("Default").model_copy(update={"name": "Main"})
    assert new.default_zone_id == zone.id
    assert [t.name for t in new.zone_tables(zone.id)] == ["T"]
    # The old name is free again.
    new = apply(new, c.CreateZone(name="Default"))
    assert new.zone("Default").id != zone.id


def test_rename_zone_refused() -> None:
    cat = apply(catalog_with_default_zone(), c.CreateZone(name="Z"))
    refused(cat, ErrorCode.ZONE_EXISTS, c.RenameZone(name="Z", new_name="Default"))
    refused(cat, ErrorCode.ZONE_EXISTS, c.RenameZone(name="Z", new_name="Z"))
    refused(cat, ErrorCode.ZONE_NOT_FOUND, c.RenameZone(name="X", new_name="Y"))
    prepared = run(cat, c.RenameZone(name="X", new_name="Y", if_exists=True))
    assert prepared.applied == (False,)


# -- drop_zone -------------------------------------------------------------------------------


def test_drop_zone() -> None:
    cat = apply(catalog_with_default_zone(), c.CreateZone(name="Z"))
    zone = cat.zone("Z")
    prepared = run(cat, c.DropZone(name="Z"))
    assert entry_types(prepared) == ["drop_zone"]
    assert events(prepared) == [CatalogEvent.ZONE_DROP]
    new = prepared.catalog
    assert new.find_zone("Z") is None
    refused(new, ErrorCode.ZONE_NOT_FOUND, c.SetDefaultZone(name="Z"))
    assert [z.name for z in new.zones()] == ["Default"]
    assert cat.zone("Z") == zone


def test_drop_missing_zone() -> None:
    cat = catalog_with_default_zone()
    refused(cat, ErrorCode.ZONE_NOT_FOUND, c.DropZone(name="Z"))
    prepared = run(cat, c.DropZone(name="Z", if_exists=True))
    assert prepared.applied == (False,)


def test_default_zone_cannot_be_dropped() -> None:
    cat = catalog_with_default_zone()
    refused(cat, ErrorCode.ZONE_IN_USE, c.DropZone(name="Default"))
    refused(cat, ErrorCode.ZONE_IN_USE, c.DropZone(name="Default", if_exists=True))
    cat = apply(cat, c.CreateZone(name="Z"), c.SetDefaultZone(name="Z"))
    refused(cat, ErrorCode.ZONE_IN_USE, c.DropZone(name="Z"))
    cat = apply(cat, c.DropZone(name="Default"))
    assert cat.find_zone("Default") is None


def test_zone_with_tables_cannot_be_dropped() -> None:
    cat = apply(catalog_with_default_zone(), c.CreateZone(name="Z"), create_table(zone="Z"))
    refused(cat, ErrorCode.ZONE_IN_USE, c.DropZone(name="Z"))
    # Once its last table is gone, it can.
    cat = apply(cat, c.DropTable(name="T"), c.DropZone(name="Z"))
    assert cat.find_zone("Z") is None


def test_zone_emptied_by_a_cascade_can_be_dropped_in_the_same_batch() -> None:
    cat = apply(
        catalog_with_default_zone(),
        c.CreateZone(name="Z"),
        c.CreateSchema(name="S"),
        create_table(schema="S", zone="Z"),
    )
    refused(cat, ErrorCode.ZONE_IN_USE, c.DropZone(name="Z"), c.DropSchema(name="S", cascade=True))
    cat = apply(cat, c.DropSchema(name="S", cascade=True), c.DropZone(name="Z"))
    assert cat.find_zone("Z") is None


# -- set_default_zone ------------------------------------------------------------------------


def test_set_default_zone() -> None:
    cat = apply(catalog_with_default_zone(), c.CreateZone(name="Z"))
    prepared = run(cat, c.SetDefaultZone(name="Z"))
    assert entry_types(prepared) == ["set_default_zone"]
    assert events(prepared) == [CatalogEvent.SET_DEFAULT_ZONE]
    new = prepared.catalog
    assert new.default_zone_id == cat.zone("Z").id
    default = new.default_zone()
    assert default is not None
    assert default.name == "Z"
    assert cat.default_zone_id == DEFAULT_ZONE_ID


def test_set_default_zone_to_the_current_default_is_a_no_op() -> None:
    prepared = run(catalog_with_default_zone(), c.SetDefaultZone(name="Default"))
    assert prepared.applied == (False,)
    assert prepared.entries == ()


def test_set_default_zone_missing() -> None:
    refused(catalog_with_default_zone(), ErrorCode.ZONE_NOT_FOUND, c.SetDefaultZone(name="Z"))
    refused(catalog_with_default_zone(), ErrorCode.ZONE_NOT_FOUND, c.SetDefaultZone(name="default"))


def test_refused_zone_batch_changes_nothing() -> None:
    cat = catalog_with_default_zone()
    refused(
        cat,
        ErrorCode.ZONE_IN_USE,
        c.CreateZone(name="Z"),
        c.SetDefaultZone(name="Z"),
        c.DropZone(name="Z"),
    )
    assert [z.name for z in cat.zones()] == ["Default"]
    assert cat.default_zone_id == DEFAULT_ZONE_ID
