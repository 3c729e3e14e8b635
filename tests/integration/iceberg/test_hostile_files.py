"""Files a writer names are hostile input: each attack a writer token can make is refused fast.

Against a real server on a local warehouse, as an attacker with a writer token would try it:
a huge DECIMAL bound, FIFOs as manifest lists, symbolic links to another table's files or
folder, a link to ``/dev/zero``, a deflate bomb, a manifest claiming a million entries.
"""

from __future__ import annotations

import asyncio
import os
import threading
import time
import zlib
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
import requests
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pyiceberg.avro.file import AvroFile
from pyiceberg.catalog.rest import RestCatalog
from pyiceberg.exceptions import BadRequestError
from pyiceberg.expressions import AlwaysTrue
from pyiceberg.io.pyarrow import PyArrowFileIO
from pyiceberg.manifest import (
    DataFile,
    DataFileContent,
    FileFormat,
    ManifestFile,
)
from pyiceberg.schema import Schema
from pyiceberg.table import Table
from pyiceberg.typedef import Record
from pyiceberg.types import (
    BinaryType,
    BooleanType,
    DateType,
    DecimalType,
    DoubleType,
    IntegerType,
    LongType,
    NestedField,
    StringType,
    TimestampType,
    UUIDType,
)

from api.client import CatalogClient
from api.iceberg.avro_reads import (
    MAX_DECOMPRESSED_BYTES,
    MAX_ENTRIES_PER_COMMIT,
    MAX_ENTRIES_PER_MANIFEST,
)
from spark.warehouse import remove_orphans
from tests.integration.api.servers import RunningServer
from tests.integration.iceberg.schemas import EVENTS
from tests.integration.iceberg.test_appends import fast_append, ids, parquet_file, rows
from tests.integration.iceberg.test_expiry import compacted_stats
from tests.manifest_lists import write_list

pytestmark = pytest.mark.timeout(120)


def _folder(table: Table) -> Path:
    return Path(table.location().removeprefix("file://"))


def _commit(
    server: RunningServer, table: str, manifest_list: Path | str, parent: int | None = None
) -> requests.Response:
    """Send a commit adding one snapshot, made on ``parent``, whose manifest list is given."""
    number = 1 if parent is None else 2
    snapshot: dict[str, Any] = {"snapshot-id": 2**40 + number, "sequence-number": number}
    snapshot |= {"timestamp-ms": 1, "parent-snapshot-id": parent}
    snapshot |= {"manifest-list": str(manifest_list), "summary": {"operation": "append"}}
    ref = {"action": "set-snapshot-ref", "ref-name": "main", "type": "branch"}
    body: dict[str, Any] = {
        "requirements": [{"type": "assert-ref-snapshot-id", "ref": "main", "snapshot-id": parent}],
        "updates": [
            {"action": "add-snapshot", "snapshot": snapshot},
            {**ref, "snapshot-id": snapshot["snapshot-id"]},
        ],
    }
    url = f"{server.url}/iceberg/v1/namespaces/PUBLIC/tables/{table}"
    return requests.post(url, json=body, timeout=30)


def _healthz_while(server: RunningServer, work: threading.Thread) -> float:
    """Return the slowest ``/healthz`` answer seen while ``work`` runs."""
    slowest = 0.0
    while work.is_alive():
        start = time.monotonic()
        assert requests.get(f"{server.url}/healthz", timeout=30).status_code == 200
        slowest = max(slowest, time.monotonic() - start)
    return slowest


def test_a_60_kb_decimal_bound_is_refused_at_once_naming_the_field(
    iceberg: RestCatalog, client: CatalogClient, iceberg_server: RunningServer
) -> None:
    table = iceberg.create_table("PUBLIC.EVENTS", EVENTS)
    (_folder(table) / "data").mkdir(parents=True, exist_ok=True)
    hostile = _data_file(
        table,
        _folder(table) / "data" / "bound.parquet",
        null_value_counts={1: 0, 2: 0, 3: 0, 4: 0},
        nan_value_counts={3: 0},
        lower_bounds={4: b"\x7f" + b"\xff" * 60_000},
    )
    refused: list[BaseException] = []

    def commit() -> None:
        try:
            fast_append(table, hostile)
        except BadRequestError as e:
            refused.append(e)

    work = threading.Thread(target=commit)
    start = time.monotonic()
    work.start()
    slowest = _healthz_while(iceberg_server, work)
    work.join()
    took = time.monotonic() - start
    assert len(refused) == 1
    assert "lower bound of field 4 (PRICE)" in str(refused[0])
    assert "1 to 16 bytes, got 60001" in str(refused[0])
    assert took < 1.0 and slowest < 1.0, (took, slowest)  # it took 4 s (healthz 3.7 s) before
    assert client.data_commits(client.table("PUBLIC", "EVENTS").id).commits == []


