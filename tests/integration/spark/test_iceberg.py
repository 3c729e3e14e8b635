"""The Spark source and PyIceberg on one table: each reads what the other committed.

PyIceberg writes through the server's Iceberg REST catalog; the Spark source reads those files
as of a timestamp like its own, and its writes become snapshots PyIceberg scans. TIME and UUID
are in files as Iceberg has them, and the Spark source still reads the files it wrote before
(TIME as int64, UUID as text) beside them.
"""

from __future__ import annotations

import datetime as dt
import uuid
from collections.abc import Iterator
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from pyiceberg.expressions import EqualTo
from pyiceberg.schema import Schema
from pyiceberg.types import LongType, NestedField, TimeType, UUIDType
from pyspark.errors import PySparkException
from pyspark.sql import DataFrame, SparkSession

from api.client import CatalogClient
from catalog.data.files import DataFile
from catalog.data.warehouse import table_folder
from spark.evolution import conform
from spark.statistics import file_stats
from spark.types import arrow_schema
from tests.integration.api.servers import RunningServer, ServerFactory
from tests.integration.iceberg.conftest import rest_catalog
from tests.integration.iceberg.schemas import EVENTS
from tests.integration.iceberg.test_appends import ids, rows
from tests.integration.iceberg.test_locations import placed_events

pytestmark = pytest.mark.timeout(300)


@pytest.fixture
def server(tmp_path: Path, warehouse: Path) -> Iterator[RunningServer]:
    """A server whose warehouse is ``warehouse``, the folder the Spark source is given."""
    factory = ServerFactory()
    try:
        yield factory.start(f"sqlite:///{tmp_path}/catalog.db", warehouse=str(warehouse))
    finally:
        factory.stop_all()


def _read(spark: SparkSession, options: dict[str, str], **more: str) -> DataFrame:
    return spark.read.format("catalog").options(**options, **more).load()


def _ids(frame: DataFrame) -> list[int]:
    return sorted(row["ID"] for row in frame.select("ID").collect())


def test_spark_reads_what_pyiceberg_committed_as_of_each_commit(
    spark: SparkSession, server: RunningServer, warehouse: Path
) -> None:
    iceberg = rest_catalog(server)
    table = iceberg.create_table("PUBLIC.EVENTS", EVENTS)
    table.append(rows(table, range(1, 4)))
    table.append(rows(table, range(4, 6)))
    table.delete(EqualTo(term="ID", value=2))
    options = {"catalog_url": server.url, "warehouse": str(warehouse), "table": "PUBLIC.EVENTS"}
    with CatalogClient(server.url) as client:
        table_id = client.table("PUBLIC", "EVENTS").id
        first, second, third = client.data_commits(table_id, history=True).commits
    assert third.removed
    assert _ids(_read(spark, options)) == [1, 3, 4, 5]
    assert _ids(_read(spark, options, as_of=str(first.commit_ts))) == [1, 2, 3]
    assert _ids(_read(spark, options, as_of=str(second.commit_ts))) == [1, 2, 3, 4, 5]
    values = _read(spark, options).where("ID = 4").select("COUNT", "RATIO").collect()
    assert [(r["COUNT"], r["RATIO"]) for r in values] == [(40, 2.0)]
    # The bounds from the manifests prune: a read of ids above 3 does not open the file the
    # delete rewrote (ids 1 and 3), so garbage in its place does not fail it.
    [rewritten] = third.files
    (Path(table_folder(str(warehouse), table_id)) / rewritten.path).write_bytes(b"not parquet")
    assert _ids(_read(spark, options).where("ID > 3")) == [4, 5]


