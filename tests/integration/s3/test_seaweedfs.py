"""The SeaweedFS fixture (tests/seaweedfs.py): a real S3 server with identities, STS and an
Iceberg REST catalog, seen through pyarrow's S3 filesystem and PyIceberg."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime

import httpx
import pyarrow as pa
import pyarrow.fs as pafs
import pytest
from pyiceberg.catalog import load_catalog
from pyiceberg.catalog.rest import RestCatalog
from pyiceberg.schema import Schema
from pyiceberg.types import LongType, NestedField, StringType

from tests.seaweedfs import (
    MIN_STS_DURATION_S,
    S3Keys,
    SeaweedFS,
    STSError,
    prefix_policy,
    seaweedfs_fixture,
)

WAREHOUSE = "warehouse"
seaweedfs = seaweedfs_fixture("module", table_buckets=[WAREHOUSE])

SCHEMA = Schema(
    NestedField(1, "id", LongType(), required=True),
    NestedField(2, "name", StringType(), required=False),
)


@pytest.fixture
def bucket(seaweedfs: SeaweedFS) -> str:
    """A new bucket of this test's own."""
    name = f"b-{uuid.uuid4().hex[:12]}"
    seaweedfs.create_bucket(name)
    return name


def put(fs: pafs.S3FileSystem, path: str, data: bytes) -> None:
    with fs.open_output_stream(path) as out:
        out.write(data)


def get(fs: pafs.S3FileSystem, path: str) -> bytes:
    with fs.open_input_stream(path) as source:
        data: bytes = source.read()
        return data


def refused(action: object) -> None:
    """Assert that calling ``action`` is refused by the server (Access Denied)."""
    assert callable(action)
    with pytest.raises(OSError, match="ACCESS_DENIED"):
        action()


# --- plain S3 ------------------------------------------------------------------------------


def test_put_get_list_delete(seaweedfs: SeaweedFS, bucket: str) -> None:
    fs = seaweedfs.filesystem()
    put(fs, f"{bucket}/a/one.txt", b"one")
    put(fs, f"{bucket}/a/two.txt", b"two" * 100_000)
    assert get(fs, f"{bucket}/a/one.txt") == b"one"
    assert get(fs, f"{bucket}/a/two.txt") == b"two" * 100_000
    listed = fs.get_file_info(pafs.FileSelector(f"{bucket}/a"))
    assert sorted(i.path for i in listed) == [f"{bucket}/a/one.txt", f"{bucket}/a/two.txt"]
    fs.delete_file(f"{bucket}/a/one.txt")
    assert fs.get_file_info(f"{bucket}/a/one.txt").type == pafs.FileType.NotFound
    assert bucket in {i.path for i in fs.get_file_info(pafs.FileSelector(""))}


def test_reader_reads_but_cannot_write(seaweedfs: SeaweedFS, bucket: str) -> None:
    put(seaweedfs.filesystem(), f"{bucket}/x.txt", b"x")
    reader = seaweedfs.filesystem(seaweedfs.reader)
    assert get(reader, f"{bucket}/x.txt") == b"x"
    refused(lambda: put(reader, f"{bucket}/y.txt", b"y"))
    refused(lambda: reader.delete_file(f"{bucket}/x.txt"))


def test_bucket_user_is_limited_to_its_bucket(seaweedfs: SeaweedFS, bucket: str) -> None:
    limited = seaweedfs.limited_bucket
    if limited not in {i.path for i in seaweedfs.filesystem().get_file_info(pafs.FileSelector(""))}:
        seaweedfs.create_bucket(limited)
    put(seaweedfs.filesystem(), f"{bucket}/x.txt", b"x")
    user = seaweedfs.filesystem(seaweedfs.bucket_user)
    put(user, f"{limited}/mine.txt", b"mine")
    assert get(user, f"{limited}/mine.txt") == b"mine"
    refused(lambda: get(user, f"{bucket}/x.txt"))
    refused(lambda: put(user, f"{bucket}/y.txt", b"y"))


def test_a_wrong_secret_is_refused(seaweedfs: SeaweedFS, bucket: str) -> None:
    put(seaweedfs.filesystem(), f"{bucket}/x.txt", b"x")
    wrong = seaweedfs.filesystem(S3Keys(seaweedfs.admin.access_key, "not-the-secret"))
    refused(lambda: get(wrong, f"{bucket}/x.txt"))


# --- STS: temporary keys narrowed by a session policy --------------------------------------


