r"""The ``catalog`` data source for PySpark (Spark 4's Python Data Source API).

Read a table as of a pinned timestamp, with the schema and exactly the data of that moment::

    register(spark)                         # also turns on Spark's filter pushdown for it
    df = (spark.read.format("catalog")
          .option("catalog_url", "http://127.0.0.1:8000")
          .option("as_of", ts)              # hybrid ts, "version=N" or RFC 3339; default now
          .load("PUBLIC.ORDERS"))           # as typed in SQL: "Sales"."orders" stays exact

Write a DataFrame into a table: ``mode("append")`` adds rows, ``mode("overwrite")`` replaces
every row from the write's timestamp on. The primary key holds: a write whose rows repeat a
key, or an append of a key the table holds at the write's timestamp, fails with
``PRIMARY_KEY_VIOLATION`` naming a few of the keys, and nothing of it becomes visible (see
``CatalogWriter.commit``). Spark hands a Python data source no other mode: it
refuses ``errorifexists`` (its default, so a write without ``.mode(...)``), ``error`` and
``ignore`` itself with ``UNSUPPORTED_DATA_SOURCE_SAVE_MODE``, naming Append and Overwrite::

    df.write.format("catalog").option("catalog_url", url).mode("append").save("PUBLIC.ORDERS")

With ``mode("append")``, ``.option("write", "upsert")`` replaces the rows of the keys it writes
(and adds the others), and ``.option("write", "delete")`` removes the rows of the keys it is
given: the files holding them are written again without them (``spark.rewrites``).

Each table's data lives in the folder it recorded when it was created (its ``location``, in
the cluster's warehouse), which the driver and every executor must see; a job names only the
catalog and the table. Options: ``catalog_url`` (comma-separated base URLs; default
``$CATALOG_URL`` or http://127.0.0.1:8000), ``table`` (instead of the path given to ``load``
or ``save``), ``as_of`` (reads), ``warehouse`` (only for a table that records no location:
default ``$CATALOG_WAREHOUSE`` or ./warehouse), ``token`` (a bearer token when the server
checks them; default ``$CATALOG_TOKEN``);
for reads, how files group into input partitions: ``max_partition_bytes`` (128 MiB),
``open_cost_bytes`` (4 MiB) and ``parallelism`` (the planning machine's CPU count), as Spark's
own file sources.

A table's data commits may also come from Iceberg writers (PyIceberg through the server's
Iceberg REST catalog, ``docs/iceberg.md``): their files are Parquet under the table's folder,
read by path and field id like the source's own, and a commit's removed files are left out of
the files it lists.

A read opens only the files that may hold wanted rows: Spark pushes the simple conditions of
a WHERE, and each written file's column statistics (recorded in its data commit) rule files
out; see ``spark.pruning``.

The driver resolves the table and, for a read, the files visible at the pinned timestamp
that are rows of the table then (``table_rows``: none written before a replace that made
columns required, whose rows are gone); the executors only read or write Parquet files. A
write's files become visible atomically when the driver commits them (``POST
/v1/data/commits``), after it checked their keys (``spark.keys``); a failed or refused job's
files are deleted, and a killed job's, or those of a commit whose outcome is unknown (the
server did not answer), are orphans for ``spark.warehouse.remove_orphans``.
"""

from __future__ import annotations

import os
import time
import uuid
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any, ClassVar, Literal, cast

import pyarrow as pa
from pyspark.sql.datasource import (
    DataSource,
    DataSourceArrowWriter,
    DataSourceReader,
    Filter,
    InputPartition,
    WriterCommitMessage,
)
from pyspark.sql.types import StructType

