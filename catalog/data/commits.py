"""Timestamped data commits: which files of a table are visible as of a timestamp.

A data writer (a Spark job) writes files first, then commits them: one record per commit,
numbered per table and stored through the update log under the catalog's own safe-time rule
(``DataCommitLog.commit``). The commit timestamp comes from the node's hybrid clock and must
exceed the log's safe time, and a read at T first raises the safe time to T; so a read at T
lists exactly the commits with ``commit_ts <= T``, whatever commits or DDL run concurrently.
Files no commit names (a failed or killed job) are invisible and are cleaned up by the writer.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from catalog.data.cache import DataCommitCache
from catalog.data.files import (
    DataCommit,
    DataFile,
    DataMode,
    IcebergSnapshot,
    encode_data_commit,
    visible_files,
)
from catalog.data.group import MAX_TOGETHER, DataCommitGroup
from catalog.data.iceberg_partition_values import check_partition
from catalog.data.iceberg_table import ROW_LINEAGE_FORMAT
from catalog.data.log import DataCommitLog, Together
from catalog.errors import (
    ConcurrentUpdateError,
    ErrorCode,
    NotFoundError,
    ValidationError,
)
from catalog.request_ids import check_request_id, content_digest, request_id_reused
from catalog.service import CatalogService
from schemasync.clock import Clock, describe_ts, wait_until
from schemasync.errors import TimestampTooFarError
from schemasync.service import SchemaSyncService, ms_to_hlc
from updatelog.errors import FormatError
from updatelog.log import AppendConflict, UpdateLog
from updatelog.optimistic import Retry, append_optimistically, catch_up

MAX_TABLES_TOGETHER = MAX_TOGETHER
"""The most tables one multi-table commit (``DataCommits.commit_many``) changes: one store
transaction holds them all."""


@dataclass(frozen=True, slots=True)
class TableCommit:
    """One table's commit, as ``DataCommits.commit`` takes it (see there for each field)."""

    table_id: int
    files: list[DataFile]
    schema_version: int
    mode: DataMode
    request_id: str
    expected_seq: int | None = None
    removed: Sequence[str] = ()
    iceberg: IcebergSnapshot | None = None
    name: str = ""
    """How messages name the table (its id when empty)."""


