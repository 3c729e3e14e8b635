"""Snapshots written to branches other than main: kept in the Iceberg state, listed, removed."""

from __future__ import annotations

from api.iceberg.snapshots import snapshots_of
from catalog import ColumnType, ErrorCode
from catalog import commands as c
from catalog.catalog import Catalog
from catalog.data.iceberg_refs import BranchSnapshot, RefType, SnapshotRef, branch_bases
from catalog.properties import properties_of
from catalog.snapshots import decode_snapshot, encode_snapshot
from tests.unit.catalog.helpers import (
    apply,
    catalog_with_default_zone,
    col,
    iceberg_commit,
    refused,
)

MAIN_HEAD = 100


def _made(snapshot_id: int, parent: int | None, number: int) -> BranchSnapshot:
    return BranchSnapshot(
        snapshot_id=snapshot_id,
        parent_id=parent,
        manifest_list=f"/w/t/metadata/snap-{snapshot_id}.avro",
        operation="append",
        summary=properties_of({"added-records": "1"}),
        timestamp_ms=1_700_000_000_000 + number,
        sequence_number=number,
        schema_version=1,
    )


def _branch(*made: BranchSnapshot, name: str = "audit") -> c.AlterTableIcebergCommand:
    return c.AlterTableIceberg(
        table="E",
        add_branch_snapshots=made,
        set_refs=[SnapshotRef(name=name, snapshot_id=made[-1].snapshot_id, type=RefType.BRANCH)],
    )


def _table() -> Catalog:
    cat = catalog_with_default_zone()
    return apply(
        cat,
        c.CreateTable(
            name="E",
            columns=(col("id", ColumnType.INT64),),
            primary_key=(),
            keyless=True,
            iceberg=c.IcebergTableSpec(),
        ),
    )


def _state(cat: Catalog) -> tuple[BranchSnapshot, ...]:
    state = cat.table("PUBLIC", "E").iceberg
    assert state is not None
    return state.branch_snapshots


def test_branch_snapshots_are_kept_in_order_and_survive_a_snapshot_of_the_catalog() -> None:
    cat = apply(_table(), _branch(_made(1, MAIN_HEAD, 2), _made(2, 1, 3)))
    cat = apply(cat, _branch(_made(3, 2, 5)))
    assert [b.snapshot_id for b in _state(cat)] == [1, 2, 3]
    assert decode_snapshot(encode_snapshot(cat)).digest() == cat.digest()


def test_a_snapshot_id_is_committed_once() -> None:
    cat = apply(_table(), _branch(_made(1, MAIN_HEAD, 2)))
    error = refused(cat, ErrorCode.VALIDATION_ERROR, _branch(_made(1, MAIN_HEAD, 3), name="b2"))
    assert "snapshot 1 is committed already" in str(error)


def test_a_branch_snapshot_a_ref_names_is_not_removed() -> None:
    cat = apply(_table(), _branch(_made(1, MAIN_HEAD, 2)), _branch(_made(2, 1, 3)))
    remove = c.AlterTableIceberg(table="E", remove_branch_snapshots=[2])
    error = refused(cat, ErrorCode.VALIDATION_ERROR, remove)
    assert "snapshot 2 is branch audit's; remove the branch first" in str(error)
    cat = apply(cat, c.AlterTableIceberg(table="E", remove_branch_snapshots=[1, 99]))
    assert [b.snapshot_id for b in _state(cat)] == [2]
    cat = apply(cat, c.AlterTableIceberg(table="E", remove_refs=["audit"]))
    cat = apply(cat, remove)
    assert _state(cat) == ()


def test_each_branch_line_keeps_the_main_snapshot_it_was_made_on() -> None:
    lines = [_made(1, MAIN_HEAD, 2), _made(2, 1, 3), _made(3, 50, 4), _made(4, None, 5)]
    assert branch_bases(lines) == {MAIN_HEAD, 50}


def test_loads_list_branch_snapshots_beside_main_s_and_number_after_both() -> None:
    cat = apply(_table(), _branch(_made(1, MAIN_HEAD, 2), _made(2, 1, 3)))
    state = cat.table("PUBLIC", "E").iceberg
    served = snapshots_of("/w/t", [iceberg_commit(1, MAIN_HEAD, None)], state=state)
    assert [s["snapshot-id"] for s in served.snapshots] == [MAIN_HEAD, 1, 2]
    assert served.snapshots[2]["parent-snapshot-id"] == 1
    assert served.snapshots[2]["summary"] == {"added-records": "1", "operation": "append"}
    assert served.current_snapshot_id == MAIN_HEAD and served.last_sequence_number == 3
    assert served.refs["audit"] == {"snapshot-id": 2, "type": "branch"}
    assert [s["snapshot-id"] for s in served.snapshot_log] == [MAIN_HEAD]
    only_refs = snapshots_of(
        "/w/t", [iceberg_commit(1, MAIN_HEAD, None)], state=state, refs_only=True
    )
    assert [s["snapshot-id"] for s in only_refs.snapshots] == [MAIN_HEAD, 2]
    # Once published, the branch's head is main's snapshot, listed once.
    published = [iceberg_commit(1, MAIN_HEAD, None), iceberg_commit(3, 2, MAIN_HEAD)]
    after = snapshots_of("/w/t", published, state=state)
    assert [s["snapshot-id"] for s in after.snapshots] == [MAIN_HEAD, 1, 2]
    assert after.current_snapshot_id == 2