from api.client import CatalogApiError, CatalogClient, ConflictError
from catalog.column_types import NESTED_TYPES
from catalog.data.files import DataFile, rows_and_deletes, table_rows
from catalog.data.iceberg_table import PartitionSpec
from catalog.descriptors import ColumnDescriptor
from catalog.errors import ConcurrentUpdateError, ErrorCode
from spark.deletes import DeletedRows, deleted_rows
from spark.evolution import DataMismatchError, conform
from spark.iceberg_partitions import check_spec, spec_to_write
from spark.keys import KeyCheck, PrimaryKeyViolationError
from spark.planning import Packing
from spark.pruning import Predicate, file_may_match
from spark.pushdown import push
from spark.rewrites import Rewrite, keys_from_bytes, keys_to_bytes
from spark.schema import TableAt, resolve_table
from spark.statistics import bounds_of_file
from spark.table_folder import TableFolder, table_folder
from spark.types import accepts, arrow_type, mismatch, struct_type
from spark.warehouse import delete_files, read_file, write_partitions
from updatelog.backoff import jittered

WriteKind = Literal["append", "upsert", "delete"]
"""What ``.option("write", ...)`` asks of a ``mode("append")`` write."""

COMMIT_ATTEMPTS = 20
"""Rounds of key check and commit an append makes while other commits keep coming first."""

CATALOG_URL_ENV = "CATALOG_URL"
CATALOG_TOKEN_ENV = "CATALOG_TOKEN"
CATALOG_CREDENTIAL_ENV = "CATALOG_CREDENTIAL"
DEFAULT_CATALOG_URL = "http://127.0.0.1:8000"


def client_of(options: dict[str, str]) -> CatalogClient:
    """Return a client of the catalog the options name.

    ``catalog_url``, and ``token`` or ``credential`` (a principal's ``<client id>:<secret>``).
    """
    urls = options.get("catalog_url") or os.environ.get(CATALOG_URL_ENV) or DEFAULT_CATALOG_URL
    token = options.get("token") or os.environ.get(CATALOG_TOKEN_ENV) or None
    credential = options.get("credential") or os.environ.get(CATALOG_CREDENTIAL_ENV) or None
    urls_list = [u.strip() for u in urls.split(",") if u.strip()]
    return CatalogClient(urls_list, timeout=30.0, token=token, credential=credential)


def _table_option(options: dict[str, str]) -> str:
    name = options.get("table") or options.get("path")
    if not name:
        raise ValueError(
            'the catalog data source needs a table: .load("SCHEMA.TABLE"), .save("SCHEMA.TABLE") '
            'or .option("table", "SCHEMA.TABLE")'
        )
    return name