def test_pyiceberg_scans_what_spark_wrote_and_keys_hold_across_both(
    spark: SparkSession, server: RunningServer, warehouse: Path
) -> None:
    iceberg = rest_catalog(server)
    iceberg.create_table("PUBLIC.EVENTS", EVENTS)
    options = {"catalog_url": server.url, "warehouse": str(warehouse), "table": "PUBLIC.EVENTS"}

    def write(ids: list[int], mode: str = "append") -> None:
        frame = spark.createDataFrame([(i, i * 10) for i in ids], "ID BIGINT, COUNT INT")
        frame.coalesce(1).write.format("catalog").options(**options).mode(mode).save()

    write([1, 2])
    table = iceberg.load_table("PUBLIC.EVENTS")
    assert ids(table) == [1, 2]
    table.append(rows(table, range(3, 5)))
    assert _ids(_read(spark, options)) == [1, 2, 3, 4]
    with pytest.raises(PySparkException, match="PRIMARY_KEY_VIOLATION"):
        write([4, 5])  # PyIceberg wrote key 4
    write([5])
    assert ids(iceberg.load_table("PUBLIC.EVENTS")) == [1, 2, 3, 4, 5]
    write([7], mode="overwrite")
    scanned = iceberg.load_table("PUBLIC.EVENTS").scan().to_arrow()
    assert scanned.select(["ID", "COUNT"]) == pa.table(
        {"ID": pa.array([7], pa.int64()), "COUNT": pa.array([70], pa.int32())}
    ).cast(scanned.select(["ID", "COUNT"]).schema)


def test_the_spark_source_reads_and_writes_a_table_where_it_lives_and_once_registered(
    spark: SparkSession, server: RunningServer, warehouse: Path
) -> None:
    iceberg = rest_catalog(server)
    folder = warehouse / "lake" / "events"
    placed_events(iceberg, str(folder), range(1, 4)).delete(EqualTo(term="ID", value=2))
    options = {"catalog_url": server.url, "warehouse": str(warehouse), "table": "PUBLIC.EVENTS"}
    assert _ids(_read(spark, options)) == [1, 3]
    frame = spark.createDataFrame([(4, 40)], "ID BIGINT, COUNT INT")
    frame.coalesce(1).write.format("catalog").options(**options).mode("append").save()
    assert any(folder.glob("p*/*.parquet"))
    loaded = iceberg.load_table("PUBLIC.EVENTS")
    assert ids(loaded) == [1, 3, 4]
    assert loaded.metadata_location is not None
    iceberg.drop_table("PUBLIC.EVENTS")
    iceberg.create_namespace("COPY")
    registered = iceberg.register_table(("COPY", "EVENTS"), loaded.metadata_location)
    assert ids(registered) == [1, 3, 4]
    assert _ids(_read(spark, {**options, "table": "COPY.EVENTS"})) == [1, 3, 4]


CLOCKS = Schema(
    NestedField(1, "ID", LongType(), required=True),
    NestedField(2, "T", TimeType(), required=False),
    NestedField(3, "U", UUIDType(), required=False),
    identifier_field_ids=[1],
)
"""A table with a TIME(6) and a UUID column."""

CLOCK_ROWS = "ID long, T long, U string"
"""CLOCKS as Spark has it: TIME as microseconds since midnight, UUID as canonical text."""

Clock = tuple[int, int | None, str | None]


def _micros(at: dt.time) -> int:
    return ((at.hour * 60 + at.minute) * 60 + at.second) * 1_000_000 + at.microsecond


def _clocks(frame: DataFrame) -> list[Clock]:
    return sorted((r["ID"], r["T"], r["U"]) for r in frame.collect())


def _spark_write(spark: SparkSession, options: dict[str, str], rows: list[Clock]) -> None:
    frame = spark.createDataFrame(rows, CLOCK_ROWS).coalesce(1)
    frame.write.format("catalog").options(**options).mode("append").save()


def _pyiceberg_append(server: RunningServer, rows: list[Clock]) -> None:
    table = rest_catalog(server).load_table("PUBLIC.CLOCKS")
    given = [
        {
            "ID": i,
            "T": None if t is None else (dt.datetime.min + dt.timedelta(microseconds=t)).time(),
            "U": None if u is None else uuid.UUID(u),
        }
        for i, t, u in rows
    ]
    table.append(pa.Table.from_pylist(given, schema=table.schema().as_arrow()))


