"""Where a table's Parquet files live, how rows go to partitions, reading one, orphan cleanup.

Layout: ``<location>/p<partition>/<write id>-<task>-<n>.parquet``, the table's location being
``<warehouse>/table_<id>`` or the folder an engine asked for; the warehouse and the table's
folder are ``catalog.data.warehouse``'s (``data_folder``). A file is visible only once a data commit
names it; files of a failed or killed job are orphans that ``remove_orphans`` deletes once they
are older than a grace period.
"""

from __future__ import annotations

import time
import uuid
import zlib
from collections.abc import Sequence
from fnmatch import fnmatch

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as ds
import pyarrow.parquet as pq

from api.client import CatalogClient
from catalog.column_types import ColumnType
from catalog.data.files import DataFile, IcebergPartition
from catalog.data.iceberg_table import PartitionSpec
from catalog.data.table_files import TableFileError, entries, remove_file
from catalog.data.warehouse import folder_of, table_folder
from catalog.descriptors import ColumnDescriptor
from spark.deletes import without_deleted
from spark.evolution import column_ids, for_file, project
from spark.iceberg_partitions import split
from spark.pruning import Predicate, row_filter
from spark.statistics import file_stats
from spark.table_folder import TableFolder
from spark.types import arrow_type, file_type


def partition_of_rows(data: pa.Table, key_positions: Sequence[int], partitions: int) -> pa.Array:
    """Return each row's partition: a stable hash of its colocation values, mod ``partitions``.

    The hash (CRC-32 of the values' text) is the same on every machine and Python version.
    A table without a key has no colocation columns: its rows are spread by all their values.
    """
    if partitions == 1:
        return pa.repeat(pa.scalar(0, pa.int32()), data.num_rows)
    positions = key_positions or range(data.num_columns)
    columns = [data.column(i).to_pylist() for i in positions]
    return pa.array(
        [zlib.crc32(repr(key).encode()) % partitions for key in zip(*columns, strict=True)],
        type=pa.int32(),
    )


def write_partitions(
    data: pa.Table,
    columns: Sequence[ColumnDescriptor],
    folder: TableFolder,
    key_positions: Sequence[int],
    partitions: int,
    prefix: str,
    iceberg: PartitionSpec | None = None,
) -> list[DataFile]:
    """Write ``data`` (as ``columns``) as one Parquet file per non-empty partition.

    ``data`` is as ``conform`` or ``project`` gives it; files hold it as ``for_file`` makes it
    (TIME and UUID as Iceberg has them). Local files are written under a temporary name and
    renamed, so a file that exists is complete (an S3 object is whole once written). With an
    Iceberg partition spec (``spec_to_write``), a partition's rows go to one file per Iceberg
    partition, which each file records.

    Returns:
        The files, each with its column statistics.

    Raises:
        PartitionTransformError: a field of ``iceberg`` the writer cannot compute.
    """
    assigned = partition_of_rows(data, key_positions, partitions)
    files: list[DataFile] = []
    for partition in range(partitions):
        rows = data.filter(pc.equal(assigned, partition)) if partitions > 1 else data
        if rows.num_rows == 0:
            continue
        if iceberg is None:
            files.append(_write_file(rows, columns, folder, partition, prefix, None))
            continue
        for part in split(rows, columns, iceberg):
            taken = rows.take(part.rows)
            files.append(_write_file(taken, columns, folder, partition, prefix, part.partition))
    return files


def _write_file(
    rows: pa.Table,
    columns: Sequence[ColumnDescriptor],
    folder: TableFolder,
    partition: int,
    prefix: str,
    iceberg: IcebergPartition | None,
) -> DataFile:
    relative = f"p{partition}/{prefix}-{uuid.uuid4().hex[:12]}.parquet"
    files, target = folder.file(relative)
    stored = for_file(rows, columns)
    if folder.on_s3:
        pq.write_table(stored, target, compression="zstd", filesystem=files)
    else:
        files.create_dir(target.rpartition("/")[0], recursive=True)
        partial = f"{target}.partial"
        pq.write_table(stored, partial, compression="zstd", filesystem=files)
        files.move(partial, target)
    return DataFile(
        path=relative,
        partition=partition,
        rows=rows.num_rows,
        size=int(files.get_file_info(target).size or 0),
        stats=file_stats(stored, columns),
        iceberg_partition=iceberg,
    )


