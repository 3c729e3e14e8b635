"""create_index, drop_index, rename_index and the lifecycle commands."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from catalog import Catalog, CatalogEvent, Collation, ErrorCode, IndexKind, IndexStatus
from catalog import commands as c
from catalog.commands import CommandBase
from tests.unit.catalog.helpers import (
    PUBLIC_ID,
    apply,
    bad_shape,
    col,
    create_table,
    entry_types,
    events,
    key,
    refused,
    run,
    with_index,
    with_table,
)

# -- create_index --------------------------------------------------------------------------------


def test_create_index_on_an_existing_table_starts_registered() -> None:
    cat = with_table()
    table = cat.table("PUBLIC", "T")
    prepared = run(cat, c.CreateIndex(table="T", name="I", columns=("B", "A")))
    assert prepared.applied == (True,)
    assert entry_types(prepared) == ["new_index", "object_id_gen"]
    assert events(prepared) == [CatalogEvent.INDEX_CREATE, None]
    new = prepared.catalog
    index = new.index("PUBLIC", "I")
    assert index.id == cat.object_id_gen
    assert new.object_id_gen == cat.object_id_gen + 1
    assert index.status is IndexStatus.REGISTERED
    assert index.created_with_table is False
    assert index.kind is IndexKind.SORTED  # the default kind
    assert index.unique is False
    assert index.table_id == table.id
    assert index.schema_id == PUBLIC_ID
    assert index.column_ids == (2, 1)
    assert [ic.collation for ic in index.columns] == [Collation.ASC_NULLS_FIRST] * 2
    assert [i.name for i in new.table_indexes(table.id)] == ["T_PK", "I"]
    assert new.table("PUBLIC", "T").schema_version == 1  # indexes are not a schema change


def test_create_index_in_the_batch_of_its_table_starts_available() -> None:
    prepared = run(
        Catalog.initial(),
        create_table(),
        c.CreateIndex(table="T", name="I", columns=("A",)),
        c.CreateIndex(table="T", name="J", columns=("B",), kind=IndexKind.HASH),
    )
    cat = prepared.catalog
    for name in ("I", "J"):
        index = cat.index("PUBLIC", name)
        assert index.status is IndexStatus.AVAILABLE
        assert index.created_with_table is True
    assert events(prepared).count(CatalogEvent.INDEX_CREATE) == 3
    # A later batch on that same table registers its indexes.
    later = apply(cat, c.CreateIndex(table="T", name="K", columns=("A",)))
    assert later.index("PUBLIC", "K").status is IndexStatus.REGISTERED


def test_create_index_after_recreating_the_table_in_one_batch() -> None:
    cat = with_table()
    cat = apply(
        cat,
        c.DropTable(name="T"),
        create_table(),
        c.CreateIndex(table="T", name="I", columns=("A",)),
    )
    assert cat.index("PUBLIC", "I").status is IndexStatus.AVAILABLE


def test_hash_and_sorted_indexes_with_collations() -> None:
    cat = with_table()
    cat = apply(
        cat,
        c.CreateIndex(
            table="T",
            name="S",
            columns=(
                c.IndexColumnSpec(name="A", collation=Collation.DESC_NULLS_LAST),
                "B",
                c.IndexColumnSpec(name="ID"),
            ),
        ),
        c.CreateIndex(
            table="T", name="H", columns=("A", c.IndexColumnSpec(name="B")), kind=IndexKind.HASH
        ),
    )
    sorted_index = cat.index("PUBLIC", "S")
    assert [(ic.column_id, ic.collation) for ic in sorted_index.columns] == [
        (1, Collation.DESC_NULLS_LAST),
        (2, Collation.ASC_NULLS_FIRST),
        (0, Collation.ASC_NULLS_FIRST),
    ]
    hash_index = cat.index("PUBLIC", "H")
    assert hash_index.kind is IndexKind.HASH
    assert [(ic.column_id, ic.collation) for ic in hash_index.columns] == [(1, None), (2, None)]


def test_hash_index_with_collation_is_refused() -> None:
    bad_shape(
        lambda: c.CreateIndex(
            table="T",
            name="H",
            kind=IndexKind.HASH,
            columns=(c.IndexColumnSpec(name="A", collation=Collation.ASC_NULLS_FIRST),),
        )
    )
    bad_shape(
        lambda: c.parse(
            {
                "op": "create_index",
                "table": "T",
                "name": "H",
                "kind": "hash",
                "columns": [{"name": "A", "collation": "DESC_NULLS_FIRST"}],
            }
        )
    )


@pytest.mark.parametrize(
    "build",
    [
        pytest.param(lambda: c.CreateIndex(table="T", name="I", columns=()), id="no-columns"),
        pytest.param(lambda: c.CreateIndex(table="T", name="I", columns=("A", "A")), id="dup"),
        pytest.param(
            lambda: c.CreateIndex(table="T", name="I", columns=("A", c.IndexColumnSpec(name="A"))),
            id="dup-spec",
        ),
    ],
)
def test_create_index_refused_by_its_shape(build: Callable[[], object]) -> None:
    bad_shape(build)


def test_unique_index_must_contain_the_colocation_columns() -> None:
    cat = with_table(
        columns=(key("K1"), key("K2"), col("A"), col("B")),
        primary_key=("K1", "K2"),
        colocation_columns=("K2",),
    )
    refused(
        cat,
        ErrorCode.VALIDATION_ERROR,
        c.CreateIndex(table="T", name="U", columns=("A",), unique=True),
    )
    refused(
        cat,
        ErrorCode.VALIDATION_ERROR,
        c.CreateIndex(table="T", name="U", columns=("K1", "A"), unique=True),
    )
    cat = apply(cat, c.CreateIndex(table="T", name="U", columns=("A", "K2"), unique=True))
    assert cat.index("PUBLIC", "U").unique is True
    # A non-unique index needs no colocation column.
    cat = apply(cat, c.CreateIndex(table="T", name="N", columns=("A",)))
    assert cat.index("PUBLIC", "N").unique is False


def test_create_index_refused_against_the_catalog() -> None:
    cat = with_index(with_table(), "I", ("A",))
    cat = with_table(cat, "OTHER")
    refused(cat, ErrorCode.INDEX_EXISTS, c.CreateIndex(table="T", name="I", columns=("B",)))
    refused(cat, ErrorCode.INDEX_EXISTS, c.CreateIndex(table="OTHER", name="I", columns=("B",)))
    refused(cat, ErrorCode.INDEX_EXISTS, c.CreateIndex(table="T", name="T_PK", columns=("B",)))
    refused(cat, ErrorCode.TABLE_EXISTS, c.CreateIndex(table="T", name="OTHER", columns=("B",)))
    refused(
        cat,
        ErrorCode.TABLE_EXISTS,
        c.CreateIndex(table="T", name="OTHER", columns=("B",), if_not_exists=True),
    )
    refused(cat, ErrorCode.TABLE_NOT_FOUND, c.CreateIndex(table="X", name="J", columns=("A",)))
    refused(cat, ErrorCode.COLUMN_NOT_FOUND, c.CreateIndex(table="T", name="J", columns=("X",)))
    refused(cat, ErrorCode.COLUMN_NOT_FOUND, c.CreateIndex(table="T", name="J", columns=("a",)))
    refused(
        cat,
        ErrorCode.SCHEMA_NOT_FOUND,
        c.CreateIndex(schema="S", table="T", name="J", columns=("A",)),
    )


def test_create_index_if_not_exists() -> None:
    cat = with_index(with_table(), "I", ("A",))
    prepared = run(cat, c.CreateIndex(table="T", name="I", columns=("B",), if_not_exists=True))
    assert prepared.applied == (False,)
    assert prepared.entries == ()
    assert prepared.catalog.digest() == cat.digest()


def test_stopping_index_releases_its_name_to_a_new_index() -> None:
    cat = with_index(with_table(), "I", ("A",), status=IndexStatus.STOPPING)
    old_id = cat.object_id_gen - 1
    cat = apply(cat, c.CreateIndex(table="T", name="I", columns=("B",)))
    new = cat.index("PUBLIC", "I")
    assert new.id != old_id
    assert new.status is IndexStatus.REGISTERED
    assert cat.index_by_id(old_id).status is IndexStatus.STOPPING
    # Removing the old one leaves the new one's name alone.
    cat = apply(cat, c.RemoveIndex(index_id=old_id))
    assert cat.index("PUBLIC", "I") == new
    assert [i.name for i in cat.table_indexes(new.table_id)] == ["T_PK", "I"]


# -- drop_index ------------------------------------------------------------------------------


def test_drop_available_index_moves_it_to_stopping() -> None:
    cat = with_index(with_table(), "I", ("A",), status=IndexStatus.AVAILABLE)
    index = cat.index("PUBLIC", "I")
    prepared = run(cat, c.DropIndex(name="I"))
    assert entry_types(prepared) == ["drop_index"]
    assert events(prepared) == [CatalogEvent.INDEX_STOPPING]
    new = prepared.catalog
    assert new.find_index("PUBLIC", "I") is None
    stopping = new.index_by_id(index.id)
    assert stopping.status is IndexStatus.STOPPING
    assert stopping.model_copy(update={"status": IndexStatus.AVAILABLE}) == index
    assert stopping in new.table_indexes(index.table_id)
    refused(new, ErrorCode.INDEX_NOT_FOUND, c.DropIndex(name="I"))


def test_drop_index_created_with_its_table_moves_it_to_stopping() -> None:
    cat = apply(
        Catalog.initial(), create_table(), c.CreateIndex(table="T", name="I", columns=("A",))
    )
    prepared = run(cat, c.DropIndex(name="I"))
    assert entry_types(prepared) == ["drop_index"]


@pytest.mark.parametrize("status", [IndexStatus.REGISTERED, IndexStatus.BUILDING])
def test_drop_index_never_available_removes_it(status: IndexStatus) -> None:
    cat = with_index(with_table(), "I", ("A",), status=status)
    index = cat.index("PUBLIC", "I")
    prepared = run(cat, c.DropIndex(name="I"))
    assert entry_types(prepared) == ["remove_index"]
    assert events(prepared) == [CatalogEvent.INDEX_REMOVED]
    new = prepared.catalog
    assert new.find_index("PUBLIC", "I") is None
    refused(new, ErrorCode.INDEX_NOT_FOUND, c.StartBuildingIndex(index_id=index.id))
    assert [i.name for i in new.table_indexes(index.table_id)] == ["T_PK"]


def test_primary_key_index_cannot_be_dropped() -> None:
    cat = with_table()
    refused(cat, ErrorCode.VALIDATION_ERROR, c.DropIndex(name="T_PK"))
    refused(cat, ErrorCode.VALIDATION_ERROR, c.DropIndex(name="T_PK", if_exists=True))
    cat = apply(cat, c.RenameIndex(name="T_PK", new_name="KEY"))
    refused(cat, ErrorCode.VALIDATION_ERROR, c.DropIndex(name="KEY"))


def test_drop_missing_index() -> None:
    cat = with_table()
    refused(cat, ErrorCode.INDEX_NOT_FOUND, c.DropIndex(name="I"))
    refused(cat, ErrorCode.INDEX_NOT_FOUND, c.DropIndex(name="T"))  # a table is not an index
    refused(cat, ErrorCode.INDEX_NOT_FOUND, c.DropIndex(name="t_PK"))
    prepared = run(cat, c.DropIndex(name="I", if_exists=True))
    assert prepared.applied == (False,)


# -- rename_index ------------------------------------------------------------------------------


def test_rename_index() -> None:
    cat = with_index(with_table(), "I", ("A",))
    index = cat.index("PUBLIC", "I")
    prepared = run(cat, c.RenameIndex(name="I", new_name="J"))
    assert entry_types(prepared) == ["rename_index"]
    assert events(prepared) == [CatalogEvent.INDEX_RENAME]
    new = prepared.catalog
    assert new.find_index("PUBLIC", "I") is None
    assert new.index("PUBLIC", "J") == index.model_copy(update={"name": "J"})
    assert new.table("PUBLIC", "T").schema_version == 1
    apply(new, c.CreateIndex(table="T", name="I", columns=("B",)))


def test_rename_index_refused() -> None:
    cat = with_index(with_index(with_table(), "I", ("A",)), "J", ("B",))
    refused(cat, ErrorCode.INDEX_EXISTS, c.RenameIndex(name="I", new_name="J"))
    refused(cat, ErrorCode.INDEX_EXISTS, c.RenameIndex(name="I", new_name="I"))
    refused(cat, ErrorCode.INDEX_EXISTS, c.RenameIndex(name="I", new_name="T_PK"))
    refused(cat, ErrorCode.TABLE_EXISTS, c.RenameIndex(name="I", new_name="T"))
    refused(cat, ErrorCode.INDEX_NOT_FOUND, c.RenameIndex(name="X", new_name="Y"))
    refused(cat, ErrorCode.INDEX_NOT_FOUND, c.RenameIndex(name="T", new_name="Y"))


def test_rename_index_to_the_name_of_a_stopping_index() -> None:
    cat = with_index(with_table(), "OLD", ("A",), status=IndexStatus.STOPPING)
    cat = with_index(cat, "I", ("B",))
    cat = apply(cat, c.RenameIndex(name="I", new_name="OLD"))
    assert cat.index("PUBLIC", "OLD").status is IndexStatus.REGISTERED


# -- lifecycle ---------------------------------------------------------------------------------


def test_index_lifecycle() -> None:
    cat = with_index(with_table(), "I", ("A",))
    index_id = cat.index("PUBLIC", "I").id
    building, available = IndexStatus.BUILDING, IndexStatus.AVAILABLE
    steps: list[tuple[CommandBase, str, str, IndexStatus | None]] = [
        (c.StartBuildingIndex(index_id=index_id), "start_building_index", "BUILDING", building),
        (c.MakeIndexAvailable(index_id=index_id), "make_index_available", "AVAILABLE", available),
        (c.DropIndex(name="I"), "drop_index", "STOPPING", IndexStatus.STOPPING),
        (c.RemoveIndex(index_id=index_id), "remove_index", "REMOVED", None),
    ]
    for command, entry_type, event, status in steps:
        prepared = run(cat, command)
        assert entry_types(prepared) == [entry_type]
        assert events(prepared) == [CatalogEvent(f"INDEX_{event}")]
        cat = prepared.catalog
        if status is None:
            refused(cat, ErrorCode.INDEX_NOT_FOUND, c.RemoveIndex(index_id=index_id))
        else:
            assert cat.index_by_id(index_id).status is status


def test_whole_lifecycle_in_one_batch() -> None:
    cat = with_index(with_table(), "I", ("A",))
    index_id = cat.index("PUBLIC", "I").id
    prepared = run(
        cat,
        c.StartBuildingIndex(index_id=index_id),
        c.MakeIndexAvailable(index_id=index_id),
        c.DropIndex(name="I"),
        c.RemoveIndex(index_id=index_id),
    )
    assert prepared.applied == (True,) * 4
    assert [i.name for i in prepared.catalog.indexes()] == ["T_PK"]


def test_lifecycle_steps_name_their_index_by_id_or_by_name() -> None:
    cat = with_index(with_table(), "I", ("A",))
    index_id = cat.index("PUBLIC", "I").id
    cat = run(cat, c.StartBuildingIndex(schema="PUBLIC", name="I")).catalog
    assert cat.index_by_id(index_id).status is IndexStatus.BUILDING
    cat = run(cat, c.MakeIndexAvailable(name="I")).catalog  # the schema defaults to PUBLIC
    assert cat.index_by_id(index_id).status is IndexStatus.AVAILABLE
    refused(cat, ErrorCode.INDEX_NOT_FOUND, c.MakeIndexAvailable(name="NOPE"))
    for build in (
        lambda: c.StartBuildingIndex(),
        lambda: c.StartBuildingIndex(index_id=index_id, name="I"),
        lambda: c.RemoveIndex(name="I"),  # a STOPPING index has given up its name
    ):
        bad_shape(build)


_STATUSES = [
    IndexStatus.REGISTERED,
    IndexStatus.BUILDING,
    IndexStatus.AVAILABLE,
    IndexStatus.STOPPING,
]
_LIFECYCLE: list[tuple[Callable[[int], CommandBase], IndexStatus]] = [
    (lambda i: c.StartBuildingIndex(index_id=i), IndexStatus.REGISTERED),
    (lambda i: c.MakeIndexAvailable(index_id=i), IndexStatus.BUILDING),
    (lambda i: c.RemoveIndex(index_id=i), IndexStatus.STOPPING),
]


@pytest.mark.parametrize("status", _STATUSES)
@pytest.mark.parametrize(("make", "needed"), _LIFECYCLE)
def test_lifecycle_commands_need_the_matching_status(
    status: IndexStatus, make: Callable[[int], CommandBase], needed: IndexStatus
) -> None:
    cat = with_index(with_table(), "I", ("A",), status=status)
    index_id = cat.object_id_gen - 1
    if status is needed:
        assert run(cat, make(index_id)).applied == (True,)
    else:
        refused(cat, ErrorCode.INDEX_STATUS_CONFLICT, make(index_id))


@pytest.mark.parametrize(("make", "needed"), _LIFECYCLE)
def test_lifecycle_commands_on_the_pk_index(
    make: Callable[[int], CommandBase], needed: IndexStatus
) -> None:
    cat = with_table()
    pk_index_id = cat.table("PUBLIC", "T").pk_index_id
    assert pk_index_id is not None
    refused(cat, ErrorCode.INDEX_STATUS_CONFLICT, make(pk_index_id))


@pytest.mark.parametrize(("make", "needed"), _LIFECYCLE)
def test_lifecycle_commands_on_a_missing_index(
    make: Callable[[int], CommandBase], needed: IndexStatus
) -> None:
    cat = with_table()
    refused(cat, ErrorCode.INDEX_NOT_FOUND, make(999))
    refused(cat, ErrorCode.INDEX_NOT_FOUND, make(cat.table("PUBLIC", "T").id))  # a table id


def test_refused_lifecycle_step_in_a_batch_changes_nothing() -> None:
    cat = with_index(with_table(), "I", ("A",))
    index_id = cat.index("PUBLIC", "I").id
    refused(
        cat,
        ErrorCode.INDEX_STATUS_CONFLICT,
        c.StartBuildingIndex(index_id=index_id),
        c.StartBuildingIndex(index_id=index_id),
    )
    assert cat.index_by_id(index_id).status is IndexStatus.REGISTERED
