"""Random nested tables evolved at random: every version reads every file in its own shape.

Each step changes a field inside a nested column (add, drop, rename, widen, make nullable),
then rows of the new version are written as the Spark source writes them (``conform``,
``write_partitions``). After each step, every version so far reads every file written by then
through the source's own read (``read_file``), and gets exactly what the model
(``nested_model.read_as``) says, field by field through the ids; so does every file written
again in the last shape, as an upsert rewrites it.
"""

from __future__ import annotations

import random
import tempfile
from typing import Any

import pyarrow as pa
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from catalog import Catalog, CatalogError, prepare
from catalog import commands as c
from catalog.data.files import DataFile
from catalog.descriptors import ColumnDescriptor
from spark.evolution import conform
from spark.pruning import Predicate
from spark.table_folder import TableFolder
from spark.types import arrow_schema
from spark.warehouse import read_file, write_partitions
from tests.unit.catalog.helpers import catalog_with_default_zone
from tests.unit.spark.nested_model import (
    TABLE,
    Step,
    create,
    nested_columns,
    read_rows,
    rows,
    step,
    steps,
)

Columns = tuple[ColumnDescriptor, ...]


class Written:
    """The files written so far, each with its version's columns and its rows."""

    def __init__(self, folder: str, rng: random.Random) -> None:
        self.folder, self.rng = TableFolder(folder), rng
        self.files: list[tuple[int, DataFile, list[dict[str, Any]]]] = []
        self.next_key = 0

    def write(self, version: int, columns: Columns) -> None:
        written = rows(self.rng, columns, self.next_key)
        self.next_key += len(written)
        batch = pa.RecordBatch.from_pylist(written, schema=arrow_schema(columns))
        data = conform(batch, columns, {col.id: col.name for col in columns}, (0,))
        for file in write_partitions(data, columns, self.folder, [0], 1, f"v{version}"):
            self.files.append((version, file, written))


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(columns=nested_columns(3), changes=steps(5), seed=st.integers(0, 2**32 - 1))
def test_every_version_reads_every_earlier_file_in_its_own_shape(
    columns: list[c.Column], changes: list[Step], seed: int
) -> None:
    cat: Catalog = prepare(catalog_with_default_zone(), [create(columns)]).catalog
    versions: list[Columns] = [cat.table("PUBLIC", TABLE).columns]
    with tempfile.TemporaryDirectory() as folder:
        written = Written(folder, random.Random(seed))
        written.write(0, versions[0])
        for change in changes:
            command = step(cat.table("PUBLIC", TABLE), *change)
            if command is None:
                continue
            try:
                cat = prepare(cat, [command]).catalog
            except CatalogError:
                continue  # a change the catalog refuses (a name taken, a struct's last field)
            versions.append(cat.table("PUBLIC", TABLE).columns)
            written.write(len(versions) - 1, versions[-1])
            for version, shape in enumerate(versions):
                for at, file, file_rows in written.files:
                    if at > version:
                        continue  # not visible then
                    read = read_file(written.folder, file.path, shape, [])
                    expected = read_rows(file_rows, versions[at], shape)
                    assert read.to_pylist() == expected, (version, at)
        # Files rewritten in the current shape (as an upsert or a delete rewrites them) hold
        # what their rows read as.
        for at, file, file_rows in written.files:
            current = read_file(written.folder, file.path, versions[-1], [])
            again = write_partitions(current, versions[-1], written.folder, [0], 1, "again")
            expected = read_rows(file_rows, versions[at], versions[-1])
            for rewritten in again:
                read = read_file(written.folder, rewritten.path, versions[-1], [])
                assert read.to_pylist() == expected
        key = versions[-1][0]
        assert key.name == "ID"
        wanted = Predicate(key, "ge", (written.next_key // 2,), (written.next_key // 2,))
        for at, file, file_rows in written.files:
            read = read_file(written.folder, file.path, versions[-1], [wanted])
            expected = read_rows(file_rows, versions[at], versions[-1])
            assert read.to_pylist() == [r for r in expected if r["ID"] >= written.next_key // 2]