def test_fifos_as_manifest_lists_are_refused_while_another_table_commits(
    iceberg: RestCatalog, client: CatalogClient, iceberg_server: RunningServer
) -> None:
    hostile = iceberg.create_table("PUBLIC.HOSTILE", EVENTS)
    other = iceberg.create_table("PUBLIC.OTHER", EVENTS)
    metadata = _folder(hostile) / "metadata"
    metadata.mkdir(parents=True, exist_ok=True)
    fifos = [metadata / f"snap-{n}.avro" for n in range(12)]
    for fifo in fifos:
        os.mkfifo(fifo)

    def attack(fifo: Path) -> tuple[int, str, float]:
        start = time.monotonic()
        answer = _commit(iceberg_server, "HOSTILE", fifo)
        return answer.status_code, answer.json()["error"]["message"], time.monotonic() - start

    with ThreadPoolExecutor(12) as pool:
        attacks = [pool.submit(attack, fifo) for fifo in fifos]
        other.append(rows(other, range(3)))  # meanwhile, another table's commit lands
        answers = [a.result() for a in attacks]
    for fifo, (status, message, took) in zip(fifos, answers, strict=True):
        assert status == 400
        assert message == f"manifest list {fifo} is not a regular file"
        assert took < 1.0, took  # each hung until its client gave up before
    assert [c.seq for c in client.data_commits(client.table("PUBLIC", "OTHER").id).commits] == [1]
    assert client.data_commits(client.table("PUBLIC", "HOSTILE").id).commits == []


def test_a_symlinked_data_file_or_folder_is_refused(
    iceberg: RestCatalog, client: CatalogClient
) -> None:
    victim = iceberg.create_table("PUBLIC.VICTIM", EVENTS)
    victim.append(rows(victim, range(5)))
    victim_file = next((_folder(victim) / "data").glob("*.parquet"))
    attacker = iceberg.create_table("PUBLIC.ATTACKER", EVENTS)
    (_folder(attacker) / "data").mkdir(parents=True, exist_ok=True)
    linked_file = _folder(attacker) / "data" / "stolen.parquet"
    linked_file.symlink_to(victim_file)
    real = _folder(attacker) / "data" / "real.parquet"
    data_file = _data_file(attacker, real, file_path=linked_file)
    with pytest.raises(BadRequestError, match=f"data file .*{linked_file} is reached through a"):
        fast_append(attacker, data_file)
    # A folder of the attacker's table that is a link to the victim's data folder.
    (_folder(attacker) / "linked").symlink_to(victim_file.parent, target_is_directory=True)
    through = _folder(attacker) / "linked" / victim_file.name
    with pytest.raises(BadRequestError, match="symbolic link"):
        fast_append(attacker, _data_file(attacker, real, file_path=through))
    assert client.data_commits(client.table("PUBLIC", "ATTACKER").id).commits == []
    assert victim_file.exists()


def test_a_link_to_dev_zero_a_huge_file_and_a_deflate_bomb_are_refused_within_their_caps(
    iceberg: RestCatalog, iceberg_server: RunningServer
) -> None:
    table = iceberg.create_table("PUBLIC.EVENTS", EVENTS)
    metadata = _folder(table) / "metadata"
    metadata.mkdir(parents=True, exist_ok=True)
    (metadata / "zero.avro").symlink_to("/dev/zero")
    with (metadata / "huge.avro").open("wb") as huge:
        huge.truncate(17 << 20)  # sparse: past the manifest list's 16 MiB
    bomb = metadata / "bomb.avro"
    _write_bomb(bomb, MAX_DECOMPRESSED_BYTES + (1 << 20))
    expected = {
        "zero.avro": "is reached through a symbolic link",
        "huge.avro": f"has {17 << 20} bytes, more than the {16 << 20}",
        "bomb.avro": f"decompresses to more than {MAX_DECOMPRESSED_BYTES} bytes",
    }
    for name, message in expected.items():
        start = time.monotonic()
        answer = _commit(iceberg_server, "EVENTS", metadata / name)
        assert time.monotonic() - start < 10.0
        assert answer.status_code == 400, answer.text
        assert message in answer.json()["error"]["message"]