class CatalogDataSource(DataSource):
    """Format ``catalog``: tables of the catalog, read as of a timestamp and written atomically."""

    session_defaults: ClassVar[dict[str, str]] = {}
    """Options the session set (``catalog.url``, ``catalog.token``), read by ``register``."""

    def _settings(self) -> dict[str, str]:
        """Return the read's or write's options over the session's defaults."""
        return {**self.session_defaults, **self.options}

    @classmethod
    def name(cls) -> str:
        """The format name: ``catalog``."""
        return "catalog"

    def _pinned(self) -> TableAt:
        # Resolved once per read: schema() and reader() run on one instance in the planner.
        pinned: TableAt | None = getattr(self, "_table_at", None)
        if pinned is None:
            options = self._settings()
            with client_of(options) as client:
                pinned = resolve_table(client, _table_option(options), options.get("as_of"))
            self._table_at = pinned
        return pinned

    def schema(self) -> StructType:
        """The table's Spark schema at the pinned timestamp."""
        return struct_type(self._pinned().table)

    def reader(self, schema: StructType) -> CatalogReader:
        """A reader of the table's rows at the pinned timestamp (its visible files)."""
        options = self._settings()
        pinned = self._pinned()
        packing = Packing.of(options)
        with client_of(options) as client:
            commits = client.data_commits(pinned.table.id, at=pinned.at).commits
            folder = table_folder(client, pinned.table, options, write=False)
        files, deletes = rows_and_deletes(table_rows(commits, pinned.table.rows_from))
        if files and not folder.reachable():
            raise FileNotFoundError(
                f"the data of table {_table_option(options)} is missing: its folder {folder} "
                "does not exist here (the driver and every executor must see the table's "
                "location)"
            )
        deleted = deleted_rows(folder, deletes)
        return CatalogReader(pinned.table.columns, folder, files, packing, deleted)

    def writer(self, schema: StructType, overwrite: bool) -> CatalogWriter:
        """A writer into the table as of now; refuses a DataFrame that does not fit."""
        options = self._settings()
        kind = options.get("write", "append")
        if kind not in ("append", "upsert", "delete"):
            raise ValueError(
                f'.option("write", ...) takes append (the default), upsert or delete, not {kind!r}'
            )
        if kind != "append" and overwrite:
            raise ValueError(
                f'.option("write", "{kind}") changes rows by key, with mode("append"); '
                'mode("overwrite") replaces every row of the table'
            )
        with client_of(options) as client:
            target = resolve_table(client, _table_option(options))
            folder = table_folder(client, target.table, options, write=True)
        if kind != "append" and not target.table.primary_key:
            raise ValueError(
                f'table {_table_option(options)} has no primary key, so .option("write", '
                f'"{kind}") cannot change its rows by key; append to it or overwrite it'
            )
        sources = plan_columns(target, schema, keys_only=kind == "delete")
        iceberg = spec_to_write(target.table)
        if iceberg is not None:
            check_spec(iceberg, target.table.columns)  # refused before any task runs
        return CatalogWriter(
            catalog_url=options.get("catalog_url") or "",
            token=options.get("token") or "",
            credential=options.get("credential") or "",
            table_id=target.table.id,
            table_name=_table_option(options),
            schema_version=target.table.schema_version,
            rows_from=target.table.rows_from,
            columns=target.table.columns,
            sources=sources,
            key=target.table.primary_key,
            colocation=target.table.colocation_columns,
            partitions=target.partitions,
            folder=folder,
            mode="overwrite" if overwrite else "append",
            kind=cast(WriteKind, kind),
            iceberg=iceberg,
        )


def plan_columns(target: TableAt, schema: StructType, *, keys_only: bool = False) -> dict[int, str]:
    """Match a DataFrame's columns to the table's, by name; return column id → DataFrame column.

    Names match exactly, else case-insensitively. Every DataFrame column must be a table
    column of an acceptable type (the same or one that widens into it; a struct's fields are
    matched by name the same way, and must fit at every depth); every table column
    the DataFrame lacks must be nullable or have a default; a key column may be left out only
    when its default is a function (``RAND_UUID`` gives each written row a new key). With
    ``keys_only`` (a delete), only the key columns are matched, every one of them must be
    there, and the DataFrame's other columns are left alone.

    Raises:
        DataMismatchError: the DataFrame does not fit the table; the message lists every problem.
    """
    from pyspark.sql.pandas.types import to_arrow_type

    table = target.table
    by_name = {c.name: c for c in table.columns}
    by_upper = {c.name.upper(): c for c in table.columns}
    sources: dict[int, str] = {}
    problems: list[str] = []
    for spark_field in schema.fields:
        column = by_name.get(spark_field.name) or by_upper.get(spark_field.name.upper())
        if keys_only and (column is None or column.id not in table.primary_key):
            continue
        if column is None:
            problems.append(f"column {spark_field.name} is not in the table")
            continue
        if column.id in sources:
            problems.append(f"column {column.name} is given twice")
            continue
        given = to_arrow_type(spark_field.dataType)
        if column.type in NESTED_TYPES:
            problem = mismatch(column, given)
            if problem is not None:
                problems.append(problem)
                continue
        elif not accepts(column, given):
            problems.append(
                f"column {column.name} is {arrow_type(column)} in the table; "
                f"{spark_field.dataType.simpleString()} does not fit it"
            )
            continue
        sources[column.id] = spark_field.name
    for column in table.columns:
        if column.id in sources:
            continue
        if column.id in table.primary_key:
            if keys_only:
                problems.append(f"key column {column.name} is missing (a delete names keys)")
            elif column.default_function is None:
                problems.append(
                    f"key column {column.name} is missing (only a key column whose default is "
                    "a function, such as RAND_UUID, may be left out)"
                )
        elif not keys_only and not column.nullable and column.default is None:
            problems.append(f"column {column.name} is NOT NULL and has no default: it is missing")
    if problems:
        name = f"{table.name} (table {table.id}, schema version {table.schema_version})"
        raise DataMismatchError(
            f"the DataFrame does not fit {name}: " + "; ".join(problems) + ". Nothing was written."
        )
    return sources