def read_file(
    folder: TableFolder,
    relative: str,
    columns: Sequence[ColumnDescriptor],
    predicates: Sequence[Predicate],
    deleted: pa.Array | None = None,
) -> pa.Table:
    """Return the rows of one file, as ``columns``, that every one of ``predicates`` keeps.

    Row groups whose Parquet statistics rule them out are not read (for the predicates on
    columns the file holds with the type they have now, in either encoding of TIME, and in
    the text encoding of UUID); the rows read are then filtered after projection, so columns
    renamed, widened or added since the file was written, and TIME and UUID in either
    encoding, are judged as the read sees them. The rows at ``deleted`` positions (an
    engine's position deletes) are left out: the file is then read whole, in order.
    """
    files, path = folder.file(relative)
    if deleted is not None and len(deleted):
        data = project(without_deleted(pq.read_table(path, filesystem=files), deleted), columns)
        kept = row_filter(predicates, lambda column: column.name)
        return data if kept is None else data.filter(kept)
    if not predicates:
        return project(pq.read_table(path, filesystem=files), columns)
    dataset = ds.dataset(path, format="parquet", filesystem=files)
    schema = dataset.schema
    positions = column_ids(schema)

    def name_in_file(column: ColumnDescriptor) -> str | None:
        position = positions.get(column.id)
        if position is None:
            return None
        kind = schema.field(position).type
        # A TIME as time64 compares exactly with its microseconds; a UUID's 16 bytes are not
        # compared with the text a predicate holds (the rows are, once projected).
        time64 = column.type is ColumnType.TIME and kind == file_type(column)
        return str(schema.field(position).name) if kind == arrow_type(column) or time64 else None

    def type_in_file(column: ColumnDescriptor) -> pa.DataType:
        return schema.field(positions[column.id]).type

    in_file = row_filter(predicates, name_in_file, type_in_file)
    data = project(dataset.to_table(filter=in_file), columns)
    wanted = row_filter(predicates, lambda column: column.name)
    return data if wanted is None else data.filter(wanted)


def delete_files(folder: TableFolder, files: Sequence[DataFile]) -> None:
    """Delete written files (of an aborted write), through no link; missing ones are fine."""
    for file in files:
        try:
            folder.remove(file.path)
        except TableFileError as e:
            if not e.missing:
                raise


def remove_orphans(
    client: CatalogClient,
    warehouse: str,
    table_id: int,
    *,
    older_than_s: float = 3600.0,
    location: str | None = None,
) -> list[str]:
    """Delete the table's files that no commit names and that are older than the grace period.

    The grace period protects files of writes still in progress (written, not yet committed).
    The folder (local, or on S3 with the process's own keys) is walked without following a
    link (``catalog.data.table_files``): a link in it is removed itself when it is an orphan,
    and a linked folder is never entered.

    Args:
        client: a client of the catalog.
        warehouse: the warehouse (a folder or ``s3://bucket/prefix``), where a table that
            records no location has its folder.
        table_id: the table.
        older_than_s: the grace period.
        location: the table's location (its descriptor's ``location``); None: its folder
            ``table_<id>`` in ``warehouse``.

    Returns:
        The deleted paths.

    Raises:
        TableFileError: the table's folder is reached through a link.
    """
    folder = folder_of(location) if location else table_folder(folder_of(warehouse), table_id)
    named: set[str] = set()
    for commit in client.data_commits(table_id, history=True).commits:
        named.update(f.path for f in commit.files)
    cutoff = time.time() - older_than_s
    removed: list[str] = []
    for name, found in sorted(entries(folder), key=lambda e: e[0]):
        if not (fnmatch(name, "p*") and found.kind == "folder"):
            continue  # a link to a folder is a link here (its own status): never entered
        for file_name, status in sorted(entries(folder, name), key=lambda e: e[0]):
            relative = f"{name}/{file_name}"
            if not fnmatch(file_name, "*.parquet*") or status.kind == "folder":
                continue
            if relative not in named and status.mtime < cutoff:
                remove_file(folder, relative)
                removed.append(f"{folder}/{relative}")
    return removed
