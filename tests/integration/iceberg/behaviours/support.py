"""What the ported behaviours share: Iceberg's fixture schemas, specs, orders and data files.

The names follow ``CatalogTests``: ``SCHEMA`` is what a test asks for, ``TABLE_SCHEMA`` what
the catalog should answer (field ids assigned afresh from 1), and so on. ``FILE_A``, ``FILE_B``
and ``FILE_C`` of the Java suite are paths under ``/path/to``; this catalog records a data file
only in its table's folder and refuses one that does not exist (its documented rule), so here
each is a real two-row Parquet file of that name under ``<location>/data``.
"""

from __future__ import annotations

import re
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from pyiceberg.catalog.rest import RestCatalog
from pyiceberg.manifest import DataFile, DataFileContent, FileFormat
from pyiceberg.partitioning import PartitionField, PartitionSpec
from pyiceberg.schema import Schema
from pyiceberg.table import Table, Transaction
from pyiceberg.table.sorting import NullOrder, SortDirection, SortField, SortOrder
from pyiceberg.transforms import BucketTransform, IdentityTransform, Transform
from pyiceberg.typedef import Record
from pyiceberg.types import IntegerType, NestedField, StringType, StructType

NS = ("newdb",)
TABLE = ("newdb", "newtable")
RENAMED_TABLE = ("newdb", "table_renamed")
TBL = ("ns", "tbl")

SCHEMA = Schema(
    NestedField(3, "id", IntegerType(), required=True, doc="unique ID 🤪"),
    NestedField(4, "data", StringType(), required=True),
)
TABLE_SCHEMA = Schema(
    NestedField(1, "id", IntegerType(), required=True, doc="unique ID 🤪"),
    NestedField(2, "data", StringType(), required=True),
)
REPLACE_SCHEMA = Schema(
    NestedField(2, "id", IntegerType(), required=True, doc="unique ID 🤪"),
    NestedField(3, "data", StringType(), required=True),
)
OTHER_SCHEMA = Schema(NestedField(1, "some_id", IntegerType(), required=True))

SPEC = PartitionSpec(
    PartitionField(source_id=3, field_id=1000, transform=BucketTransform(16), name="id_bucket")
)
TABLE_SPEC = PartitionSpec(
    PartitionField(source_id=1, field_id=1000, transform=BucketTransform(16), name="id_bucket"),
    spec_id=0,
)


def _ascending(source_id: int, bucket: bool) -> SortField:
    transform: Transform[Any, Any] = BucketTransform(16) if bucket else IdentityTransform()
    return SortField(
        source_id=source_id,
        transform=transform,
        direction=SortDirection.ASC,
        null_order=NullOrder.NULLS_FIRST,
    )


WRITE_ORDER = SortOrder(_ascending(3, True), _ascending(3, False))
TABLE_WRITE_ORDER = SortOrder(_ascending(1, True), _ascending(1, False), order_id=1)

ROWS = pa.table(
    {"id": pa.array([1, 2], pa.int32()), "data": pa.array(["a", "b"], pa.string())},
    schema=pa.schema(
        [pa.field("id", pa.int32(), nullable=False), pa.field("data", pa.string(), False)]
    ),
)


def struct(schema: Schema) -> StructType:
    """The schema as Java's ``asStruct()``: its fields, without schema id or identifiers."""
    return schema.as_struct()


def write_rows(location: Path, name: str) -> Path:
    """Write ``ROWS`` as the Parquet file ``<location>/data/<name>``; return its path."""
    written = location / "data" / name
    written.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(ROWS, written)
    return written


def data_file(table: Table | Transaction, name: str, partition: Record | None = None) -> DataFile:
    """Write a two-row Parquet file ``name`` under ``table``'s data folder; return its entry.

    ``FILE_A``, ``FILE_B`` and ``FILE_C`` are ``data_file(t, "data-a.parquet", Record(0))`` and
    so on: partition ``id_bucket`` 0, 1 and 2 of ``SPEC``.
    """
    metadata = table.metadata if isinstance(table, Table) else table.table_metadata
    written = write_rows(Path(metadata.location.removeprefix("file://")), name)
    entry = DataFile.from_args(
        content=DataFileContent.DATA,
        file_path=f"file://{written}",
        file_format=FileFormat.PARQUET,
        partition=partition if partition is not None else Record(),
        record_count=2,
        file_size_in_bytes=written.stat().st_size,
    )
    entry.spec_id = metadata.default_spec_id
    return entry


def _bucket(table: Table, bucket: int) -> Record:
    return Record(bucket) if table.spec().fields else Record()


def file_a(table: Table) -> DataFile:
    return data_file(table, "data-a.parquet", _bucket(table, 0))


def file_b(table: Table) -> DataFile:
    return data_file(table, "data-b.parquet", _bucket(table, 1))


def file_c(table: Table) -> DataFile:
    return data_file(table, "data-c.parquet", _bucket(table, 2))


def fast_append(table: Table, *files: DataFile) -> None:
    """Commit one fast append of ``files`` (Java's ``newFastAppend().appendFile(...)``)."""
    with table.transaction() as transaction:  # noqa: SIM117
        with transaction.update_snapshot().fast_append() as append:
            for each in files:
                append.append_data_file(each)


def file_paths(table: Table) -> list[str]:
    """The data files a scan of ``table`` plans (Java's ``newScan().planFiles()``)."""
    return sorted(task.file.file_path for task in table.scan().plan_files())


def assert_files(table: Table, *files: DataFile) -> None:
    """Java's ``assertFiles``: the scan plans exactly ``files``."""
    assert file_paths(table) == sorted(f.file_path for f in files)


def metadata_file_locations(table: Table) -> set[str | None]:
    """Java's ``ReachableFileUtil.metadataFileLocations(table, false)``.

    The current metadata file and the previous ones its metadata log names.
    """
    found: set[str | None] = {table.metadata_location}
    found.update(entry.metadata_file for entry in table.metadata.metadata_log)
    return found


def create_namespace(catalog: RestCatalog, namespace: tuple[str, ...]) -> None:
    """``requiresNamespaceCreate()`` holds here: a table needs its namespace first."""
    catalog.create_namespace(namespace)


def raises_wire(error: type[Exception], answer: str) -> AbstractContextManager[Any]:
    """Expect PyIceberg's ``error`` whose text starts with the server's ``type: message``.

    PyIceberg words a refused request as ``<type>: <message>`` from the error body, so the
    prefix names exactly what the server answered (the type Java's client maps to its
    exception, and the message Java's assertion reads).
    """
    return pytest.raises(error, match="^" + re.escape(answer))