def _header(path: Path) -> bytes:
    """Return the Avro header of the file at ``path`` (up to its first block)."""
    with AvroFile[Any](PyArrowFileIO().new_input(str(path))) as reader:
        return path.read_bytes()[: reader.decoder.tell()]


def _empty_list(path: Path) -> bytes:
    """Write a manifest list of no manifests; return its Avro header."""
    return _header(write_list(path, []))


def _varint(n: int) -> bytes:
    """Return Avro's zig-zag varint of ``n``."""
    z, out = (n << 1) ^ (n >> 63), bytearray()
    while z > 0x7F:
        out.append((z & 0x7F) | 0x80)
        z >>= 7
    out.append(z)
    return bytes(out)


def _write_bomb(path: Path, size: int) -> None:
    """Write a manifest list whose one block inflates to ``size`` bytes of zeros."""
    header = _empty_list(path)
    packer = zlib.compressobj(9, zlib.DEFLATED, -15)
    chunk = bytes(1 << 20)
    compressed = b"".join(packer.compress(chunk) for _ in range(size >> 20)) + packer.flush()
    sync = header[-16:]
    path.write_bytes(header + _varint(1) + _varint(len(compressed)) + compressed + sync)


def test_a_manifest_claiming_or_holding_a_million_entries_is_refused(
    iceberg: RestCatalog, iceberg_server: RunningServer
) -> None:
    table = iceberg.create_table("PUBLIC.EVENTS", EVENTS)
    (_folder(table) / "data").mkdir(parents=True, exist_ok=True)
    fast_append(table, parquet_file(table, _folder(table) / "data" / "a.parquet"))
    snapshot = iceberg.load_table("PUBLIC.EVENTS").current_snapshot()
    assert snapshot is not None
    io = PyArrowFileIO()
    manifest = next(iter(snapshot.manifests(io)))
    metadata = _folder(table) / "metadata"
    # The list says so: refused before the manifest is opened.
    copy = metadata / "copy.avro"  # a manifest the parent's list does not name is read
    copy.write_bytes(Path(manifest.manifest_path.removeprefix("file:")).read_bytes())
    refusals = {
        300_000: f"holds 300000 entries, more than the {MAX_ENTRIES_PER_MANIFEST} this",
        1_000_000: f"the commit names more than {MAX_ENTRIES_PER_COMMIT} manifest entries",
    }
    for count, message in refusals.items():
        claiming = _claiming(manifest, count, path=f"file:{copy}")
        claimed = _list_of(metadata / f"claims-{count}.avro", claiming)
        answer = _commit(iceberg_server, "EVENTS", claimed, snapshot.snapshot_id)
        assert answer.status_code == 400
        assert message in answer.json()["error"]["message"]
    # The list says one, the manifest's block says a million: refused at the block.
    lying = metadata / "lying.avro"
    lying.write_bytes(_with_block_count(Path(manifest.manifest_path.removeprefix("file:")), 10**6))
    relisted = _list_of(metadata / "lies.avro", _claiming(manifest, 1, path=f"file:{lying}"))
    answer = _commit(iceberg_server, "EVENTS", relisted, snapshot.snapshot_id)
    assert answer.status_code == 400
    assert f"holds more than {MAX_ENTRIES_PER_MANIFEST} entries" in answer.text


def _claiming(manifest: ManifestFile, count: int, path: str | None = None) -> ManifestFile:
    """Return ``manifest`` as a list names it, claiming ``count`` added files (and at ``path``)."""
    claimed = ManifestFile(*manifest._data)
    claimed[7], claimed[8], claimed[9] = count, 0, 0  # added, existing, deleted files
    if path is not None:
        claimed[0] = path
    return claimed


def _list_of(path: Path, manifest: ManifestFile) -> Path:
    return write_list(path, [manifest], snapshot_id=2, parent_snapshot_id=1)


def _with_block_count(manifest: Path, count: int) -> bytes:
    """Return ``manifest``'s bytes with its first block claiming ``count`` records."""
    data = manifest.read_bytes()
    with AvroFile[Any](PyArrowFileIO().new_input(str(manifest))) as reader:
        start = reader.decoder.tell()
        reader.decoder.read_int()
        end = reader.decoder.tell()
    return data[:start] + _varint(count) + data[end:]