def test_sts_session_reads_only_its_prefix(seaweedfs: SeaweedFS, bucket: str) -> None:
    admin = seaweedfs.filesystem()
    put(admin, f"{bucket}/tables/t1/data.parquet", b"inside")
    put(admin, f"{bucket}/tables/t2/data.parquet", b"sibling")
    put(admin, f"{bucket}/top.txt", b"outside")

    keys = seaweedfs.assume_role(prefix_policy(bucket, "tables/t1"))
    assert keys.session_token and keys.access_key.startswith("ASIA")
    assert keys.expiration is not None
    left = (keys.expiration - datetime.now(UTC)).total_seconds()
    assert MIN_STS_DURATION_S - 60 < left <= MIN_STS_DURATION_S + 5

    fs = seaweedfs.filesystem(keys)
    assert get(fs, f"{bucket}/tables/t1/data.parquet") == b"inside"
    listed = fs.get_file_info(pafs.FileSelector(f"{bucket}/tables/t1"))
    assert [i.path for i in listed] == [f"{bucket}/tables/t1/data.parquet"]
    refused(lambda: get(fs, f"{bucket}/tables/t2/data.parquet"))
    refused(lambda: get(fs, f"{bucket}/top.txt"))
    refused(lambda: fs.get_file_info(pafs.FileSelector(f"{bucket}/tables")))
    refused(lambda: put(fs, f"{bucket}/tables/t1/new.parquet", b"new"))
    refused(lambda: fs.delete_file(f"{bucket}/tables/t1/data.parquet"))
    # Without the session token the temporary key is unknown.
    refused(lambda: get(seaweedfs.filesystem(S3Keys(keys.access_key, keys.secret_key)), "x/y"))


def test_sts_session_writes_only_its_prefix(seaweedfs: SeaweedFS, bucket: str) -> None:
    fs = seaweedfs.filesystem(seaweedfs.assume_role(prefix_policy(bucket, "t1", write=True)))
    put(fs, f"{bucket}/t1/small.bin", b"s")
    put(fs, f"{bucket}/t1/large.bin", b"L" * (12 * 1024 * 1024))  # a multipart upload
    assert get(seaweedfs.filesystem(), f"{bucket}/t1/large.bin") == b"L" * (12 * 1024 * 1024)
    refused(lambda: put(fs, f"{bucket}/t2/small.bin", b"s"))


def test_sts_refuses_short_durations_and_readers(seaweedfs: SeaweedFS) -> None:
    with pytest.raises(STSError) as short:
        seaweedfs.assume_role(duration_s=MIN_STS_DURATION_S - 1)
    assert short.value.code == "InvalidParameterValue"
    with pytest.raises(STSError) as reader:
        seaweedfs.assume_role(keys=seaweedfs.reader)
    assert reader.value.code == "AccessDenied"


# --- the Iceberg REST catalog ------------------------------------------------------------


def catalog(seaweedfs: SeaweedFS, **more: str) -> RestCatalog:
    loaded = load_catalog("seaweedfs", **seaweedfs.iceberg_properties(WAREHOUSE), **more)
    assert isinstance(loaded, RestCatalog)
    return loaded


def test_pyiceberg_on_the_iceberg_catalog(seaweedfs: SeaweedFS) -> None:
    cat = catalog(seaweedfs)
    namespace = f"ns_{uuid.uuid4().hex[:8]}"
    cat.create_namespace(namespace)
    table = cat.create_table(f"{namespace}.people", SCHEMA)
    rows = [{"id": 1, "name": "a"}, {"id": 2, "name": None}]
    table.append(pa.Table.from_pylist(rows, schema=table.schema().as_arrow()))
    loaded = cat.load_table(f"{namespace}.people")
    assert sorted(loaded.scan().to_arrow().to_pylist(), key=lambda r: r["id"]) == rows
    assert loaded.location() == f"s3://{WAREHOUSE}/{namespace}/people"
    assert cat.list_tables(namespace) == [(namespace, "people")]


def test_iceberg_catalog_vends_table_scoped_credentials(seaweedfs: SeaweedFS) -> None:
    cat = catalog(seaweedfs)
    namespace = f"ns_{uuid.uuid4().hex[:8]}"
    cat.create_namespace(namespace)
    t1 = cat.create_table(f"{namespace}.t1", SCHEMA)
    t2 = cat.create_table(f"{namespace}.t2", SCHEMA)

    keys = seaweedfs.admin
    token = httpx.post(
        f"{seaweedfs.iceberg_url}/v1/oauth/tokens",
        data={
            "grant_type": "client_credentials",
            "client_id": keys.access_key,
            "client_secret": keys.secret_key,
        },
        timeout=30,
    ).json()["access_token"]
    answer = httpx.get(
        f"{seaweedfs.iceberg_url}/v1/{WAREHOUSE}/namespaces/{namespace}/tables/t1",
        headers={
            "Authorization": f"Bearer {token}",
            "X-Iceberg-Access-Delegation": "vended-credentials",
        },
        timeout=30,
    )
    assert answer.status_code == 200, answer.text
    config = answer.json()["config"]
    vended = S3Keys(
        config["s3.access-key-id"], config["s3.secret-access-key"], config["s3.session-token"]
    )
    assert config["s3.endpoint"] == seaweedfs.endpoint_url
    fs = seaweedfs.filesystem(vended)
    assert get(fs, t1.metadata_location.removeprefix("s3://"))
    refused(lambda: get(fs, t2.metadata_location.removeprefix("s3://")))