class DataCommits:
    """Commits and lists a node's tables' data files (``CatalogNode.data``).

    Args:
        log: the update log.
        service: the node's catalog service (to check the table exists).
        clock: the node's hybrid clock (commit timestamps).
        schema_sync: the node's schema sync (reads at a timestamp).
        max_attempts: commit rounds before giving up on conflicts.
    """

    def __init__(
        self,
        log: UpdateLog,
        service: CatalogService,
        clock: Clock,
        schema_sync: SchemaSyncService,
        *,
        max_attempts: int = 30,
    ) -> None:
        self._log = log
        self._commits = DataCommitLog(log)
        self._cache = DataCommitCache(self._commits)
        # The latest commit number this node saw per table, where an append starts: a wrong
        # guess (another node committed since) costs one refused attempt, not a read each time.
        self._latest: dict[int, int] = {}
        self._group = DataCommitGroup(
            self._commits, clock, max_bytes=max(4096, log.store.max_request_bytes // 2)
        )
        self._service = service
        self._clock = clock
        self._schema_sync = schema_sync
        self._max_attempts = max_attempts

    @property
    def group_stats(self) -> dict[str, int]:
        """Return how this node sent its data commits so far.

        ``transactions`` sent, commits that landed ``together`` with others, and commits sent
        ``one_by_one`` after their group was refused.
        """
        return dict(self._group.stats)

    async def commit(
        self,
        table_id: int,
        files: list[DataFile],
        *,
        schema_version: int,
        mode: DataMode,
        request_id: str,
        expected_seq: int | None = None,
        removed: Sequence[str] = (),
        iceberg: IcebergSnapshot | None = None,
        main_removed: bool = False,
    ) -> DataCommit:
        """Make ``files`` visible at one new timestamp, atomically; return the commit.

        With a ``request_id`` that already committed these files, returns that commit
        unchanged (whatever ``expected_seq`` says now).

        Args:
            table_id: the table.
            files: the written files.
            schema_version: the table schema version they were written with.
            mode: ``append`` or ``overwrite``.
            request_id: the writer's idempotency key.
            expected_seq: when given, commit only if the table's latest data commit is still
                this one (0: none yet), checked in the same transaction as the commit: a
                writer that checked the table's data as of that commit knows nothing came
                in between.
            removed: paths of earlier files the commit removes; each must be visible as of
                ``expected_seq``, which must then be given.
            iceberg: the Iceberg snapshot the commit is, when it came through the Iceberg
                REST catalog.
            main_removed: the commit removes branch ``main`` (an Iceberg replace that adds
                no snapshot): an overwrite with no files and no snapshot.

        Raises:
            NotFoundError: the table does not exist (any more) in the latest catalog.
            ValidationError: the schema version is one the table never had or one from
                before the table was replaced (``TableDescriptor.rows_from``), a commit of
                the Spark source (no Iceberg snapshot) to a table of Iceberg format version
                3, a removed file
                that is not visible, or the request id already committed other content
                (REQUEST_ID_REUSED).
            ConcurrentUpdateError: PRECONDITION_FAILED, the table has data commits after
                ``expected_seq`` (nothing was committed); CONCURRENT_UPDATE, other writers
                kept winning for ``max_attempts`` rounds.
            StorageUnavailableError: the log could not be reached.
        """
        part = TableCommit(
            table_id, files, schema_version, mode, request_id, expected_seq, removed, iceberg
        )
        digest, seq = await self._prepare(part, main_removed=main_removed)
        next_seq = seq

        async def round_(attempt: int) -> DataCommit | Retry:
            nonlocal next_seq
            seq = next_seq

            def build(commit_ts: int) -> DataCommit:
                return DataCommit(
                    table_id=table_id,
                    seq=seq,
                    commit_ts=commit_ts,
                    schema_version=schema_version,
                    mode=mode,
                    files=tuple(files),
                    request_id=request_id,
                    removed=tuple(removed) or None,
                    iceberg=iceberg,
                    main_removed=main_removed or None,
                )

            result, commit = await self._group.commit(table_id, seq, build, request_id, digest)
            if result.committed:
                self._latest[table_id] = commit.seq
                return commit
            record = result.request
            if result.conflict is AppendConflict.REQUEST and record is not None:
                if not record.same_request(digest):
                    raise request_id_reused("committed other files or another table")
                return await self._read_commit(table_id, record.version)
            if result.conflict is AppendConflict.VERSION and expected_seq is not None:
                raise ConcurrentUpdateError(
                    f"the latest data commit of table {table_id} is {result.version}, not "
                    f"{expected_seq} as the write expected (its data changed since the writer "
                    "checked it); nothing was committed: check the data again and commit "
                    "expecting the latest",
                    code=ErrorCode.PRECONDITION_FAILED,
                )

            async def winner(latest: int) -> None:  # known at once: nothing to wait for
                nonlocal next_seq
                next_seq = latest + 1
                self._latest[table_id] = latest

            await catch_up(result, self._clock.update, winner)
            return Retry(pause=result.conflict is not AppendConflict.SAFE_TIME)

        def gave_up() -> DataCommit:
            raise ConcurrentUpdateError(
                f"gave up committing data of table {table_id} after {self._max_attempts} attempts"
            )

        return await append_optimistically(round_, gave_up, max_attempts=self._max_attempts)

    async def commit_part(self, part: TableCommit) -> DataCommit:
        """``commit`` one table's ``TableCommit`` (its errors)."""
        return await self.commit(
            part.table_id,
            part.files,
            schema_version=part.schema_version,
            mode=part.mode,
            request_id=part.request_id,
            expected_seq=part.expected_seq,
            removed=part.removed,
            iceberg=part.iceberg,
        )

    async def commit_many(self, parts: Sequence[TableCommit]) -> list[DataCommit]:
        """Make several tables' commits visible at one timestamp, in one transaction, or none.

        Each part is checked as ``commit`` checks it and must name the commit it expects; all
        are recorded in one store transaction, at one timestamp, under the safe-time rule: a
        read as of any moment sees every part or none. A transaction sent again after it
        landed (its answer lost) is answered with the commits it made.

        Raises:
            ValidationError: no parts, more than ``MAX_TABLES_TOGETHER``, two of one table or
                one request id, a part without ``expected_seq``, a part ``commit`` refuses,
                or request ids another commit used (REQUEST_ID_REUSED).
            NotFoundError: a table does not exist (any more).
            ConcurrentUpdateError: PRECONDITION_FAILED naming the first table that has data
                commits after the one its part expects (nothing was committed); or
                CONCURRENT_UPDATE, the safe time kept moving for ``max_attempts`` rounds.
            UnknownOutcomeError: the store's answer was lost (a resend tells).
            StorageUnavailableError: the log could not be reached.
        """
        if not 1 <= len(parts) <= MAX_TABLES_TOGETHER:
            raise ValidationError(
                f"a multi-table commit changes 1 to {MAX_TABLES_TOGETHER} tables, got {len(parts)}"
            )
        if len({p.table_id for p in parts}) < len(parts) or len(
            {p.request_id for p in parts}
        ) < len(parts):
            raise ValidationError("a multi-table commit changes each table once, each part its id")
        if any(p.expected_seq is None for p in parts):
            raise ValidationError("each part of a multi-table commit names the commit it expects")
        prepared = [await self._prepare(p) for p in parts]
        for _ in range(self._max_attempts):
            ts = self._clock.now()
            commits = [
                DataCommit(
                    table_id=p.table_id,
                    seq=seq,
                    commit_ts=ts,
                    schema_version=p.schema_version,
                    mode=p.mode,
                    files=tuple(p.files),
                    request_id=p.request_id,
                    removed=tuple(p.removed) or None,
                    iceberg=p.iceberg,
                )
                for p, (_, seq) in zip(parts, prepared, strict=True)
            ]
            together = [
                Together(c.table_id, c.seq, encode_data_commit(c), c.request_id, digest)
                for c, (digest, _) in zip(commits, prepared, strict=True)
            ]
            refusal = await self._commits.commit_together(together, ts)
            if refusal is None:
                for c in commits:
                    self._latest[c.table_id] = c.seq
                return commits
            self._clock.update(refusal.safe_time)
            if any(refusal.recorded):
                return await self._landed(parts, prepared)
            for p, (_, seq), latest in zip(parts, prepared, refusal.latest, strict=True):
                if latest != seq - 1:
                    raise ConcurrentUpdateError(
                        f"the latest data commit of table {p.name or p.table_id} is {latest}, not "
                        f"{p.expected_seq} as the commit expected; nothing was committed to "
                        "any of its tables",
                        code=ErrorCode.PRECONDITION_FAILED,
                    )
        raise ConcurrentUpdateError(
            f"gave up committing data of {len(parts)} tables after {self._max_attempts} attempts"
        )

    async def _landed(
        self, parts: Sequence[TableCommit], prepared: Sequence[tuple[bytes, int]]
    ) -> list[DataCommit]:
        """Return the commits an earlier send of the same multi-table commit made.

        Raises:
            ValidationError: REQUEST_ID_REUSED, the ids recorded other content, or not all.
        """
        landed: list[DataCommit] = []
        for p, (digest, _) in zip(parts, prepared, strict=True):
            record = await self._commits.request(p.request_id)
            if record is None or not record.same_request(digest):
                raise request_id_reused("committed other files or another table")
            landed.append(await self._read_commit(p.table_id, record.version))
        return landed

    async def _prepare(self, part: TableCommit, *, main_removed: bool = False) -> tuple[bytes, int]:
        """Check a commit of one table against the latest catalog; return its digest and number.

        Raises:
            NotFoundError | ValidationError: as ``commit`` says.
        """
        table_id, files, schema_version = part.table_id, part.files, part.schema_version
        mode, request_id, expected_seq = part.mode, part.request_id, part.expected_seq
        removed, iceberg = part.removed, part.iceberg
        check_request_id(request_id)
        if mode not in ("append", "overwrite"):
            raise ValidationError(f"mode must be append or overwrite, got {mode!r}")
        if main_removed and (mode != "overwrite" or files or removed or iceberg is not None):
            raise ValidationError(
                "a commit that removes branch main is an overwrite with no files and no snapshot"
            )
        if expected_seq is not None and expected_seq < 0:
            raise ValidationError(
                f"expected_seq is a data commit number, 0 (none yet) or more; got {expected_seq}"
            )
        latest = self._service.latest_catalog()
        if not latest.has_table(table_id):
            raise NotFoundError(
                f"table {table_id} does not exist any more; its files were not committed",
                code=ErrorCode.TABLE_NOT_FOUND,
            )
        table = latest.table_by_id(table_id)
        if not 1 <= schema_version <= table.schema_version:
            raise ValidationError(f"table {table_id} has no schema version {schema_version}")
        version = table.iceberg.format_version if table.iceberg is not None else 0
        if iceberg is None and not main_removed and version >= ROW_LINEAGE_FORMAT:
            raise ValidationError(
                f"table {table.name} is of Iceberg format version {version}, whose rows keep "
                "ids (row lineage) that only Iceberg engines give out; nothing was committed: "
                "write it through an Iceberg engine that writes format version 3 (Spark with "
                "Iceberg's runtime), or the catalog's Spark source into a format 2 table"
            )
        if schema_version < table.rows_from:
            raise ValidationError(
                f"table {table.name} was replaced: its rows are those written with schema "
                f"version {table.rows_from} or later, and these files were written with "
                f"{schema_version}; nothing was committed: write them again with the table's "
                "current schema"
            )
        for f in files:
            if f.iceberg_partition is not None:
                check_partition(f.iceberg_partition, table.iceberg, table.columns, f.path)
            if f.schema_version is not None:
                raise ValidationError(
                    f"data file {f.path} names a schema version of its own; the files of a "
                    "commit are written with the commit's schema_version: leave it out"
                )
        # What a request id's digest covers: a file's own schema_version is always absent here.
        files_shape: list[object] = [
            f.model_dump(mode="json", exclude={"schema_version"}) for f in files
        ]
        shape: list[object] = [table_id, schema_version, mode, files_shape]
        if removed or iceberg is not None:
            iceberg_shape = None if iceberg is None else iceberg.model_dump(mode="json")
            shape.append({"removed": list(removed), "iceberg": iceberg_shape})
        if main_removed:
            shape.append({"main_removed": True})
        digest = content_digest(shape)
        if expected_seq is None:
            if removed:
                raise ValidationError("a commit that removes files names the commit it expects")
            known = self._latest.get(table_id)
            if known is None:
                known = await self._commits.latest(table_id)
            seq = known + 1
        else:
            seq = expected_seq + 1
            if removed:
                await self._check_removed(table_id, expected_seq, removed)
        return digest, seq

    async def commits_at(
        self, table_id: int, ts: int, *, history: bool = False
    ) -> list[DataCommit]:
        """Return the table's commits visible at ``ts``: from the last overwrite to ``ts``.

        With ``history``, every commit up to ``ts``, overwritten ones too (those merged at
        expiry stand as the one they were merged into).

        First raises the log's safe time to ``ts`` (waiting for this node's clock to reach
        it), so no commit at or before ``ts`` can appear afterwards.

        Raises:
            TimestampTooFarError: ``ts`` is beyond this node's clock plus the clock skew.
            VersionCompactedError: ``ts`` is before the earliest retained catalog version's
                activation (the catalog was compacted past it).
            StorageUnavailableError: the log could not be reached.
        """
        horizon = self._clock.now() + ms_to_hlc(self._schema_sync.max_clock_skew_ms)
        if ts > horizon:
            raise TimestampTooFarError(
                f"timestamp {describe_ts(ts)} is beyond this node's clock plus the clock skew "
                f"({describe_ts(horizon)}); data commits at it may still come"
            )
        await wait_until(self._clock, ts)
        # Refused before the earliest kept version (files only such a read reached may be
        # deleted, ``data_expiry``), by the rule catalog reads "as of" follow.
        self._service.active_catalog_version(ts)
        await self._log.raise_safe_time(ts)
        commits = await self._cache.up_to(table_id, ts)
        return commits if history else visible_files(commits)

    async def recorded(self, table_id: int) -> list[DataCommit]:
        """Return every data commit of the table the log holds now, in order.

        Unlike ``commits_at`` it neither waits nor raises the safe time: a commit racing
        this read may land afterwards with an earlier timestamp. For a reader that checks
        what it read when it commits (an Iceberg client's requirements), not for reads
        "as of" a time.

        Raises:
            StorageUnavailableError: the log could not be reached.
        """
        return await self._cache.recorded(table_id)

    async def _check_removed(self, table_id: int, seq: int, removed: Sequence[str]) -> None:
        """Refuse removing files that are not visible as of data commit ``seq``."""
        commits = await self.recorded(table_id)
        first = commits[0] if commits else None
        if first is not None and first.merged and seq < first.seq:  # read before a merge
            message = f"table {table_id} changed since the write read its data commit {seq}"
            raise ConcurrentUpdateError(
                f"{message}; nothing was committed: check the data again and commit expecting "
                "the latest",
                code=ErrorCode.PRECONDITION_FAILED,
            )
        visible = {
            f.path for c in visible_files([c for c in commits if c.seq <= seq]) for f in c.files
        }
        missing = sorted(set(removed) - visible)
        if missing:
            raise ValidationError(
                f"table {table_id} has no visible data file {missing[0]} as of data commit "
                f"{seq} ({len(missing)} removed file(s) missing); a commit removes only "
                "files that are visible"
            )

    async def _read_commit(self, table_id: int, seq: int) -> DataCommit:
        commits = await self.recorded(table_id)
        position = seq - commits[0].seq if commits else -1
        if 0 <= position < len(commits) and commits[position].seq == seq:
            return commits[position]
        raise FormatError(
            f"data commit {seq} of table {table_id} is recorded for this request id but is no "
            "longer in the log (merged with the commits before it at expiry); it did commit"
        )