def _data_file(table: Table, written: Path, **metrics: Any) -> DataFile:
    """Write rows of ``table`` to ``written``; return it as a data file with ``metrics``."""
    named = parquet_file(table, written)
    path = str(metrics.pop("file_path", written))
    return DataFile.from_args(
        content=DataFileContent.DATA,
        file_path=path,
        file_format=FileFormat.PARQUET,
        partition=Record(),
        record_count=named.record_count,
        file_size_in_bytes=named.file_size_in_bytes,
        **metrics,
    )


def test_expiry_and_orphan_removal_never_delete_through_a_link(
    iceberg: RestCatalog, client: CatalogClient, iceberg_server: RunningServer
) -> None:
    victim = iceberg.create_table("PUBLIC.VICTIM", EVENTS)
    victim.append(rows(victim, range(5)))
    victim_file = next((_folder(victim) / "data").glob("*.parquet"))
    attacker = iceberg.create_table("PUBLIC.EVENTS", EVENTS)
    data = _folder(attacker) / "data"
    data.mkdir(parents=True, exist_ok=True)
    fast_append(attacker, parquet_file(attacker, data / victim_file.name))  # a real file, then
    data.rename(_folder(attacker) / "moved")  # its folder becomes a link to the victim's
    data.symlink_to(victim_file.parent, target_is_directory=True)
    iceberg.load_table("PUBLIC.EVENTS").delete(AlwaysTrue())  # drops the file: expiry's to delete
    stats = asyncio.run(compacted_stats(iceberg_server))
    assert stats["files_deleted"] == 0
    assert victim_file.exists()
    assert sorted(ids(iceberg.load_table("PUBLIC.VICTIM"))) == list(range(5))
    # Orphan removal: a linked partition folder is not entered; a linked orphan goes itself.
    folder = _folder(attacker)
    (folder / "p0").symlink_to(victim_file.parent, target_is_directory=True)
    (folder / "p1").mkdir()
    orphan = folder / "p1" / "orphan.parquet"
    orphan.write_bytes(b"x")
    linked = folder / "p1" / "linked.parquet"
    linked.symlink_to(victim_file)
    table_id = client.table("PUBLIC", "EVENTS").id
    removed = remove_orphans(
        client, str(folder.parent), table_id, older_than_s=-60, location=str(folder)
    )
    assert sorted(removed) == [str(linked), str(orphan)]
    assert victim_file.exists() and not linked.is_symlink()


BOUNDED = Schema(
    NestedField(1, "ID", LongType(), required=True),
    NestedField(2, "N", IntegerType(), required=False),
    NestedField(3, "X", DoubleType(), required=False),
    NestedField(4, "D", DecimalType(38, 10), required=False),
    NestedField(5, "S", StringType(), required=False),
    NestedField(6, "DAY", DateType(), required=False),
    NestedField(7, "AT", TimestampType(), required=False),
    NestedField(8, "B", BooleanType(), required=False),
    NestedField(9, "U", UUIDType(), required=False),
    NestedField(10, "RAW", BinaryType(), required=False),
)


def test_any_bounds_a_writer_sends_are_recorded_or_refused_never_a_5xx(
    iceberg: RestCatalog,
) -> None:
    table = iceberg.create_table("PUBLIC.BOUNDED", BOUNDED)
    data = _folder(table) / "data"
    data.mkdir(parents=True, exist_ok=True)
    outcomes: list[str] = []

    @settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
    @given(
        field=st.integers(1, 10),
        low=st.binary(max_size=24) | st.binary(min_size=300, max_size=2000),
        high=st.binary(max_size=24),
    )
    def commit(field: int, low: bytes, high: bytes) -> None:
        written = data / f"{len(outcomes)}.parquet"
        written.write_bytes(b"PAR1")
        data_file = DataFile.from_args(
            content=DataFileContent.DATA,
            file_path=str(written),
            file_format=FileFormat.PARQUET,
            partition=Record(),
            record_count=1,
            file_size_in_bytes=4,
            null_value_counts=dict.fromkeys(range(1, 11), 0),
            nan_value_counts={3: 0},
            lower_bounds={field: low},
            upper_bounds={field: high},
        )
        try:
            fast_append(iceberg.load_table("PUBLIC.BOUNDED"), data_file)
            outcomes.append("recorded")
        except BadRequestError as e:
            assert f"bound of field {field} (" in str(e), str(e)
            outcomes.append("refused")

    commit()
    assert {"recorded", "refused"} <= set(outcomes)