def _old_spark_write(client: CatalogClient, warehouse: Path, rows: list[Clock]) -> Path:
    """Commit rows of CLOCKS in one file as the Spark source wrote them before Iceberg's TIME
    and UUID: the batches' int64 and text, with their statistics; return the file."""
    table = client.table("PUBLIC", "CLOCKS")
    batch = pa.RecordBatch.from_pylist(
        [{"ID": i, "T": t, "U": u} for i, t, u in rows], schema=arrow_schema(table.columns)
    )
    data = conform(batch, table.columns, {c.id: c.name for c in table.columns}, table.primary_key)
    relative = f"p0/before-{uuid.uuid4().hex[:12]}.parquet"
    path = Path(table_folder(str(warehouse), table.id)) / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(data, path, compression="zstd")
    stats = file_stats(data, table.columns)
    written = DataFile(
        path=relative, partition=0, rows=len(rows), size=path.stat().st_size, stats=stats
    )
    client.commit_data(
        table.id,
        [written],
        schema_version=table.schema_version,
        mode="append",
        request_id=f"spark-write-{uuid.uuid4().hex}",
    )
    return path


def _files_by_commit(client: CatalogClient, warehouse: Path) -> list[list[Path]]:
    """Return the visible files of CLOCKS, per data commit in commit order."""
    table_id = client.table("PUBLIC", "CLOCKS").id
    commits = client.data_commits(table_id).commits
    folder = Path(table_folder(str(warehouse), table_id))
    return [[folder / f.path for f in c.files] for c in commits]


def test_pyiceberg_reads_the_time_and_uuid_spark_wrote_and_spark_reads_both_writers(
    spark: SparkSession, server: RunningServer, warehouse: Path
) -> None:
    iceberg = rest_catalog(server)
    iceberg.create_table("PUBLIC.CLOCKS", CLOCKS)
    options = {"catalog_url": server.url, "warehouse": str(warehouse), "table": "PUBLIC.CLOCKS"}
    first, second = uuid.UUID(int=1 << 120 | 7), uuid.uuid4()
    late = dt.time(23, 59, 59, 999999)
    # Text in any form Python reads as a UUID is written in canonical form.
    by_spark = [(1, _micros(late), str(first)), (2, None, None), (3, 0, second.hex.upper())]
    _spark_write(spark, options, by_spark)
    with CatalogClient(server.url) as client:
        [paths] = _files_by_commit(client, warehouse)
        ids_of = {c.name: str(c.id).encode() for c in client.table("PUBLIC", "CLOCKS").columns}
    for path in paths:  # one per table partition that got rows
        schema = pq.read_schema(path)
        assert schema.field("T").type == pa.time64("us") and schema.field("U").type == pa.uuid()
        assert all(schema.field(n).metadata[b"PARQUET:field_id"] == ids_of[n] for n in "TU")
        columns = pq.read_metadata(path).schema
        assert [str(columns.column(i).logical_type.type) for i in (1, 2)] == ["TIME", "UUID"]

    scanned = iceberg.load_table("PUBLIC.CLOCKS").scan().to_arrow().sort_by("ID").to_pylist()
    assert scanned == [
        {"ID": 1, "T": late, "U": first},
        {"ID": 2, "T": None, "U": None},
        {"ID": 3, "T": dt.time(0), "U": second},
    ]

    by_pyiceberg = [(4, _micros(dt.time(6, 30)), str(uuid.uuid4())), (5, None, None)]
    _pyiceberg_append(server, by_pyiceberg)
    canonical = [(1, _micros(late), str(first)), (2, None, None), (3, 0, str(second))]
    assert _clocks(_read(spark, options)) == [*canonical, *by_pyiceberg]
    assert len(iceberg.load_table("PUBLIC.CLOCKS").scan().to_arrow()) == 5

    with pytest.raises(PySparkException, match="column U is a UUID, and 'nope' is not one"):
        _spark_write(spark, options, [(6, 0, "nope")])
    with pytest.raises(PySparkException, match=r"column T is a TIME: .* outside the day"):
        _spark_write(spark, options, [(7, 86_400_000_000, None)])
    assert _clocks(_read(spark, options)) == [*canonical, *by_pyiceberg]


def _at(hour: int, minute: int = 0) -> int:
    return _micros(dt.time(hour, minute))