@dataclass(frozen=True)
class FileGroup(InputPartition):
    """One input partition of a read: the files one task reads, relative to the table folder."""

    index: int
    files: tuple[str, ...]


class CatalogReader(DataSourceReader):
    """Reads the visible files that may hold wanted rows, projected by column id.

    Spark pushes the simple conditions of a WHERE (``pushFilters``): files whose statistics
    prove a condition false are not read, row groups likewise, and the rows read are filtered
    by every condition the read takes over. Files are grouped into input partitions by bytes.
    The rows an engine deleted by position (``deleted``, per data file) are left out.
    """

    def __init__(
        self,
        columns: Sequence[ColumnDescriptor],
        folder: TableFolder,
        files: Sequence[DataFile],
        packing: Packing,
        deleted: DeletedRows | None = None,
    ) -> None:
        self.columns = tuple(columns)
        self.folder = folder
        self.files = tuple(files)
        self.packing = packing
        self.deleted = dict(deleted or {})
        self.predicates: tuple[Predicate, ...] = ()

    def pushFilters(self, filters: list[Filter]) -> Iterable[Filter]:
        """Take over the filters the read evaluates exactly; return the others to Spark."""
        predicates, left = push(filters, self.columns)
        self.predicates = tuple(predicates)
        return left

    def planned_files(self) -> list[DataFile]:
        """Return the files the read opens: those whose statistics do not rule them out."""
        return [
            file
            for file in self.files
            if file_may_match(self.predicates, partial(bounds_of_file, file))
        ]

    def partitions(self) -> list[FileGroup]:
        """The planned files, grouped by bytes (none when no file may hold a wanted row)."""
        groups = self.packing.pack([(f.path, f.size) for f in self.planned_files()])
        return [FileGroup(i, paths) for i, paths in enumerate(groups)]

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        """Yield the partition's wanted rows as Arrow batches of the pinned schema."""
        if not isinstance(partition, FileGroup):
            return  # the one empty task Spark plans for a read without partitions
        exact = [p for p in self.predicates if p.exact]
        for path in partition.files:
            rows = read_file(self.folder, path, self.columns, exact, self.deleted.get(path))
            yield from rows.to_batches()


@dataclass(frozen=True)
class FilesWritten(WriterCommitMessage):
    """What one write task produced: its files, or for a delete its keys (Arrow IPC bytes)."""

    files: tuple[DataFile, ...] = ()
    keys: bytes = b""


