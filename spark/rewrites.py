"""Rows replaced or deleted by key: the files that hold them are written again without them.

A data file never changes. An upsert (``.option("write", "upsert")``) or a delete
(``.option("write", "delete")``) finds the table's visible files that may hold one of its keys
(a file whose key bounds hold none is not read), writes each file that does hold one again
without those rows (as the table's current columns, so the new file belongs to the write's
schema version), and commits the new files, its own written rows for an upsert, and the
removal of the old files in one data commit (``removed``) that expects the table's latest
commit to be the one it read. A file is rewritten once per write: after a lost race only the
files that came in between are read.
"""

from __future__ import annotations

import io
from collections.abc import Iterable, Sequence

import pyarrow as pa
import pyarrow.parquet as pq

from catalog.data.files import DataFile
from catalog.data.iceberg_table import PartitionSpec
from catalog.descriptors import ColumnDescriptor
from spark.deletes import DeletedRows, without_deleted
from spark.evolution import project
from spark.keys import WrittenKeys
from spark.table_folder import TableFolder
from spark.types import arrow_field
from spark.warehouse import delete_files, write_partitions


def keys_to_bytes(keys: pa.Table) -> bytes:
    """Return ``keys`` as Arrow IPC stream bytes (what a delete task hands the driver)."""
    sink = io.BytesIO()
    with pa.ipc.new_stream(sink, keys.schema) as stream:
        stream.write_table(keys)
    return sink.getvalue()


def keys_from_bytes(parts: Sequence[bytes], key: Sequence[ColumnDescriptor]) -> pa.Table:
    """Return the distinct keys of every task's ``keys_to_bytes``, named as the ``key``."""
    tables = [pa.ipc.open_stream(part).read_all() for part in parts if part]
    schema = pa.schema([arrow_field(c) for c in key])
    keys = pa.concat_tables(tables) if tables else schema.empty_table()
    names = [c.name for c in key]
    distinct = keys.group_by(names, use_threads=False).aggregate([])
    return distinct.select(names).cast(schema)


def _rows_without(data: pa.Table, keys: WrittenKeys) -> pa.Array:
    """Return, in order, the row numbers of ``data`` whose key is not one of ``keys``.

    Only the key columns and the row numbers are joined: a join carries no STRUCT, ARRAY or
    MAP column along.
    """
    names = [f"k{i}" for i in range(len(keys.columns))]
    rows = pa.table(
        [*(data.column(c.name) for c in keys.columns), pa.array(range(data.num_rows), pa.int64())],
        names=[*names, "row"],
    )
    given = keys.keys.select([c.name for c in keys.columns]).rename_columns(names)
    kept = rows.join(given, keys=names, join_type="left anti", use_threads=False)
    return kept.column("row").combine_chunks().sort()


class Rewrite:
    """The table's files that hold some of a write's keys, written again without those rows.

    Args:
        folder: the table's folder.
        columns: the table's current columns (what a rewritten file holds).
        colocation: the positions, in ``columns``, of the colocation columns.
        partitions: the table's partition count.
        prefix: the name prefix of rewritten files (the write's).
        iceberg: the Iceberg partition spec the table's files are written for, if any.
    """

    def __init__(
        self,
        folder: TableFolder,
        columns: Sequence[ColumnDescriptor],
        colocation: Sequence[int],
        partitions: int,
        prefix: str,
        iceberg: PartitionSpec | None = None,
    ) -> None:
        self.folder = folder
        self.columns = tuple(columns)
        self.colocation = tuple(colocation)
        self.partitions = partitions
        self.prefix = prefix
        self.iceberg = iceberg
        self._done: dict[tuple[str, tuple[int, ...] | None], list[DataFile] | None] = {}
        """Per file read (and the positions of its rows deleted then), its rewrite (None: it
        holds no key of the write)."""

    def without(
        self, keys: WrittenKeys, files: Iterable[DataFile], deleted: DeletedRows
    ) -> tuple[list[str], list[DataFile]]:
        """Return the ``files`` that hold one of ``keys`` (their paths) and their rewrites.

        A rewrite leaves out the rows an engine deleted by position (``deleted``) too.
        """
        removed: list[str] = []
        added: list[DataFile] = []
        for file in files:
            gone = deleted.get(file.path)
            # A round after another writer came first reads a file again when an engine
            # deleted more of its rows since: a rewrite made before would bring them back.
            done = (file.path, None if gone is None else tuple(gone.to_pylist()))
            if done not in self._done:
                self._done[done] = self._rewritten(keys, file, gone)
            rewritten = self._done[done]
            if rewritten is not None:
                removed.append(file.path)
                added.extend(rewritten)
        return removed, added

    def _rewritten(
        self, keys: WrittenKeys, file: DataFile, deleted: pa.Array | None
    ) -> list[DataFile] | None:
        if not keys.may_be_in(file):
            return None
        files, path = self.folder.file(file.path)
        data = pq.read_table(path, filesystem=files)
        data = project(data if deleted is None else without_deleted(data, deleted), self.columns)
        kept = data.take(_rows_without(data, keys))
        if kept.num_rows == data.num_rows:
            return None
        schema = pa.schema([arrow_field(c) for c in self.columns])
        kept = pa.Table.from_arrays([kept.column(c.name) for c in self.columns], schema=schema)
        if kept.num_rows == 0:
            return []
        return write_partitions(
            kept,
            self.columns,
            self.folder,
            self.colocation,
            self.partitions,
            self.prefix,
            self.iceberg,
        )

    def unused(self, committed: Sequence[DataFile]) -> None:
        """Delete the rewrites no commit took (files that a later commit removed first)."""
        kept = {f.path for f in committed}
        stale = [f for files in self._done.values() if files for f in files if f.path not in kept]
        delete_files(self.folder, stale)

    def written(self) -> list[DataFile]:
        """Return every rewrite made (to delete when the write commits nothing)."""
        return [f for files in self._done.values() if files for f in files]
