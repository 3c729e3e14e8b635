"""Reading a file as the table's columns: a UUID written as Iceberg writes it reads as text."""

from __future__ import annotations

import uuid

import pyarrow as pa

from catalog.column_types import ColumnType
from catalog.descriptors import ColumnDescriptor
from spark.evolution import project
from spark.types import FIELD_ID


def test_sixteen_byte_uuids_read_as_their_canonical_text() -> None:
    column = ColumnDescriptor(id=3, name="U", type=ColumnType.UUID)
    first = uuid.UUID("0f8fad5b-d9cb-469f-a165-70867728950e")
    for kind in (pa.uuid(), pa.binary(16)):
        storage = pa.array([first.bytes, None], type=pa.binary(16))
        values = pa.ExtensionArray.from_storage(kind, storage) if kind == pa.uuid() else storage
        field = pa.field("u", kind, metadata={FIELD_ID: b"3"})
        data = pa.Table.from_arrays([values], schema=pa.schema([field]))
        assert project(data, [column]).column("U").to_pylist() == [str(first), None]
