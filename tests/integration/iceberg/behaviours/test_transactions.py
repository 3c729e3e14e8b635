"""``CatalogTests``' create-transaction behaviours, through PyIceberg's staged create.

PyIceberg's ``create_table_transaction`` sends what Java's ``createTransaction()`` sends:
``POST /v1/namespaces/{ns}/tables`` with ``stage-create`` true, then one commit with
``assert-create`` and every update. Java's ``createOrReplaceTransaction()`` and
``newReplaceTableTransaction(..., orCreate=true)`` on a table that does not exist send exactly
those requests too, so those behaviours are ported through it; their replace half has no
PyIceberg counterpart (see the package's table).

Where Java expects ``AlreadyExistsException`` from a create transaction's commit, the server
answers 409; PyIceberg names a 409 on a commit ``CommitFailedException``.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from pyiceberg.catalog.rest import RestCatalog
from pyiceberg.exceptions import CommitFailedException
from pyiceberg.schema import Schema
from pyiceberg.table import CreateTableTransaction, Table
from pyiceberg.table.sorting import NullOrder
from pyiceberg.transforms import IdentityTransform
from pyiceberg.typedef import Record
from pyiceberg.types import LongType, NestedField

from tests.integration.iceberg.behaviours.support import (
    NS,
    OTHER_SCHEMA,
    SCHEMA,
    SPEC,
    TABLE,
    TABLE_SCHEMA,
    TABLE_SPEC,
    TABLE_WRITE_ORDER,
    WRITE_ORDER,
    assert_files,
    data_file,
    file_paths,
    struct,
)

pytestmark = pytest.mark.timeout(60)

PROPERTIES = {"user": "someone", "created-at": "2022-02-25T00:38:19"}
NO_V1 = (
    "a create that asks for format version 1 is refused with 400: the server serves format "
    "versions 2 and 3"
)


def append_in(transaction: CreateTableTransaction, name: str, bucket: int | None) -> str:
    """A fast append inside the transaction of a two-row file ``name``; return its path."""
    partition = Record(bucket) if bucket is not None else Record()
    written = data_file(transaction, name, partition)
    with transaction.update_snapshot().fast_append() as append:
        append.append_data_file(written)
    return written.file_path


def check_complete(table: Table, location: str) -> None:
    assert struct(table.schema()) == struct(TABLE_SCHEMA)
    assert table.spec().fields == TABLE_SPEC.fields
    assert table.sort_order() == TABLE_WRITE_ORDER
    assert table.properties.items() >= PROPERTIES.items()
    assert table.location() == location  # overridesRequestedLocation() is false


def simple_create(iceberg: RestCatalog) -> None:
    iceberg.create_namespace(NS)
    create = iceberg.create_table_transaction(TABLE, SCHEMA)
    assert not iceberg.table_exists(TABLE)
    a = append_in(create, "data-a.parquet", None)
    assert not iceberg.table_exists(TABLE)
    create.commit_transaction()
    assert iceberg.table_exists(TABLE)
    table = iceberg.load_table(TABLE)
    assert file_paths(table) == [a]
    assert len(table.metadata.metadata_log) == 0


def _requested(tmp_path: Path) -> str:
    """Return the location a complete create asks for."""
    return str(tmp_path / "warehouse" / "requested" / "newdb" / "newtable")


def _begin_complete_create(
    iceberg: RestCatalog, tmp_path: Path
) -> tuple[CreateTableTransaction, str]:
    """Start a create transaction with a location, spec, order and properties; append one file.

    Returns the transaction and the appended file's path; the table does not exist yet.
    """
    iceberg.create_namespace(NS)
    location = _requested(tmp_path)
    create = iceberg.create_table_transaction(
        TABLE,
        SCHEMA,
        location=location,
        partition_spec=SPEC,
        sort_order=WRITE_ORDER,
        properties=PROPERTIES,
    )
    assert not iceberg.table_exists(TABLE)
    a = append_in(create, "data-a.parquet", 0)
    return create, a


def complete_create(iceberg: RestCatalog, tmp_path: Path) -> None:
    create, a = _begin_complete_create(iceberg, tmp_path)
    assert not iceberg.table_exists(TABLE)
    create.commit_transaction()
    assert iceberg.table_exists(TABLE)
    table = iceberg.load_table(TABLE)
    check_complete(table, _requested(tmp_path))
    assert file_paths(table) == [a]
    assert {t.file.spec_id for t in table.scan().plan_files()} == {table.spec().spec_id}
    assert len(table.metadata.metadata_log) == 0


def concurrent_create(iceberg: RestCatalog) -> None:
    iceberg.create_namespace(NS)
    create = iceberg.create_table_transaction(TABLE, SCHEMA)
    assert not iceberg.table_exists(TABLE)
    append_in(create, "data-a.parquet", None)
    assert not iceberg.table_exists(TABLE)
    iceberg.create_table(TABLE, OTHER_SCHEMA)
    with pytest.raises(CommitFailedException, match="Requirement failed: table already exists"):
        create.commit_transaction()
    table = iceberg.load_table(TABLE)
    assert struct(table.schema()) == struct(OTHER_SCHEMA)
    assert_files(table)


def test_create_transaction(iceberg: RestCatalog) -> None:
    simple_create(iceberg)


def test_complete_create_transaction(iceberg: RestCatalog, tmp_path: Path) -> None:
    complete_create(iceberg, tmp_path)


def test_complete_create_transaction_multiple_schemas(iceberg: RestCatalog, tmp_path: Path) -> None:
    create, a = _begin_complete_create(iceberg, tmp_path)
    with create.update_schema() as schema:
        schema.add_column("new_col", LongType())
    with create.update_spec() as spec:
        spec.add_identity("new_col")
    with create.update_sort_order() as order:
        order.asc("new_col", IdentityTransform(), NullOrder.NULLS_FIRST)
    another = data_file(create, "data-b.parquet", Record(0, 0))
    with create.update_snapshot().fast_append() as append:
        append.append_data_file(another)
    assert not iceberg.table_exists(TABLE)
    create.commit_transaction()
    assert iceberg.table_exists(TABLE)
    table = iceberg.load_table(TABLE)
    new_schema = Schema(*TABLE_SCHEMA.fields, NestedField(3, "new_col", LongType(), required=False))
    assert struct(table.schema()) == struct(new_schema)
    assert table.schema().schema_id == 1
    assert [(f.source_id, f.name) for f in table.spec().fields] == [
        (1, "id_bucket"),
        (3, "new_col"),
    ]
    assert table.spec().spec_id == 1
    assert [(f.source_id, f.transform) for f in table.sort_order().fields] == [
        (3, IdentityTransform())
    ]
    assert table.sort_order().order_id == 2
    assert table.properties.items() >= PROPERTIES.items()
    assert table.location() == _requested(tmp_path)
    specs = {t.file.file_path: t.file.spec_id for t in table.scan().plan_files()}
    assert specs == {a: 0, another.file_path: 1}
    assert len(table.metadata.metadata_log) == 0


def test_complete_create_transaction_v2(iceberg: RestCatalog, tmp_path: Path) -> None:
    iceberg.create_namespace(NS)
    location = _requested(tmp_path)
    create = iceberg.create_table_transaction(
        TABLE,
        SCHEMA,
        location=location,
        partition_spec=SPEC,
        sort_order=WRITE_ORDER,
        properties={**PROPERTIES, "format-version": "2"},
    )
    assert not iceberg.table_exists(TABLE)
    a = append_in(create, "data-a.parquet", 0)
    assert not iceberg.table_exists(TABLE)
    create.commit_transaction()
    table = iceberg.load_table(TABLE)
    check_complete(table, _requested(tmp_path))
    assert "format-version" not in table.properties
    snapshot = table.current_snapshot()
    assert snapshot is not None and snapshot.sequence_number == 1
    assert file_paths(table) == [a]
    assert len(table.metadata.metadata_log) == 0


def test_concurrent_create_transaction(iceberg: RestCatalog) -> None:
    concurrent_create(iceberg)


def test_create_or_replace_transaction_create(iceberg: RestCatalog) -> None:
    simple_create(iceberg)


def test_complete_create_or_replace_transaction_create(
    iceberg: RestCatalog, tmp_path: Path
) -> None:
    complete_create(iceberg, tmp_path)


def test_create_or_replace_transaction_concurrent_create(iceberg: RestCatalog) -> None:
    concurrent_create(iceberg)


@pytest.mark.parametrize(
    "format_version",
    [
        pytest.param(1, marks=pytest.mark.xfail(strict=True, reason=NO_V1)),
        2,
        3,
    ],
)
def test_create_table_transaction(iceberg: RestCatalog, format_version: int) -> None:
    iceberg.create_namespace(NS)
    iceberg.create_table_transaction(
        TABLE, SCHEMA, properties={"format-version": str(format_version)}
    ).commit_transaction()
    assert iceberg.load_table(TABLE).format_version == format_version


@pytest.mark.parametrize(
    "format_version",
    [
        pytest.param(1, marks=pytest.mark.xfail(strict=True, reason=NO_V1)),
        2,
        3,
    ],
)
def test_replace_table_transaction(iceberg: RestCatalog, format_version: int) -> None:
    """``newReplaceTableTransaction(..., orCreate=true)`` of a table that does not exist."""
    iceberg.create_namespace(NS)
    iceberg.create_table_transaction(
        TABLE, SCHEMA, properties={"format-version": str(format_version)}
    ).commit_transaction()
    assert iceberg.load_table(TABLE).format_version == format_version
