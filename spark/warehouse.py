"""Where a table's Parquet files live, how rows go to partitions, and orphan cleanup.

Layout: ``<warehouse>/table_<id>/p<partition>/<write id>-<task>-<n>.parquet``; the warehouse
and the table's folder are ``catalog.warehouse``'s. A file is visible only once a data commit
names it; files of a failed or killed job are orphans that ``remove_orphans`` deletes once they
are older than a grace period.
"""

from __future__ import annotations

import time
import uuid
import zlib
from collections.abc import Sequence
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from api.client import CatalogClient
from catalog.data_files import DataFile
from catalog.warehouse import table_folder


def partition_of_rows(data: pa.Table, key_positions: Sequence[int], partitions: int) -> pa.Array:
    """Return each row's partition: a stable hash of its colocation values, mod ``partitions``.

    The hash (CRC-32 of the values' text) is the same on every machine and Python version.
    """
    if partitions == 1:
        return pa.repeat(pa.scalar(0, pa.int32()), data.num_rows)
    columns = [data.column(i).to_pylist() for i in key_positions]
    return pa.array(
        [zlib.crc32(repr(key).encode()) % partitions for key in zip(*columns, strict=True)],
        type=pa.int32(),
    )


def write_partitions(
    data: pa.Table,
    folder: Path,
    key_positions: Sequence[int],
    partitions: int,
    prefix: str,
) -> list[DataFile]:
    """Write ``data`` as one Parquet file per non-empty partition; return the files.

    Files are written under a temporary name and renamed, so a file that exists is complete.
    """
    assigned = partition_of_rows(data, key_positions, partitions)
    files: list[DataFile] = []
    for partition in range(partitions):
        rows = data.filter(pc.equal(assigned, partition)) if partitions > 1 else data
        if rows.num_rows == 0:
            continue
        relative = f"p{partition}/{prefix}-{uuid.uuid4().hex[:12]}.parquet"
        target = folder / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        partial = target.with_suffix(".parquet.partial")
        pq.write_table(rows, partial, compression="zstd")
        partial.rename(target)
        files.append(
            DataFile(
                path=relative,
                partition=partition,
                rows=rows.num_rows,
                size=target.stat().st_size,
            )
        )
    return files


def delete_files(folder: Path, files: Sequence[DataFile]) -> None:
    """Delete written files (of an aborted write); missing ones are fine."""
    for file in files:
        (folder / file.path).unlink(missing_ok=True)


def remove_orphans(
    client: CatalogClient, warehouse: Path, table_id: int, *, older_than_s: float = 3600.0
) -> list[Path]:
    """Delete the table's files that no commit names and that are older than the grace period.

    The grace period protects files of writes still in progress (written, not yet committed).

    Returns:
        The deleted paths.
    """
    folder = table_folder(warehouse, table_id)
    if not folder.exists():
        return []
    named: set[str] = set()
    for commit in client.data_commits(table_id, history=True).commits:
        named.update(f.path for f in commit.files)
    cutoff = time.time() - older_than_s
    removed: list[Path] = []
    for path in sorted(folder.glob("p*/*.parquet*")):
        relative = path.relative_to(folder).as_posix()
        if relative not in named and path.stat().st_mtime < cutoff:
            path.unlink(missing_ok=True)
            removed.append(path)
    return removed
