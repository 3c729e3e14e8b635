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

import os
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from catalog.data.files import DataFile
from catalog.data.warehouse import local_folder
from catalog.errors import ValidationError

DeletedRows = Mapping[str, pa.Array]
"""The positions of deleted rows, per data file (its path relative to the table's folder)."""


def deleted_rows(folder: Path, deletes: Sequence[DataFile]) -> dict[str, pa.Array]:
    """Return the rows ``deletes`` (position delete files in ``folder``) delete, per data file.

    A row naming a file outside ``folder`` names none of the table's files and is left out.

    Raises:
        ValueError: a delete file without the ``file_path`` and ``pos`` columns.
        OSError: a delete file that cannot be read.
    """
    found: dict[str, list[pa.Array]] = {}
    root = os.path.normpath(folder)
    for delete in deletes:
        path = folder / delete.path
        names = pq.read_schema(path).names
        if "file_path" not in names or "pos" not in names:
            raise ValueError(
                f"position delete file {path} has no file_path and pos columns: it is not a "
                "position delete file"
            )
        data = pq.read_table(path, columns=["file_path", "pos"])
        paths, positions = data.column("file_path"), data.column("pos")
        for named in pc.unique(paths).to_pylist():
            if named is None:
                continue
            try:
                relative = os.path.relpath(local_folder(named), root)
            except ValidationError:
                continue  # another filesystem: not one of the table's files
            if relative.startswith(".."):
                continue
            chosen = pc.filter(positions, pc.equal(paths, named)).drop_null()
            found.setdefault(relative, []).append(chosen.combine_chunks().cast(pa.int64()))
    return {p: pa.concat_arrays(arrays) for p, arrays in found.items()}


def without_deleted(data: pa.Table, positions: pa.Array) -> pa.Table:
    """Return the rows of ``data`` (a whole data file, in order) not at ``positions``."""
    keep = np.ones(data.num_rows, dtype=bool)
    at = positions.to_numpy(zero_copy_only=False)
    keep[at[(at >= 0) & (at < data.num_rows)]] = False
    return data.filter(pa.array(keep))