@dataclass
class CatalogWriter(DataSourceArrowWriter):
    """Writes Parquet files per table partition; the driver checks their keys, then commits."""

    catalog_url: str
    token: str = field(repr=False)
    table_id: int
    table_name: str
    schema_version: int
    rows_from: int
    columns: tuple[ColumnDescriptor, ...]
    sources: dict[int, str]
    key: tuple[int, ...]
    colocation: tuple[int, ...]
    partitions: int
    folder: TableFolder
    mode: str
    kind: WriteKind = "append"
    iceberg: PartitionSpec | None = None
    """The Iceberg partition spec files are written for (an engine partitioned the table)."""
    write_id: str = field(default_factory=lambda: uuid.uuid4().hex)
    credential: str = field(default="", repr=False)
    """A principal's ``<client id>:<secret>`` to sign in with, instead of ``token``."""

    def _client_options(self) -> dict[str, str]:
        return {
            "catalog_url": self.catalog_url,
            "token": self.token,
            "credential": self.credential,
        }

    def write(self, iterator: Iterator[pa.RecordBatch]) -> FilesWritten:
        """Write this task's rows as Parquet files, one per table partition (executor).

        A delete's task writes nothing: it hands the driver the keys it was given.
        """
        from pyspark import TaskContext

        context = TaskContext.get()
        task = f"{self.write_id[:12]}-{context.partitionId() if context else 0}"
        columns = self._key_columns() if self.kind == "delete" else self.columns
        parts = [conform(batch, columns, self.sources, self.key) for batch in iterator]
        if not parts:
            return FilesWritten()
        data = pa.concat_tables(parts)
        if self.kind == "delete":
            return FilesWritten(keys=keys_to_bytes(data))
        files = write_partitions(
            data,
            self.columns,
            self.folder,
            self._colocated(),
            self.partitions,
            task,
            self.iceberg,
        )
        return FilesWritten(tuple(files))

    def commit(self, messages: list[WriterCommitMessage | None]) -> None:
        """Check the write's keys, then make every task's files visible at one timestamp.

        Runs on the driver. Keys that repeat within the write are refused; an append's keys
        the table holds are refused too. An upsert or a delete writes again, without the
        rows of its keys, the table's files that hold them, and commits their removal with
        its files (``spark.rewrites``). Either is judged as of the table's latest data
        commit, which the commit expects still to be the latest: when another commit came in
        between, the write is judged again on top of it, up to ``COMMIT_ATTEMPTS`` rounds.

        Raises:
            PrimaryKeyViolationError: a key repeats; nothing was committed.
            ConcurrentUpdateError: other writers kept committing to the table while this one
                checked its keys; nothing was committed.
            CatalogApiError: the server refused the commit, or did not answer (then the
                outcome is unknown and the files stay for ``remove_orphans``).
        """
        files = _files_of(messages)
        folder = self.folder
        rewrite = Rewrite(
            folder,
            self.columns,
            self._colocated(),
            self.partitions,
            f"{self.write_id[:12]}-r",
            self.iceberg,
        )
        self._sent = False  # a commit is out whose outcome is unknown until it answers
        try:
            with client_of(self._client_options()) as client:
                self._commit(client, files, rewrite, messages)
        except Exception as e:
            unknown = self._sent and not (isinstance(e, CatalogApiError) and _refused(e))
            if not unknown:
                delete_files(folder, [*files, *rewrite.written()])  # nothing was committed
            raise

    def _commit(
        self,
        client: CatalogClient,
        files: list[DataFile],
        rewrite: Rewrite,
        messages: list[WriterCommitMessage | None],
    ) -> None:
        if not self.key:  # a table without a key: an append adds its rows, nothing to check
            self._sent = True
            client.commit_data(
                self.table_id,
                files,
                schema_version=self.schema_version,
                mode="overwrite" if self.mode == "overwrite" else "append",
                request_id=f"spark-write-{self.write_id}",
            )
            return
        check = KeyCheck(self.folder, self._key_columns(), self.table_name)
        if self.kind == "delete":
            given = [m.keys for m in messages if isinstance(m, FilesWritten)]
            check.given_keys(keys_from_bytes(given, check.key))
        elif files:
            check.written_files(files)
        if self.kind != "append" and not (files or self.kind == "delete"):
            return  # an upsert of no rows changes nothing
        for attempt in range(COMMIT_ATTEMPTS):
            expected: int | None = None
            removed: list[str] = []
            rewritten: list[DataFile] = []
            if self.kind != "append" or (files and self.mode == "append"):
                visible = client.data_commits(self.table_id).commits
                expected = visible[-1].seq if visible else 0
                held, deletes = rows_and_deletes(table_rows(visible, self.rows_from))
                deleted = deleted_rows(self.folder, deletes)
                if self.kind == "append":
                    check.table_files(held, deleted)
                else:
                    removed, rewritten = rewrite.without(check.written, held, deleted)
            if self.kind == "delete" and not removed:
                return  # the table holds none of the keys
            self._sent = True
            try:
                client.commit_data(
                    self.table_id,
                    [*files, *rewritten],
                    schema_version=self.schema_version,
                    mode="overwrite" if self.mode == "overwrite" else "append",
                    request_id=f"spark-write-{self.write_id}",
                    expected_seq=expected,
                    removed=removed,
                )
                rewrite.unused(rewritten)
                return
            except ConflictError as e:
                if e.code != ErrorCode.PRECONDITION_FAILED:
                    raise
            self._sent = False  # another commit came first: judge the write again on top
            time.sleep(jittered(attempt, first_s=0.01, cap_s=1.0))
        raise ConcurrentUpdateError(
            f"other writers kept committing to {self.table_name} while this write "
            f"checked its keys ({COMMIT_ATTEMPTS} rounds); nothing was committed: "
            "run the write again"
        )

    def _colocated(self) -> list[int]:
        return [i for i, c in enumerate(self.columns) if c.id in set(self.colocation)]

    def _key_columns(self) -> list[ColumnDescriptor]:
        by_id = {c.id: c for c in self.columns}
        return [by_id[i] for i in self.key]

    def abort(self, messages: list[WriterCommitMessage | None]) -> None:
        """Delete the files the tasks wrote that no data commit names (driver).

        Spark also aborts after ``commit`` failed, even when the commit's outcome is unknown
        (the server did not answer): files a commit names are kept, and when the server
        cannot say which it names, every file stays for ``remove_orphans``.
        """
        files = _files_of(messages)
        if not files:
            return
        try:
            with client_of(self._client_options()) as client:
                commits = client.data_commits(self.table_id, history=True).commits
        except CatalogApiError:
            return
        named = {file.path for commit in commits for file in commit.files}
        delete_files(self.folder, [f for f in files if f.path not in named])