def _uuid(first_digit: str, n: int) -> str:
    return str(uuid.UUID(first_digit + f"{n:031x}"))


BEFORE = [(1, _at(1), _uuid("1", 1)), (2, _at(1, 30), _uuid("1", 2)), (3, None, None)]
"""Rows of the file written as before: times in hour 1, UUIDs from 1..."""
SPARK_NOW = [(10, _at(5), _uuid("5", 1)), (11, _at(5, 30), _uuid("5", 2)), (12, None, None)]
"""Rows the Spark source writes now: hour 5, UUIDs from 5..."""
PYICEBERG = [(20, _at(9), _uuid("a", 1)), (21, _at(9, 30), _uuid("a", 2)), (22, None, None)]
"""Rows PyIceberg writes: hour 9, UUIDs from a..."""

CLOCK_CONDITIONS = [
    f"T = {_at(5)}",
    f"T > {_at(1)}",
    f"T <= {_at(5, 30)}",
    f"T BETWEEN {_at(1, 30)} AND {_at(9)}",
    f"T IN ({_at(1)}, {_at(9, 30)})",
    f"NOT (T = {_at(9)})",
    "T IS NULL",
    "T > -5",  # a value outside the day compares as a number
    "T IN (-1, 90000000000)",
    f"T <=> {_at(5, 30)}",
    f"U = '{_uuid('5', 2)}'",
    f"U = '{_uuid('1', 1)}'",
    f"U = '{_uuid('a', 1).upper()}'",
    "U < '5'",
    f"U >= '{_uuid('5', 2)}'",
    f"U IN ('{_uuid('1', 2)}', '{_uuid('a', 2)}')",
    f"NOT (U = '{_uuid('a', 1)}')",
    "U LIKE '5%'",
    "U LIKE '%2'",
    "U LIKE '%-0000-%'",
    "U IS NOT NULL",
    f"T > {_at(4)} AND U < 'b'",
]


def test_filters_on_time_and_uuid_keep_the_rows_spark_keeps_in_both_encodings(
    spark: SparkSession, server: RunningServer, warehouse: Path
) -> None:
    rest_catalog(server).create_table("PUBLIC.CLOCKS", CLOCKS)
    options = {"catalog_url": server.url, "warehouse": str(warehouse), "table": "PUBLIC.CLOCKS"}
    with CatalogClient(server.url) as client:
        _old_spark_write(client, warehouse, BEFORE)
        _spark_write(spark, options, SPARK_NOW)
        _pyiceberg_append(server, PYICEBERG)
        commits = _files_by_commit(client, warehouse)
    encodings = [
        {tuple(pq.read_schema(f).field(n).type for n in "TU") for f in fs} for fs in commits
    ]
    assert encodings == [{(pa.int64(), pa.string())}, *[{(pa.time64("us"), pa.uuid())}] * 2]
    whole = _read(spark, options)
    assert _clocks(whole) == [*BEFORE, *SPARK_NOW, *PYICEBERG]
    plain = spark.createDataFrame(whole.collect(), whole.schema)  # filtered by Spark only
    for condition in CLOCK_CONDITIONS:
        assert _ids(_read(spark, options).where(condition)) == _ids(plain.where(condition)), (
            condition
        )

    # Each file's statistics rule it out of a read that wants only another file's rows: with
    # the other two files garbage, the read still answers.
    for kept, held in zip(commits, (BEFORE, SPARK_NOW, PYICEBERG), strict=True):
        others = {f: f.read_bytes() for files in commits if files != kept for f in files}
        for other in others:
            other.write_bytes(b"not parquet")
        try:
            (first, start, digits), (second, end, _) = held[:2]
            assert digits is not None
            read = _read(spark, options)
            assert _ids(read.where(f"T BETWEEN {start} AND {end}")) == [first, second]
            assert _ids(read.where(f"U = '{held[1][2]}'")) == [second]
            assert _ids(read.where(f"U LIKE '{digits[0]}%'")) == [first, second]
        finally:
            for other, content in others.items():
                other.write_bytes(content)
