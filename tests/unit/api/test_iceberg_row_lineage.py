"""Row lineage of format version 3 tables: the row ids snapshots give out, checked and served."""

from __future__ import annotations

import pytest

from api.iceberg.appends import check_row_ids
from api.iceberg.errors import IcebergError
from api.iceberg.models import TableMetadata
from api.iceberg.snapshots import snapshots_of
from api.iceberg.updates import AddedSnapshot
from catalog.data.files import DataCommit
from catalog.data.iceberg_table import IcebergTableState
from tests.unit.catalog.helpers import iceberg_commit


def _metadata(format_version: int, next_row_id: int | None) -> TableMetadata:
    return TableMetadata(
        format_version=format_version,
        table_uuid="u",
        location="/w",
        last_updated_ms=0,
        last_column_id=1,
        schemas=[],
        current_schema_id=1,
        next_row_id=next_row_id,
    )


def _snapshot(snapshot_id: int, first: int | None, added: int | None) -> AddedSnapshot:
    return AddedSnapshot.model_validate(
        {
            "snapshot-id": snapshot_id,
            "timestamp-ms": 1,
            "manifest-list": "/w/m.avro",
            "first-row-id": first,
            "added-rows": added,
        }
    )


def test_snapshots_of_a_format_3_table_give_ids_from_the_next_row_id_on() -> None:
    check_row_ids(_metadata(3, 10), [_snapshot(1, 10, 5), _snapshot(2, 15, 1)], "T")
    check_row_ids(_metadata(2, None), [_snapshot(1, None, None)], "T")  # format 2: none


@pytest.mark.parametrize(
    ("chain", "status", "reason"),
    [
        ([_snapshot(1, None, None)], 400, "snapshot 1 of table T has no first-row-id"),
        ([_snapshot(1, 9, 1)], 409, "ids from 9, but the table's next-row-id is 10"),
        ([_snapshot(1, 10, 5), _snapshot(2, 12, 1)], 409, "ids from 12, but .* is 15"),
    ],
)
def test_row_ids_given_out_twice_or_not_at_all_are_refused(
    chain: list[AddedSnapshot], status: int, reason: str
) -> None:
    with pytest.raises(IcebergError, match=reason) as refused:
        check_row_ids(_metadata(3, 10), chain, "T")
    assert refused.value.status == status


def _commit(seq: int, first: int | None, added: int | None) -> DataCommit:
    """Return an engine's commit with row ids, or (``first`` None) the Spark source's."""
    made = iceberg_commit(seq, seq, first_row_id=first, added_rows=added)
    return made if first is not None else made.model_copy(update={"iceberg": None})


def test_a_format_3_table_serves_each_snapshot_s_row_ids_and_the_next() -> None:
    commits = [_commit(1, 0, 3), _commit(2, None, None), _commit(3, 3, 2)]
    served = snapshots_of("/w", commits, state=IcebergTableState(format_version=3))
    lineage = [(s["first-row-id"], s["added-rows"]) for s in served.snapshots]
    assert lineage == [(0, 3), (3, 0), (3, 2)]  # the Spark source's commit gave none
    assert served.next_row_id == 5
    plain = snapshots_of("/w", commits, state=IcebergTableState(format_version=2))
    assert all("first-row-id" not in s for s in plain.snapshots)
