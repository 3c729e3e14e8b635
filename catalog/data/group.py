"""``DataCommitGroup``: a node's concurrent data commits of different tables, sent together.

Every data commit raises the log's one safe time, and must be stamped above it. Sent one by
one from many writers at once, commits stamped a moment apart overtake each other and most
fail on the safe time (with 64 tables committing at once on etcd, about 2.4 failed
transactions for every commit that landed). So a node sends one transaction at a time: the
commits that came in while one was on its way go together in the next, stamped with one
timestamp, one commit per table (a second commit of the same table waits for the next
transaction, so a table's commits keep distinct, growing timestamps).

A transaction that fails is answered commit by commit: one whose table has moved on (another
node committed to it) goes back to its writer as that conflict, one whose request id is already
recorded is sent alone (it learns whether that was its own earlier attempt), and the others
are stamped again above the safe time and sent together again. A transaction whose answer was
lost is sent again one commit at a time, all at once, so each writer hears its own answer
(earlier commit of the same request, conflict, or storage failure), exactly as a commit made
alone would. A writer that stopped waiting before its commit was sent is left out.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field

from catalog.data.files import DataCommit, encode_data_commit
from catalog.data.log import DataCommitLog, Together
from schemasync.clock import Clock
from updatelog.log import AppendConflict, AppendResult

MAX_TOGETHER = 32
"""The most commits in one transaction (etcd allows 128 operations; each takes three)."""

_RESTAMPS = 5  # sends of one group that lost only on the safe time, before going one by one


@dataclass(slots=True)
class _Pending:
    table_id: int
    seq: int
    build: Callable[[int], DataCommit]
    request_id: str
    digest: bytes
    future: asyncio.Future[tuple[AppendResult, DataCommit]] = field(
        default_factory=lambda: asyncio.get_running_loop().create_future()
    )


class DataCommitGroup:
    """Sends a node's data commits, several tables' in one transaction (see the module doc).

    Args:
        log: the data commit log.
        clock: the node's hybrid clock (commit timestamps).
        max_bytes: the most payload bytes one transaction carries.
    """

    def __init__(self, log: DataCommitLog, clock: Clock, *, max_bytes: int) -> None:
        self._log = log
        self._clock = clock
        self._max_bytes = max_bytes
        self._queue: list[_Pending] = []
        self._flusher: asyncio.Task[None] | None = None
        self.stats = {"transactions": 0, "together": 0, "one_by_one": 0}

    async def commit(
        self,
        table_id: int,
        seq: int,
        build: Callable[[int], DataCommit],
        request_id: str,
        digest: bytes,
    ) -> tuple[AppendResult, DataCommit]:
        """Send commit ``seq`` of a table, built by ``build(commit_ts)``; return the answer.

        Returns:
            What ``DataCommitLog.commit`` answered, and the commit as sent.

        Raises:
            StorageUnavailableError: as ``DataCommitLog.commit``.
        """
        pending = _Pending(table_id, seq, build, request_id, digest)
        self._queue.append(pending)
        if self._flusher is None or self._flusher.done():
            self._flusher = asyncio.create_task(self._flush())
        return await pending.future

    async def _flush(self) -> None:
        while self._queue:
            group: list[_Pending] = []
            waiting: list[_Pending] = []
            tables: set[int] = set()
            request_ids: set[str] = set()
            for pending in self._queue:
                if pending.future.done():  # its writer stopped waiting: not sent at all
                    continue
                if (
                    pending.table_id in tables
                    or pending.request_id in request_ids
                    or len(group) >= MAX_TOGETHER
                ):
                    waiting.append(pending)
                else:
                    group.append(pending)
                    tables.add(pending.table_id)
                    request_ids.add(pending.request_id)
            self._queue = waiting
            try:
                if len(group) == 1:
                    await self._alone(group[0])
                elif group:
                    await self._together(group)
            except Exception as e:  # not the log's answer: a fault here, told to each writer
                for pending in group:
                    _answer(pending, e)

    async def _alone(self, pending: _Pending) -> None:
        ts = self._clock.now()
        commit = pending.build(ts)
        self.stats["transactions"] += 1
        try:
            result = await self._log.commit(
                pending.table_id,
                pending.seq,
                encode_data_commit(commit),
                ts,
                pending.request_id,
                pending.digest,
            )
        except Exception as e:
            _answer(pending, e)
        else:
            _answer(pending, (result, commit))

    async def _each_alone(self, group: list[_Pending]) -> None:
        """Send each commit in its own transaction, at once (they are of different tables)."""
        self.stats["one_by_one"] += len(group)
        await asyncio.gather(*(self._alone(pending) for pending in group))

    async def _together(self, group: list[_Pending]) -> None:
        alone: list[_Pending] = []
        for _ in range(_RESTAMPS):
            ts = self._clock.now()
            commits = [pending.build(ts) for pending in group]
            payloads = [encode_data_commit(commit) for commit in commits]
            kept = _within(payloads, self._max_bytes)
            if kept < len(group):  # the rest go first in the next transaction
                self._queue[:0] = group[kept:]
                group, commits, payloads = group[:kept], commits[:kept], payloads[:kept]
            if len(group) == 1:
                break
            together = [
                Together(p.table_id, p.seq, payload, p.request_id, p.digest)
                for p, payload in zip(group, payloads, strict=True)
            ]
            self.stats["transactions"] += 1
            try:
                refusal = await self._log.commit_together(together, ts)
            except Exception:  # each commit learns its own outcome below
                break
            if refusal is None:
                self.stats["together"] += len(group)
                for pending, commit in zip(group, commits, strict=True):
                    _answer(pending, (AppendResult(True, pending.seq, ts), commit))
                group = []
                break
            self._clock.update(refusal.safe_time)
            retry: list[_Pending] = []
            for pending, commit, latest, recorded in zip(
                group, commits, refusal.latest, refusal.recorded, strict=True
            ):
                if recorded:  # sent alone, it learns whether that was its own earlier try
                    alone.append(pending)
                elif latest != pending.seq - 1:  # its writer decides: the next number, or stop
                    conflict = AppendConflict.VERSION
                    result = AppendResult(False, latest, refusal.safe_time, conflict)
                    _answer(pending, (result, commit))
                else:
                    retry.append(pending)
            group = retry
            if len(group) < 2:
                break
        await self._each_alone(alone + group)


def _answer(pending: _Pending, answer: tuple[AppendResult, DataCommit] | Exception) -> None:
    """Give a writer its answer, unless it stopped waiting (cancelled) or has one."""
    if pending.future.done():
        return
    if isinstance(answer, Exception):
        pending.future.set_exception(answer)
    else:
        pending.future.set_result(answer)


def _within(payloads: list[bytes], max_bytes: int) -> int:
    """Return how many of the first payloads fit in ``max_bytes`` together (at least one)."""
    total = 0
    for count, payload in enumerate(payloads):
        total += len(payload)
        if total > max_bytes and count > 0:
            return count
    return len(payloads)
