"""Tables on S3: the catalog's files there, keys scoped to one table, the store's faults.

Every test runs against a real S3 server (SeaweedFS, ``conftest.lake``) and a catalog server
whose warehouse is ``s3://lake/wh``; engines are PyIceberg holding no keys of their own.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any

import httpx
import pyarrow as pa
import pyarrow.fs as pafs
import pytest
from pyiceberg.catalog.rest import RestCatalog
from pyiceberg.exceptions import CommitFailedException
from pyiceberg.table import Table

from api.client import CatalogClient
from spark.warehouse import remove_orphans
from tests.integration.iceberg.test_expiry import compacted_stats
from tests.integration.s3.conftest import BUCKET, SESSION_S, WAREHOUSE, Lake
from tests.seaweedfs import S3Keys

SCHEMA = pa.schema([pa.field("ID", pa.int64(), nullable=False), pa.field("NAME", pa.string())])


def _rows(*ids: int) -> pa.Table:
    return pa.table({"ID": list(ids), "NAME": [f"n{i}" for i in ids]}, schema=SCHEMA)


def _table(catalog: RestCatalog, name: str) -> Table:
    namespace = name.split(".")[0]
    if (namespace,) not in catalog.list_namespaces():
        catalog.create_namespace(namespace)
    created: Table = catalog.create_table(name, schema=SCHEMA)
    return created


def _vended(table: Table) -> S3Keys:
    props = table.io.properties
    assert "s3.access-key-id" in props, "no keys were vended"
    return S3Keys(
        props["s3.access-key-id"], props["s3.secret-access-key"], props["s3.session-token"]
    )


def _keyed(lake: Lake, keys: S3Keys) -> pafs.S3FileSystem:
    return lake.s3.filesystem(keys)


def _key(location: str) -> str:
    return location.removeprefix("s3://")


def test_a_table_lives_on_s3_and_is_read_back_with_vended_keys(lake: Lake) -> None:
    catalog = lake.pyiceberg()
    table = _table(catalog, "ROUND.TRIP")
    table.append(_rows(1, 2))
    loaded = catalog.load_table("ROUND.TRIP")
    assert loaded.location().startswith(f"{WAREHOUSE}/table_")
    assert loaded.metadata_location.startswith(f"{WAREHOUSE}/metadata/table_")
    assert sorted(loaded.scan().to_arrow()["ID"].to_pylist()) == [1, 2]
    admin = lake.s3.filesystem()
    found = admin.get_file_info(_key(loaded.metadata_location))
    assert found.type == pafs.FileType.File, "the catalog wrote the metadata file to S3"
    assert loaded.io.properties["s3.endpoint"] == lake.s3.endpoint_url


def test_vended_keys_reach_only_their_table_and_a_reader_gets_read_only_ones(lake: Lake) -> None:
    writer = lake.pyiceberg("writer")
    mine = _table(writer, "SCOPE.MINE")
    mine.append(_rows(1))
    other = _table(writer, "SCOPE.OTHER")
    other.append(_rows(2))
    data_file = next(iter(mine.inspect.files()["file_path"].to_pylist()))
    other_file = next(iter(other.inspect.files()["file_path"].to_pylist()))

    reading = _keyed(lake, _vended(lake.pyiceberg("reader").load_table("SCOPE.MINE")))
    with reading.open_input_stream(_key(data_file)) as f:
        assert f.read(4) == b"PAR1"
    with pytest.raises(OSError, match=r"(?i)denied|forbidden"):
        reading.open_input_stream(_key(other_file)).read()
    planted = _key(mine.location()) + "/data/planted.parquet"
    with (
        pytest.raises(OSError, match=r"(?i)denied|forbidden"),
        reading.open_output_stream(planted) as out,
    ):
        out.write(b"not from a writer")

    writing = _keyed(lake, _vended(writer.load_table("SCOPE.MINE")))
    with writing.open_output_stream(_key(mine.location()) + "/data/mine.bin") as out:
        out.write(b"a writer's")
    theirs = _key(other.location()) + "/data/theirs.bin"
    with (
        pytest.raises(OSError, match=r"(?i)denied|forbidden"),
        writing.open_output_stream(theirs) as out,
    ):
        out.write(b"not its table")


def test_a_vended_key_past_its_lifetime_is_refused_by_the_store(lake: Lake) -> None:
    table = _table(lake.pyiceberg(), "LIFE.SPAN")
    table.append(_rows(1))
    path = _key(next(iter(table.inspect.files()["file_path"].to_pylist())))
    loaded = lake.pyiceberg("reader").load_table("LIFE.SPAN")
    keys = _vended(loaded)
    expires_ms = int(loaded.io.properties["s3.session-token-expires-at-ms"])
    assert expires_ms - time.time() * 1000 <= SESSION_S * 1000 + 1000
    with _keyed(lake, keys).open_input_stream(path) as f:
        assert f.read(4) == b"PAR1"
    time.sleep(max(0.0, expires_ms / 1000 - time.time()) + 1.5)
    with pytest.raises(OSError, match=r"(?i)expired|denied|forbidden|invalid"):
        _keyed(lake, keys).open_input_stream(path).read()
    fresh = _vended(lake.pyiceberg("reader").load_table("LIFE.SPAN"))
    assert fresh.access_key != keys.access_key, "an expired key is not handed out again"
    with _keyed(lake, fresh).open_input_stream(path) as f:
        assert f.read(4) == b"PAR1"


def test_credentials_route_answers_fresh_keys_and_refuses_a_caller_that_may_not_read(
    lake: Lake,
) -> None:
    table = _table(lake.pyiceberg(), "CREDS.T")
    url = f"{lake.uri}/v1/namespaces/CREDS/tables/T/credentials"
    answer = httpx.get(url, headers={"Authorization": f"Bearer {lake.token('reader')}"})
    assert answer.status_code == 200, answer.text
    (first, second) = answer.json()["storage-credentials"]
    metadata_folder = table.metadata_location.rsplit("/", 1)[0]
    assert {first["prefix"], second["prefix"]} == {table.location(), metadata_folder}
    assert all(c["config"]["s3.access-key-id"] for c in (first, second))
    refused = httpx.get(url)  # no token
    assert refused.status_code == 401
    assert "s3.access-key-id" not in refused.text


def _signed(lake: Lake, token: str, method: str, url: str) -> httpx.Response:
    return httpx.post(
        f"{lake.uri}/v1/aws/s3/sign",
        json={"region": lake.s3.region, "uri": url, "method": method, "headers": {}},
        headers={"Authorization": f"Bearer {token}"},
    )


def test_the_signer_signs_a_read_of_a_table_file_and_refuses_a_write_by_a_reader(
    lake: Lake,
) -> None:
    table = _table(lake.pyiceberg(), "SIGN.T")
    table.append(_rows(7))
    url = f"{lake.s3.endpoint_url}/{_key(table.metadata_location)}"
    signed = _signed(lake, lake.token("reader"), "GET", url)
    assert signed.status_code == 200, signed.text
    headers = {k: v[0] for k, v in signed.json()["headers"].items()}
    fetched = httpx.get(signed.json()["uri"], headers=headers)
    assert fetched.status_code == 200, fetched.text
    assert fetched.json()["location"] == table.location()

    written = _signed(lake, lake.token("reader"), "PUT", f"{url}.planted")
    assert written.status_code == 403, written.text
    assert written.json()["error"]["type"] == "ForbiddenException"
    assert "Authorization" not in written.text

    outside = _signed(lake, lake.token("admin"), "GET", f"{lake.s3.endpoint_url}/{BUCKET}/x")
    assert outside.status_code == 403, outside.text
    assert "not a file of a table" in outside.json()["error"]["message"]


def _down_for(lake: Lake, act: Callable[[], Any]) -> Any:
    """Run ``act`` with S3 stopped; start it again after."""
    lake.s3.stop()
    try:
        return act()
    finally:
        lake.s3.start()


def test_a_commit_while_s3_is_down_is_refused_definitely_and_sent_again_lands_once(
    lake: Lake, monkeypatch: pytest.MonkeyPatch
) -> None:
    catalog = lake.pyiceberg()
    catalog.create_namespace("FAULT")
    # PyIceberg sends a commit refused with CommitFailedException again by itself (with the
    # keys it loaded the table with, which live 6 s here); the refusal is let through here,
    # to be looked at, and the append made again on a fresh load.
    table = catalog.create_table(
        "FAULT.T", schema=SCHEMA, properties={"commit.retry.num-retries": "0"}
    )
    table.append(_rows(1))
    with CatalogClient([lake.server.url], token=lake.token("admin")) as client:
        before = client.versions().latest
        table_id = client.table("FAULT", "T").id
        commits_before = len(client.data_commits(table_id).commits)
    real = RestCatalog.commit_table

    def through_an_outage(self: RestCatalog, *args: Any) -> Any:
        return _down_for(lake, lambda: real(self, *args))

    monkeypatch.setattr(RestCatalog, "commit_table", through_an_outage)
    with pytest.raises(CommitFailedException) as refused:  # definite: nothing was written
        table.append(_rows(2))
    monkeypatch.undo()
    assert "nothing was written" in str(refused.value)
    with CatalogClient([lake.server.url], token=lake.token("admin")) as client:
        assert client.versions().latest == before, "a refused commit made no version"
        assert len(client.data_commits(table_id).commits) == commits_before
    catalog.load_table("FAULT.T").append(_rows(2))  # sent again, S3 back
    with CatalogClient([lake.server.url], token=lake.token("admin")) as client:
        assert len(client.data_commits(table_id).commits) == commits_before + 1
    rows = catalog.load_table("FAULT.T").scan().to_arrow()["ID"].to_pylist()
    assert sorted(rows) == [1, 2]


def test_keys_never_show_in_an_error(lake: Lake, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "a-wrong-secret-0123456789")
    from catalog.data.s3_store import _filesystem

    _filesystem.cache_clear()
    try:
        catalog = lake.pyiceberg()
        if ("KEYS",) not in catalog.list_namespaces():
            catalog.create_namespace("KEYS")
        with pytest.raises(Exception) as refused:
            catalog.create_table("KEYS.T", schema=SCHEMA)
        shown = str(refused.value)
        assert "S3" in shown or "store" in shown
        assert lake.env["AWS_ACCESS_KEY_ID"] not in shown
        assert "a-wrong-secret" not in shown
    finally:
        monkeypatch.undo()
        _filesystem.cache_clear()


def test_orphans_of_a_failed_write_are_removed_on_s3(lake: Lake) -> None:
    table = _table(lake.pyiceberg(), "ORPHANS.T")
    table.append(_rows(1))
    admin = lake.s3.filesystem()
    orphan = f"{_key(table.location())}/p0/failed-job.parquet"
    with admin.open_output_stream(orphan) as out:
        out.write(b"PAR1 half a file")
    with CatalogClient([lake.server.url], token=lake.token("admin")) as client:
        table_id = client.table("ORPHANS", "T").id
        kept = remove_orphans(client, WAREHOUSE, table_id, older_than_s=3600)
        removed = remove_orphans(client, WAREHOUSE, table_id, older_than_s=0)
    assert kept == []
    assert removed == [f"s3://{orphan}"]
    assert admin.get_file_info(orphan).type == pafs.FileType.NotFound
    assert sorted(table.scan().to_arrow()["ID"].to_pylist()) == [1]


def test_expiry_deletes_a_dropped_tables_folders_and_overwritten_files_on_s3(lake: Lake) -> None:
    catalog = lake.pyiceberg()
    kept = _table(catalog, "EXPIRY.KEPT")
    kept.append(_rows(1))
    kept.overwrite(_rows(2))  # the first file is dead once no read reaches it
    first_file = f"{_key(kept.location())}"
    dropped = _table(catalog, "EXPIRY.DROPPED")
    dropped.append(_rows(3))
    dropped_folder = _key(dropped.location())
    dropped_metadata = _key(dropped.metadata_location).rsplit("/", 1)[0]
    catalog.drop_table("EXPIRY.DROPPED")
    admin = lake.s3.filesystem()
    listed = admin.get_file_info(pafs.FileSelector(first_file, recursive=True))
    before = {i.path for i in listed if i.path.endswith(".parquet")}
    assert len(before) == 2
    stats = asyncio.run(compacted_stats(lake.server))
    assert stats["folders_deleted"] == 1
    for gone in (dropped_folder, dropped_metadata):
        found = admin.get_file_info(pafs.FileSelector(gone, recursive=True, allow_not_found=True))
        assert found == [], gone
    after = {
        i.path
        for i in admin.get_file_info(pafs.FileSelector(first_file, recursive=True))
        if i.path.endswith(".parquet")
    }
    assert len(after) == 1 and after < before
    assert catalog.load_table("EXPIRY.KEPT").scan().to_arrow()["ID"].to_pylist() == [2]
