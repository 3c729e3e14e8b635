"""``Catalog``: initial content, lookups by name and id, collections, and structural sharing."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pydantic
import pytest

from catalog import Catalog, CatalogError, ErrorCode, IndexStatus, NotFoundError, prepare
from catalog import commands as c
from tests.unit.catalog.helpers import (
    DEFAULT_ZONE_ID,
    FIRST_FREE_ID,
    PUBLIC_ID,
    SYSTEM_ID,
    apply,
    catalog_with_default_zone,
    create_table,
    with_index,
    with_table,
)


def _sample() -> Catalog:
    """PUBLIC.T (+ index I), PUBLIC.U in zone Z, S.T; zone Z and an empty zone E."""
    cat = apply(
        catalog_with_default_zone(),
        c.CreateZone(name="Z"),
        c.CreateZone(name="E"),
        c.CreateSchema(name="S"),
        create_table("T"),
        create_table("U", zone="Z"),
        create_table("T", schema="S"),
    )
    return with_index(cat, "I", ("A",))


# -- initial -------------------------------------------------------------------------------


def test_initial_catalog() -> None:
    cat = Catalog.initial()
    assert cat.version == 1
    assert cat.activation_ts == 0
    assert cat.object_id_gen == DEFAULT_ZONE_ID
    assert [(s.id, s.name) for s in cat.schemas()] == [(PUBLIC_ID, "PUBLIC"), (SYSTEM_ID, "SYSTEM")]
    assert cat.zones() == []
    assert cat.default_zone_id is None
    assert cat.default_zone() is None
    assert cat.tables() == []
    assert cat.indexes() == []
    assert cat.counts() == {"schemas": 2, "tables": 0, "indexes": 0, "zones": 0}


def test_the_default_zone_a_first_table_creates() -> None:
    cat = catalog_with_default_zone()
    (zone,) = cat.zones()
    assert (zone.id, zone.name) == (DEFAULT_ZONE_ID, "Default")
    assert (zone.partitions, zone.replicas, zone.quorum) == (25, 1, 1)
    assert zone.storage_profiles == ("default",)
    assert zone.filter == "$..*"
    assert cat.default_zone_id == DEFAULT_ZONE_ID
    assert cat.default_zone() == zone
    assert cat.object_id_gen == FIRST_FREE_ID


def test_initial_catalog_is_the_same_everywhere() -> None:
    assert catalog_with_default_zone().digest() == catalog_with_default_zone().digest()
    assert catalog_with_default_zone() == catalog_with_default_zone()
    assert hash(catalog_with_default_zone()) == hash(catalog_with_default_zone())


def test_empty_catalog() -> None:
    cat = Catalog()
    assert cat.version == 0
    assert cat.schemas() == []
    assert cat.zones() == []
    assert cat.default_zone() is None
    assert cat.digest() != catalog_with_default_zone().digest()


# -- lookups by name -----------------------------------------------------------------------


def test_lookups_by_name() -> None:
    cat = _sample()
    s = cat.schema("S")
    assert cat.find_schema("S") == s
    t = cat.table("PUBLIC", "T")
    st = cat.table("S", "T")
    assert t.id != st.id
    assert cat.find_table("S", "T") == st
    assert st.schema_id == s.id
    assert cat.index("PUBLIC", "I").table_id == t.id
    assert st.pk_index_id is not None
    assert cat.find_index("S", "T_PK") == cat.index_by_id(st.pk_index_id)
    assert cat.zone("Z") == cat.find_zone("Z")


@pytest.mark.parametrize(
    ("lookup", "code"),
    [
        (lambda cat: cat.schema("X"), ErrorCode.SCHEMA_NOT_FOUND),
        (lambda cat: cat.schema("public"), ErrorCode.SCHEMA_NOT_FOUND),
        (lambda cat: cat.table("X", "T"), ErrorCode.SCHEMA_NOT_FOUND),
        (lambda cat: cat.table("PUBLIC", "X"), ErrorCode.TABLE_NOT_FOUND),
        (lambda cat: cat.table("PUBLIC", "I"), ErrorCode.TABLE_NOT_FOUND),
        (lambda cat: cat.table("PUBLIC", "t"), ErrorCode.TABLE_NOT_FOUND),
        (lambda cat: cat.index("X", "I"), ErrorCode.SCHEMA_NOT_FOUND),
        (lambda cat: cat.index("PUBLIC", "T"), ErrorCode.INDEX_NOT_FOUND),
        (lambda cat: cat.index("S", "I"), ErrorCode.INDEX_NOT_FOUND),
        (lambda cat: cat.zone("X"), ErrorCode.ZONE_NOT_FOUND),
        (lambda cat: cat.zone("default"), ErrorCode.ZONE_NOT_FOUND),
        (lambda cat: cat.schema_by_id(999), ErrorCode.SCHEMA_NOT_FOUND),
        (lambda cat: cat.table_by_id(999), ErrorCode.TABLE_NOT_FOUND),
        (lambda cat: cat.table_by_id(DEFAULT_ZONE_ID), ErrorCode.TABLE_NOT_FOUND),
        (lambda cat: cat.index_by_id(999), ErrorCode.INDEX_NOT_FOUND),
        (lambda cat: cat.zone_by_id(999), ErrorCode.ZONE_NOT_FOUND),
        (lambda cat: cat.zone_by_id(PUBLIC_ID), ErrorCode.ZONE_NOT_FOUND),
    ],
)
def test_missing_objects_raise_not_found(lookup: Callable[[Catalog], Any], code: ErrorCode) -> None:
    with pytest.raises(NotFoundError) as info:
        lookup(_sample())
    assert info.value.code is code


@pytest.mark.parametrize(
    "lookup",
    [
        lambda cat: cat.find_schema("X"),
        lambda cat: cat.find_table("X", "T"),
        lambda cat: cat.find_table("PUBLIC", "X"),
        lambda cat: cat.find_table("PUBLIC", "I"),
        lambda cat: cat.find_index("X", "I"),
        lambda cat: cat.find_index("PUBLIC", "X"),
        lambda cat: cat.find_index("PUBLIC", "T"),
        lambda cat: cat.find_zone("X"),
    ],
)
def test_find_returns_none(lookup: Callable[[Catalog], Any]) -> None:
    assert lookup(_sample()) is None


def test_stopping_index_is_found_by_id_only() -> None:
    cat = with_index(with_table(), "I", ("A",), status=IndexStatus.STOPPING)
    index_id = cat.object_id_gen - 1
    assert cat.find_index("PUBLIC", "I") is None
    assert cat.index_by_id(index_id).status is IndexStatus.STOPPING
    assert index_id in [i.id for i in cat.indexes()]
    assert cat.relation_id(PUBLIC_ID, "I") is None


def test_relation_id_covers_tables_and_alive_indexes() -> None:
    cat = _sample()
    assert cat.relation_id(PUBLIC_ID, "T") == cat.table("PUBLIC", "T").id
    assert cat.relation_id(PUBLIC_ID, "I") == cat.index("PUBLIC", "I").id
    assert cat.relation_id(PUBLIC_ID, "X") is None


# -- lookups by id and collections ---------------------------------------------------------


def test_lookups_by_id() -> None:
    cat = _sample()
    for schema in cat.schemas():
        assert cat.schema_by_id(schema.id) == schema
    for table in cat.tables():
        assert cat.table_by_id(table.id) == table
        assert cat.has_table(table.id)
    for index in cat.indexes():
        assert cat.index_by_id(index.id) == index
    for zone in cat.zones():
        assert cat.zone_by_id(zone.id) == zone
    assert not cat.has_table(999)


def test_collections_are_ordered_by_id() -> None:
    cat = _sample()
    for items in (cat.schemas(), cat.tables(), cat.indexes(), cat.zones()):
        ids = [x.id for x in items]
        assert ids == sorted(ids)
    assert [z.name for z in cat.zones()] == ["Default", "Z", "E"]
    assert cat.counts() == {"schemas": 3, "tables": 3, "indexes": 4, "zones": 3}


def test_ids_are_unique_across_object_kinds() -> None:
    cat = _sample()
    ids = [
        x.id for group in (cat.schemas(), cat.tables(), cat.indexes(), cat.zones()) for x in group
    ]
    assert len(ids) == len(set(ids))
    assert max(ids) == cat.object_id_gen - 1


def test_table_indexes() -> None:
    cat = _sample()
    t = cat.table("PUBLIC", "T")
    assert [i.name for i in cat.table_indexes(t.id)] == ["T_PK", "I"]
    assert [i.name for i in cat.table_indexes(cat.table("S", "T").id)] == ["T_PK"]
    assert cat.table_indexes(999) == []


def test_zone_tables() -> None:
    cat = _sample()
    assert [(t.schema_id, t.name) for t in cat.zone_tables(DEFAULT_ZONE_ID)] == [
        (PUBLIC_ID, "T"),
        (cat.schema("S").id, "T"),
    ]
    assert [t.name for t in cat.zone_tables(cat.zone("Z").id)] == ["U"]
    assert cat.zone_tables(cat.zone("E").id) == []
    assert cat.zone_has_tables(cat.zone("Z").id)
    assert not cat.zone_has_tables(cat.zone("E").id)
    assert cat.zone_tables(999) == []


def test_schema_tables() -> None:
    cat = _sample()
    assert [t.name for t in cat.schema_tables(PUBLIC_ID)] == ["T", "U"]
    assert [t.name for t in cat.schema_tables(cat.schema("S").id)] == ["T"]
    assert cat.schema_tables(SYSTEM_ID) == []
    assert cat.schema_is_empty(SYSTEM_ID)
    assert not cat.schema_is_empty(PUBLIC_ID)
    cat = apply(cat, c.DropTable(name="U"), c.DropTable(name="T"))
    assert cat.schema_tables(PUBLIC_ID) == []
    assert cat.schema_is_empty(PUBLIC_ID)
    assert not cat.zone_has_tables(cat.zone("Z").id)


def test_lookups_follow_renames() -> None:
    cat = apply(
        _sample(),
        c.RenameTable(name="T", new_name="T2"),
        c.RenameIndex(name="I", new_name="I2"),
        c.RenameZone(name="Z", new_name="Z2"),
    )
    assert cat.find_table("PUBLIC", "T") is None
    assert cat.find_index("PUBLIC", "I") is None
    assert cat.find_zone("Z") is None
    t2 = cat.table("PUBLIC", "T2")
    assert [i.name for i in cat.table_indexes(t2.id)] == ["T2_PK", "I2"]
    assert [t.name for t in cat.zone_tables(cat.zone("Z2").id)] == ["U"]


# -- immutability and structural sharing -------------------------------------------------------


def test_a_new_version_leaves_the_previous_catalog_unchanged() -> None:
    old = _sample()
    digest = old.digest()
    snapshot = (old.schemas(), old.tables(), old.indexes(), old.zones(), old.object_id_gen)
    t = old.table("PUBLIC", "T")
    prepared = prepare(
        old,
        [
            c.AddColumns(table="T", columns=(c.Column(name="N", type=t.columns[1].type),)),
            c.DropIndex(name="I"),
            c.RenameTable(name="U", new_name="V"),
            c.AlterZone(name="Z", replicas=3),
            c.DropSchema(name="S", cascade=True),
            c.CreateZone(name="NEW"),
        ],
    )
    new = prepared.catalog
    assert new.digest() != digest
    assert old.digest() == digest
    assert (old.schemas(), old.tables(), old.indexes(), old.zones(), old.object_id_gen) == snapshot
    assert old.table("PUBLIC", "T") == t
    assert old.find_table("PUBLIC", "V") is None
    assert old.find_schema("S") is not None
    assert old.find_zone("NEW") is None
    assert old.zone("Z").replicas == 1


def test_untouched_descriptors_are_shared_between_versions() -> None:
    old = _sample()
    new = apply(
        old,
        c.AddColumns(
            table="U", columns=(c.Column(name="N", type=old.tables()[0].columns[1].type),)
        ),
    )
    # Objects the change did not touch are the very same objects, not copies.
    assert new.table("PUBLIC", "T") is old.table("PUBLIC", "T")
    assert new.table("S", "T") is old.table("S", "T")
    assert new.index("PUBLIC", "I") is old.index("PUBLIC", "I")
    assert new.zone("Z") is old.zone("Z")
    assert new.schema("S") is old.schema("S")
    assert new.table("PUBLIC", "U") is not old.table("PUBLIC", "U")
    # Maps the entry did not touch are shared too.
    assert new._indexes is old._indexes
    assert new._names is old._names


def test_catalogs_are_read_only() -> None:
    cat = catalog_with_default_zone()
    with pytest.raises(AttributeError):
        cat.nope = 1  # type: ignore[attr-defined]
    zone = cat.zone("Default")
    with pytest.raises(pydantic.ValidationError, match="frozen"):
        zone.replicas = 3  # type: ignore[misc]


def test_equal_content_equal_digest() -> None:
    a = apply(catalog_with_default_zone(), c.CreateZone(name="Z"), create_table(zone="Z"))
    b = apply(apply(catalog_with_default_zone(), c.CreateZone(name="Z")), create_table(zone="Z"))
    assert a == b
    assert a.digest() == b.digest()
    c_ = apply(
        catalog_with_default_zone(), c.CreateZone(name="Z"), create_table(zone="Z", name="T2")
    )
    assert c_ != a


# -- versions built on a sealed one --------------------------------------------------------


def _sealed(cat: Catalog) -> Catalog:
    return cat.with_version(cat.version + 1, cat.activation_ts + 1).sealed()


def test_a_table_replaced_under_its_name_is_found_by_name_before_the_seal() -> None:
    base = _sealed(apply(catalog_with_default_zone(), create_table("T")))
    add = c.AddColumns(table="T", columns=[c.Column(name="C", type="INT32")])
    changed = prepare(base, [add]).catalog
    by_id = changed.table_by_id(base.table("PUBLIC", "T").id)
    assert changed.table("PUBLIC", "T") == by_id == changed.find_table("PUBLIC", "T")
    assert [col.name for col in by_id.columns] == ["ID", "A", "B", "C"]
    assert [col.name for col in base.table("PUBLIC", "T").columns] == ["ID", "A", "B"]


def test_a_batch_on_a_sealed_version_sees_its_own_earlier_commands() -> None:
    base = _sealed(apply(catalog_with_default_zone(), create_table("T")))
    add = c.AddColumns(table="T", columns=[c.Column(name="C", type="INT32")])
    with pytest.raises(CatalogError) as refused:
        prepare(base, [add, add])
    assert refused.value.code is ErrorCode.COLUMN_EXISTS