def _refused(error: CatalogApiError) -> bool:
    return error.status is not None and 400 <= error.status < 500


def _files_of(messages: list[WriterCommitMessage | None]) -> list[DataFile]:
    return [f for m in messages if isinstance(m, FilesWritten) for f in m.files]


FILTER_PUSHDOWN_CONF = "spark.sql.python.filterPushdown.enabled"
"""Spark hands a Python data source the filters of a read only with this set (off by default)."""


SESSION_OPTIONS = {
    "catalog.url": "catalog_url",
    "catalog.token": "token",
    "catalog.credential": "credential",
}
"""Session settings ``register`` hands the source as defaults, and the options they stand for."""


def register(spark: Any) -> None:
    """Register format ``catalog`` with a Spark session and let it take a read's filters.

    A session's ``catalog.url`` and ``catalog.token`` or ``catalog.credential``
    (``spark.conf.set(...)`` before this call) become the defaults of every read and write;
    their options win over them. Also sets ``spark.sql.python.filterPushdown.enabled`` on the
    session: Spark refuses to read a Python source that takes filters while it is off.
    """
    spark.conf.set(FILTER_PUSHDOWN_CONF, "true")
    defaults = {
        option: spark.conf.get(setting)
        for setting, option in SESSION_OPTIONS.items()
        if spark.conf.get(setting, None)
    }
    # The source goes to Spark's Python workers pickled by value, these defaults with it.
    source = type(CatalogDataSource.__name__, (CatalogDataSource,), {"session_defaults": defaults})
    spark.dataSource.register(source)


__all__ = [
    "CatalogDataSource",
    "CatalogReader",
    "CatalogWriter",
    "DataMismatchError",
    "FileGroup",
    "PrimaryKeyViolationError",
    "plan_columns",
    "register",
]
