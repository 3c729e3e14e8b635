"""Rows an engine deleted by position (Iceberg's position delete files, merge-on-read).

A position delete file is a Parquet file of rows ``(file_path, pos)``: the data file, by its
location, and the position of a deleted row in it (from 0). Spark, Trino and DuckDB write them
for ``DELETE``, ``UPDATE`` and ``MERGE`` on a table set to merge-on-read. The catalog records
them as files of their data commit (``DataFile.content``); a read of the catalog's Spark
source reads the visible ones on the driver and leaves those rows out of each data file it
reads. A delete file applies to the data files visible with it: an overwrite that hides a data
file hides the file's deletes with it, and a data file's path is never reused.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from catalog.data.files import DataFile
from catalog.data.warehouse import folder_of, inside
from catalog.errors import ValidationError
from spark.table_folder import TableFolder

DeletedRows = Mapping[str, pa.Array]
"""The positions of deleted rows, per data file (its path relative to the table's folder)."""


def deleted_rows(folder: TableFolder, deletes: Sequence[DataFile]) -> dict[str, pa.Array]:
    """Return the rows ``deletes`` (position delete files in ``folder``) delete, per data file.

    A row naming a file outside ``folder`` names none of the table's files and is left out.

    Raises:
        ValueError: a delete file without the ``file_path`` and ``pos`` columns.
        OSError: a delete file that cannot be read.
    """
    found: dict[str, list[pa.Array]] = {}
    root = folder.location
    for delete in deletes:
        files, path = folder.file(delete.path)
        names = pq.read_schema(path, filesystem=files).names
        if "file_path" not in names or "pos" not in names:
            raise ValueError(
                f"position delete file {path} has no file_path and pos columns: it is not a "
                "position delete file"
            )
        data = pq.read_table(path, columns=["file_path", "pos"], filesystem=files)
        paths, positions = data.column("file_path"), data.column("pos")
        for named in pc.unique(paths).to_pylist():
            if named is None:
                continue
            try:
                named_file = folder_of(named)
            except ValidationError:
                continue  # another filesystem: not one of the table's files
            if not inside(named_file, root):
                continue
            relative = named_file[len(root) + 1 :]
            chosen = pc.filter(positions, pc.equal(paths, named)).drop_null()
            found.setdefault(relative, []).append(chosen.combine_chunks().cast(pa.int64()))
    return {p: pa.concat_arrays(arrays) for p, arrays in found.items()}


def without_deleted(data: pa.Table, positions: pa.Array) -> pa.Table:
    """Return the rows of ``data`` (a whole data file, in order) not at ``positions``."""
    keep = np.ones(data.num_rows, dtype=bool)
    at = positions.to_numpy(zero_copy_only=False)
    keep[at[(at >= 0) & (at < data.num_rows)]] = False
    return data.filter(pa.array(keep))
