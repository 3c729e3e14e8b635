"""``DataCommitGroup``: a node's concurrent data commits of different tables, sent together.

Every data commit raises the log's one safe time, and must be stamped above it. Sent one by
one from many writers at once, commits stamped a moment apart overtake each other and most
fail on the safe time (with 64 tables committing at once on etcd, about 2.4 failed
transactions for every commit that landed). So a node sends one transaction at a time: the
commits that came in while one was on its way go together in the next, stamped with one
timestamp, one commit per table (a second commit of the same table waits for the next
transaction, so a table's commits keep distinct, growing timestamps).

A transaction that fails only on the safe time (another node's commit got there first) is
stamped again and sent again. One that a table's numbering or a request id refuses is sent
again one commit at a time, so each writer hears its own answer (conflict, earlier commit of
the same request, or storage failure), exactly as a commit made alone would.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field

from catalog.data_files import DataCommit, encode_data_commit
from catalog.data_log import DataCommitLog, Together
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
            later: list[_Pending] = []
            tables: set[int] = set()
            for pending in self._queue:
                if pending.table_id in tables or len(group) >= MAX_TOGETHER:
                    later.append(pending)
                else:
                    group.append(pending)
                    tables.add(pending.table_id)
            self._queue = later
            try:
                if len(group) == 1:
                    await self._alone(group[0])
                else:
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

    async def _together(self, group: list[_Pending]) -> None:
        for _ in range(_RESTAMPS):
            ts = self._clock.now()
            commits = [pending.build(ts) for pending in group]
            payloads = [encode_data_commit(commit) for commit in commits]
            kept = _within(payloads, self._max_bytes)
            if kept < len(group):  # the rest go first in the next transaction
                self._queue[:0] = group[kept:]
                group, commits, payloads = group[:kept], commits[:kept], payloads[:kept]
                if kept == 1:
                    break
            together = [
                Together(p.table_id, p.seq, payload, p.request_id, p.digest)
                for p, payload in zip(group, payloads, strict=True)
            ]
            self.stats["transactions"] += 1
            try:
                conflict, safe_time = await self._log.commit_together(together, ts)
            except Exception:  # each commit learns its own outcome below
                break
            if conflict is None:
                self.stats["together"] += len(group)
                for pending, commit in zip(group, commits, strict=True):
                    _answer(pending, (AppendResult(True, pending.seq, ts), commit))
                return
            if conflict is not AppendConflict.SAFE_TIME:
                break
            self._clock.update(safe_time)
        self.stats["one_by_one"] += len(group)
        for pending in group:
            await self._alone(pending)


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
