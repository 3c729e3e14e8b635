"""``CatalogManager``: the write side. Validates commands and appends them with CAS.

One path for every command (docs/design.md, "The life of a command"): validate against the latest
local catalog, append ``VersionedUpdate(N)`` only if the log is still at N-1, wait until N is
applied here and the clock has passed its activation plus the maximum clock skew.

Group commit: while an append is in flight, further ``execute`` calls on this node queue up
and go into the next version together. Each caller keeps its own all-or-nothing batch (a
failing batch is left out with its own error) and gets its own ``ApplyResult``.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from catalog.apply_result import ApplyResult
from catalog.catalog import Catalog
from catalog.collector import collector_paused
from catalog.commands import CommandBase
from catalog.data.expiry import DEFAULT_GRACE_MS, DataExpiry
from catalog.entries.base import EntryBase
from catalog.errors import CatalogError, ConcurrentUpdateError, NodeStoppingError, ValidationError
from catalog.leases import RetentionLease, RetentionLeases, holding_back
from catalog.marshalling import encode_update
from catalog.origin import UpdateOrigin, in_process
from catalog.prepare import prepare
from catalog.request_ids import check_request_id, commands_digest, request_id_reused
from catalog.runtime.registry import wait_for_nodes as wait_for_registered_nodes
from catalog.service import CatalogService
from catalog.snapshots import snapshot_pieces
from catalog.update import RequestOutcome, VersionedUpdate
from catalog.wire import decode_refusal, encode_refusal
from schemasync.service import SchemaSyncService
from updatelog.cluster import regressed
from updatelog.errors import UpdateTooLargeError
from updatelog.log import AppendConflict, RequestRecord, UpdateLog
from updatelog.optimistic import Retry, append_optimistically, catch_up

MAX_BATCH_COMMANDS = 100_000
"""The hard limit of one batch; larger ones are refused with ``UPDATE_TOO_LARGE`` up front."""
MAX_GROUP_REQUEST_IDS = 32
"""The most request ids one group-committed version records; later requests wait a round."""

Precondition = Callable[[Catalog], None]
"""Checks the catalog a batch is judged against; raises a ``CatalogError`` to refuse it."""

_logger = logging.getLogger(__name__)


@dataclass(eq=False)
class _Request:
    commands: list[CommandBase]
    request_id: str | None
    future: asyncio.Future[_Outcome] = field(repr=False)
    origin: UpdateOrigin
    """Who asked and why, recorded in the version (with its count of entries)."""
    digest: bytes = b""
    """The digest of ``commands``, recorded with the request id (empty without one)."""
    entry_count: int = 0
    """How many entries the request produced when last validated."""
    precondition: Precondition | None = None


@dataclass(frozen=True, slots=True)
class _Outcome:
    """How a queued request ended: committed, refused (after ``version``), or deduplicated."""

    version: int
    applied: tuple[bool, ...] = ()
    activation_ts: int = 0
    error: CatalogError | None = None
    committed_by_request: bool = False
    final: bool = False
    """The refusal is the one recorded under the request id: nothing left to settle."""


class CatalogManager:
    """Executes catalog commands on this node.

    Args:
        log: the update log.
        service: this node's catalog service (the applied versions).
        schema_sync: the completion gate; its clock stamps proposals and its delay is recorded
            in every update.
        warehouse: the cluster's warehouse folder (None when it has none); a new table
            records its folder in it.
        max_attempts: how many times a batch is re-validated after losing the CAS.
    """

    def __init__(
        self,
        log: UpdateLog,
        service: CatalogService,
        schema_sync: SchemaSyncService,
        *,
        warehouse: str | None,
        max_attempts: int = 16,
        backoff_base_s: float = 0.002,
        backoff_cap_s: float = 0.2,
    ) -> None:
        self._log = log
        self._service = service
        self._schema_sync = schema_sync
        self._warehouse = warehouse
        self.expiry = DataExpiry(log, warehouse, max_clock_skew_ms=schema_sync.max_clock_skew_ms)
        """What compactions deleted of the data (``stats``)."""
        self.leases = RetentionLeases(log.store, log.keys)
        """The retention leases compactions keep to (``catalog.leases``)."""
        self.held_back: RetentionLease | None = None
        """The lease that held the last compaction back, if one did."""
        self._max_attempts = max_attempts
        self._backoff_base_s = backoff_base_s
        self._backoff_cap_s = backoff_cap_s
        self._queue: list[_Request] = []
        self._flusher: asyncio.Task[None] | None = None
        self._stopped = False
        self.stats = {"appends": 0, "conflicts": 0, "retries": 0, "merged": 0}

    async def execute(
        self,
        commands: CommandBase | Sequence[CommandBase],
        request_id: str | None = None,
        *,
        wait_for_nodes: float | None = None,
        origin: UpdateOrigin | None = None,
        precondition: Precondition | None = None,
    ) -> ApplyResult:
        """Apply ``commands`` as one atomic batch; return once the change is visible everywhere.

        With ``wait_for_nodes`` (seconds), it then also waits until every live node in the
        node registry reports the result's version, at most that long, and says in
        ``nodes_synced``/``nodes_lagging`` which did. ``origin`` says who asked and why; the
        version records it (``in_process`` with the request id when None). A
        ``precondition`` is called with the catalog the batch is judged against, each time it
        is judged, so what it checks holds in the version the batch commits on top of (an
        optimistic writer's "nothing changed since I read"); a ``CatalogError`` it raises
        refuses the batch as a command's would. Otherwise as ``_execute`` below.

        Raises:
            ValidationError: ``wait_for_nodes`` is negative or not finite.
            NodeStoppingError: the node is stopping; the command was not run.
            StorageUnavailableError: the log (or the registry, for the whole wait) could not
                be reached.
        """
        if wait_for_nodes is not None and not 0 <= wait_for_nodes < math.inf:
            raise ValidationError(f"wait_for_nodes must be finite and >= 0: {wait_for_nodes}")
        if self._stopped:
            raise NodeStoppingError(self._service.node_name, "the command was not run")
        if self._service.regression is not None:
            raise self._service.regression
        result = await self._execute(
            commands, request_id, origin or in_process(request_id), precondition
        )
        if wait_for_nodes is None:
            return result
        sync = await wait_for_registered_nodes(
            self._log, result.version, wait_for_nodes, known_synced=[self._service.node_name]
        )
        return dataclasses.replace(result, nodes_synced=sync.synced, nodes_lagging=sync.lagging)

    async def _execute(
        self,
        commands: CommandBase | Sequence[CommandBase],
        request_id: str | None,
        origin: UpdateOrigin,
        precondition: Precondition | None = None,
    ) -> ApplyResult:
        """Apply ``commands`` as one atomic batch; return once the change is visible everywhere.

        With a ``request_id`` that already committed (a client retrying after a timeout), the
        original result is returned and nothing is appended again.

        Raises:
            CatalogError: a command does not fit (raised once the version it was validated
                against is active, so the conflicting object is visible to the caller).
            ConcurrentUpdateError: other writers kept winning for ``max_attempts`` rounds.
            StorageUnavailableError: the log could not be reached.
        """
        batch = [commands] if isinstance(commands, CommandBase) else list(commands)
        if not batch:
            raise ValidationError("a batch needs at least one command")
        if len(batch) > MAX_BATCH_COMMANDS:
            raise UpdateTooLargeError(
                f"a batch holds at most {MAX_BATCH_COMMANDS:,} commands, this one "
                f"{len(batch):,}; split it into several batches"
            )
        digest = b""
        if request_id is not None:
            check_request_id(request_id)
            digest = commands_digest(batch)
        # No read of the request id up front: the append refuses an id already recorded and
        # names the version that committed it; a refusal is recorded under the id in turn.
        for _ in range(self._max_attempts):
            outcome = await self._submit(batch, request_id, digest, origin, precondition)
            if outcome.committed_by_request:
                assert request_id is not None
                return await self._answer_from_log(outcome.version, request_id, len(batch))
            if outcome.error is None:
                await self._schema_sync.wait_for_activation(outcome.activation_ts)
                return ApplyResult(outcome.version, outcome.applied, outcome.activation_ts)
            settled = (
                outcome
                if outcome.final
                else await self._settle_refusal(outcome, request_id, digest, len(batch))
            )
            if isinstance(settled, ApplyResult):
                return settled
            if settled is not None:
                # As Ignite (IGNITE-21776): refuse only once the version we validated against
                # is active, so a caller told TABLE_EXISTS can read that table right away.
                await self._gate(settled.version)
                assert settled.error is not None
                raise settled.error
        raise ConcurrentUpdateError(
            f"gave up after {self._max_attempts} attempts: the catalog kept changing while "
            "this request was judged; retry the request"
        )

    async def _submit(
        self,
        batch: list[CommandBase],
        request_id: str | None,
        digest: bytes,
        origin: UpdateOrigin,
        precondition: Precondition | None,
    ) -> _Outcome:
        future: asyncio.Future[_Outcome] = asyncio.get_running_loop().create_future()
        self._queue.append(
            _Request(batch, request_id, future, origin, digest, precondition=precondition)
        )
        if self._flusher is None or self._flusher.done():
            self._flusher = asyncio.get_running_loop().create_task(self._flush())
        return await future

    async def _settle_refusal(
        self, outcome: _Outcome, request_id: str | None, digest: bytes, commands: int
    ) -> ApplyResult | _Outcome | None:
        """Make a refusal final, as of a version that is the log's latest.

        A lagging node must not refuse what the latest version allows, and a copy of the same
        request still in flight elsewhere (a client retrying on another node after a timeout)
        must not commit after this refusal: the refusal is recorded under the request id,
        guarded by the version it was judged against.

        Returns:
            The refusal to raise; the original result when a copy of the request committed; or
            None when the log moved on and the request must be judged again.
        """
        assert outcome.error is not None
        if request_id is None:
            latest = await self._log.latest_version()
            if latest <= outcome.version:
                return outcome
            await self._service.catalog_ready(latest)
            return None
        result = await self._log.record_refusal(
            request_id, outcome.version, encode_refusal(outcome.error), digest
        )
        if result.committed:
            return outcome
        record = result.request
        if record is None:  # the log moved on since the judgement
            await self._service.catalog_ready(result.version)
            return None
        recorded = _recorded(record, digest)
        if recorded.committed_by_request:
            return await self._answer_from_log(record.version, request_id, commands)
        return recorded

    async def _gate(self, version: int) -> None:
        try:
            activation = self._service.catalog(version).activation_ts
        except CatalogError:
            activation = self._service.latest_catalog().activation_ts
        await self._schema_sync.wait_for_activation(activation)

    async def _answer_from_log(self, version: int, request_id: str, commands: int) -> ApplyResult:
        await self._service.catalog_ready(version)
        outcome = self._service.request_outcome(version, request_id)
        if outcome is None and self._service.retains_update(version):
            # Recorded at a version that does not list it: it changed nothing there.
            outcome = RequestOutcome(request_id=request_id, applied=(False,) * commands)
        try:
            activation = self._service.catalog(version).activation_ts
        except CatalogError:
            # Compacted since: the earliest retained version activates no earlier.
            activation = self._service.catalog(self._service.earliest_version).activation_ts
        await self._schema_sync.wait_for_activation(activation)
        return ApplyResult(version, outcome.applied if outcome else (), activation)

    # -- group commit ---------------------------------------------------------------------

    async def _flush(self) -> None:
        while self._queue:
            batch, self._queue = self._queue, []
            try:
                await self._commit(batch)
            except Exception as e:  # the log failed: every waiting caller hears about it
                for request in batch:
                    if not request.future.done():
                        request.future.set_exception(e)

    async def _commit(self, pending: list[_Request]) -> None:
        waiting = pending

        async def round_(attempt: int) -> Retry | None:
            nonlocal waiting
            waiting = [r for r in waiting if not r.future.done()]
            if not waiting:
                return None
            base = self._service.latest_catalog()
            included, entries, deferred, after = self._validate(base, waiting)
            if deferred:
                waiting = [r for r in waiting if r not in deferred]
                self._queue[:0] = deferred  # first in line next round
            if not included:
                return None
            if not entries:
                # Every command was a no-op: no new version. A request id is recorded as
                # having changed nothing at this version, so a retry is answered, not run.
                return None if await self._unchanged(base, included) else Retry(pause=False)
            update = self._update(base, included, entries)
            request_ids = {r.request_id: r.digest for r, _ in included if r.request_id is not None}
            self.stats["appends"] += 1
            self.stats["merged"] += len(included) - 1
            try:
                payload = encode_update(update)
            except Exception as e:  # nothing written; only the request at fault hears of it
                await self._each_alone(included, _unstorable(e))
                return None
            self._service.expect(payload, base, update, after)
            try:
                result = await self._log.append(
                    update.version, payload, update.proposal_ts, request_ids
                )
            except UpdateTooLargeError as e:
                await self._each_alone(included, e)
                return None
            if result.committed:
                await self._service.appended(update.version, payload)
                committed = self._service.catalog(update.version)
                for request, applied in included:
                    request.future.set_result(
                        _Outcome(update.version, applied, committed.activation_ts)
                    )
                return None
            self.stats["conflicts"] += 1
            if result.conflict is AppendConflict.REQUEST:
                record = result.request
                assert record is not None
                for request, _ in included:
                    if request.request_id == result.request_id:
                        request.future.set_result(_recorded(record, request.digest))
                return Retry(pause=False)  # the others are still valid; no backoff needed
            # ``base`` was applied here before the append read the store: a store below it
            # went back (a version applied since may be above what the append read).
            went_back = regressed(result.version, base.version, str(self._log))
            if went_back is not None:
                self._service.store_went_back(went_back)
                for request, _ in included:
                    request.future.set_exception(went_back)
                return None
            await catch_up(result, self._schema_sync.clock.update, self._service.catalog_ready)
            self.stats["retries"] += 1
            return Retry()

        def gave_up() -> None:
            for request in waiting:
                if not request.future.done():
                    request.future.set_exception(
                        ConcurrentUpdateError(
                            f"gave up after {self._max_attempts} attempts: other writers kept "
                            "committing first; retry the request"
                        )
                    )

        await append_optimistically(
            round_,
            gave_up,
            max_attempts=self._max_attempts,
            first_s=self._backoff_base_s,
            cap_s=self._backoff_cap_s,
        )

    async def _unchanged(
        self, base: Catalog, included: list[tuple[_Request, tuple[bool, ...]]]
    ) -> bool:
        """Answer requests that changed nothing at ``base``; False when the log moved on.

        Each request id is recorded under a compare-and-set on ``base``'s version; when the
        log has moved on, the unanswered requests are judged again on the newer version.
        """
        for request, applied in included:
            if request.future.done():
                continue
            if request.request_id is not None:
                result = await self._log.record_unchanged(
                    request.request_id, base.version, request.digest
                )
                if result.request is not None:  # the id was recorded meanwhile
                    request.future.set_result(_recorded(result.request, request.digest))
                    continue
                if not result.committed:
                    await self._service.catalog_ready(result.version)
                    return False
            request.future.set_result(_Outcome(base.version, applied, base.activation_ts))
        return True

    async def _each_alone(
        self, included: list[tuple[_Request, tuple[bool, ...]]], error: Exception
    ) -> None:
        """Refuse a lone request with ``error``; commit grouped ones one by one.

        The refusal is definite (nothing was written). Requests grouped together may each be
        fine alone, so only the request that fails by itself hears of it.
        """
        if len(included) == 1:
            included[0][0].future.set_exception(error)
            return
        for request, _ in included:
            await self._commit([request])

    def _validate(
        self, base: Catalog, pending: list[_Request]
    ) -> tuple[list[tuple[_Request, tuple[bool, ...]]], list[EntryBase], list[_Request], Catalog]:
        """Prepare each request on top of the previous ones; refuse the ones that fail.

        Returns the included requests with their applied flags, all their entries, the
        requests deferred to the next round, and the catalog with every entry applied.
        """
        current = base
        included: list[tuple[_Request, tuple[bool, ...]]] = []
        entries: list[EntryBase] = []
        deferred: list[_Request] = []
        seen_ids: set[str] = set()
        for request in pending:
            if request.request_id is not None and (
                request.request_id in seen_ids or len(seen_ids) >= MAX_GROUP_REQUEST_IDS
            ):
                # The same id twice in one version would be one record for two batches: the
                # second waits for the next round, where it is deduplicated. Past a cap, ids
                # wait too: each costs the append three operations (etcd allows 128).
                deferred.append(request)
                continue
            try:
                if request.precondition is not None:
                    request.precondition(current)
                prepared = prepare(current, request.commands, warehouse=self._warehouse)
            except (CatalogError, RecursionError, UnicodeError) as e:
                if included:
                    # It may only clash with a request ahead of it in this version: judge it
                    # again against the published version, the only state a refusal may cite.
                    deferred.append(request)
                elif isinstance(e, CatalogError):
                    request.future.set_result(_Outcome(base.version, error=e))
                else:
                    request.future.set_exception(_unstorable(e))
                continue
            if request.request_id is not None:
                seen_ids.add(request.request_id)
            current = prepared.catalog
            request.entry_count = len(prepared.entries)
            entries.extend(prepared.entries)
            included.append((request, prepared.applied))
        return included, entries, deferred, current

    def _update(
        self,
        base: Catalog,
        included: list[tuple[_Request, tuple[bool, ...]]],
        entries: list[EntryBase],
    ) -> VersionedUpdate:
        return VersionedUpdate(
            version=base.version + 1,
            proposal_ts=self._schema_sync.clock.now(),
            delay_ms=self._schema_sync.delay_ms,
            entries=tuple(entries),
            requests=tuple(
                RequestOutcome(request_id=r.request_id, applied=applied)
                for r, applied in included
                if r.request_id is not None
            ),
            origins=tuple(
                r.origin.model_copy(update={"entries": r.entry_count}) for r, _ in included
            ),
            stamps=True,
        )

    # -- compaction -----------------------------------------------------------------------

    async def compact(self, keep_versions: int) -> int | None:
        """Snapshot so that only the latest ``keep_versions`` versions are retained.

        Returns:
            The new snapshot version, or None when there was nothing to compact.
        """
        if keep_versions < 1:
            raise ValidationError("keep_versions must be at least 1")
        target = self._service.latest_version - keep_versions + 1
        return await self.compact_to(target)

    async def compact_to(
        self, version: int, *, file_grace_ms: int = DEFAULT_GRACE_MS
    ) -> int | None:
        """Snapshot at ``version``: every older version is deleted from the log and the cache.

        No further than the version active at the earliest retention lease's moment
        (``catalog.leases``): that lease is then ``held_back`` (and logged).

        Reads "as of" a moment before ``version``'s activation are refused from then on, so the
        data only they reached is deleted too (``catalog.data.expiry``): the data commits of
        tables no retained version holds at once, and the files that only compactions at least
        ``file_grace_ms`` old made unreachable. Deleting data never fails the compaction: an
        error there is logged.
        """
        asked = version
        version, self.held_back = holding_back(await self.leases.list(), self._service, version)
        if self.held_back is not None:
            _logger.info(
                "compaction to version %s held back to version %s by %s",
                asked,
                version,
                self.held_back.describe(),
            )
        if version <= self._service.earliest_version:
            return None
        # Encoding a large catalog takes a while: a worker thread does it (the catalog is
        # immutable), so commits and reads on the event loop go on meanwhile.
        payload = await asyncio.to_thread(_encoded, self._service.catalog(version))
        if not await self._log.save_snapshot(version, payload):
            return None
        service = self._service
        earlier = [service.catalog(v) for v in range(service.earliest_version, version)]
        service.truncate_before(version)
        retained = [service.catalog(v) for v in range(version, service.latest_version + 1)]
        try:
            await self.expiry.expire(retained, grace_ms=file_grace_ms, earlier=earlier)
        except Exception as e:  # housekeeping: the next compaction tries again
            _logger.warning("compaction at version %s: data expiry failed: %s", version, e)
        return version

    async def close(self) -> None:
        """Refuse new commands and wait for queued ones to finish. Idempotent."""
        self._stopped = True
        flusher, self._flusher = self._flusher, None
        if flusher is not None:
            await asyncio.gather(flusher, return_exceptions=True)


def _encoded(catalog: Catalog) -> list[bytes]:
    """Return ``snapshot_pieces(catalog)``, with the cyclic collector paused meanwhile.

    The encoding allocates a great many short-lived lists, which would set off collections
    of the whole heap (over 100 ms each at 200,000 tables).
    """
    with collector_paused():
        return snapshot_pieces(catalog)


def _unstorable(error: Exception) -> Exception:
    """Return what a request hears when its batch cannot be validated or stored.

    Bad text and runaway nesting are the request's fault (a refusal); anything else is the
    server's, and stays the error it is.
    """
    if isinstance(error, UnicodeError):
        reason = "holds text that is not valid Unicode (e.g. a lone surrogate)"
    elif isinstance(error, RecursionError):
        reason = "nests too deeply to be read"
    else:
        return error
    return ValidationError(f"the batch {reason}; nothing was written")


def _recorded(record: RequestRecord, digest: bytes) -> _Outcome:
    """Return the outcome a request with content ``digest`` gets from its id's record."""
    if not record.same_request(digest):
        outcome = (
            f"committed as version {record.version}" if record.refusal is None else "was refused"
        )
        return _Outcome(record.version, error=request_id_reused(outcome), final=True)
    if record.refusal is None:
        return _Outcome(record.version, committed_by_request=True)
    return _Outcome(record.version, error=decode_refusal(record.refusal), final=True)
