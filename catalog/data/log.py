"""The log of data commits, over the update log's key-value seam and its safe-time rule.

A data commit of a table (``catalog.data.<T>.commit.<K>``) is one transaction that requires the
table's latest commit to be ``K - 1``, ``catalog.safe_time`` below the commit timestamp and the
request id unrecorded, and then raises the safe time to it. So once the safe time has reached T,
no data commit at or before T can appear any more: a read at T that lists the commits is exact.
The commits of a table no retained catalog version holds are dropped at compaction. Request
records (``catalog.data.request.<id>``) expire like the log's: past the window a retry is a new
commit, and the log's garbage collection deletes them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from catalog.data.keys import DataKeys
from schemasync.clock import hlc
from updatelog import envelope, kv, requests
from updatelog.backoff import send_repeatable
from updatelog.envelope import Kind
from updatelog.keys import VERSION_DIGITS, check_int, prefix_range_end
from updatelog.log import AppendConflict, AppendResult, LogEntry, RequestRecord, UpdateLog

_TABLES_PAGE = 256
"""How many keys ``DataCommitLog.tables`` reads at a time."""

_READS_PER_TXN = 128
"""How many keys ``DataCommitLog.latest_commits`` reads in one transaction (etcd's default
``--max-txn-ops``)."""


def _int(value: bytes | None, kind: Kind) -> int:
    return 0 if value is None else envelope.decode_int(value, kind)


@dataclass(frozen=True, slots=True)
class Together:
    """One data commit of ``DataCommitLog.commit_together``.

    Args:
        table_id, seq, payload, request_id, digest: as for ``DataCommitLog.commit``.
    """

    table_id: int
    seq: int
    payload: bytes
    request_id: str
    digest: bytes = b""


@dataclass(frozen=True, slots=True)
class Refusal:
    """Why ``DataCommitLog.commit_together`` committed nothing.

    Attributes:
        safe_time: the log's safe time.
        latest: each table's latest commit number, in the order sent.
        recorded: whether each commit's request id is already recorded.
    """

    safe_time: int
    latest: tuple[int, ...]
    recorded: tuple[bool, ...]


def encode_int(kind: Kind, value: int) -> bytes:
    """Return ``value`` as a stored integer of ``kind``."""
    return envelope.encode_int(kind, value)


class DataCommitLog:
    """The data commits of one catalog in one store.

    Args:
        log: the update log whose store, key layout and request window the commits share.
    """

    def __init__(self, log: UpdateLog) -> None:
        self.store: kv.KvStore = log.store
        self.keys = DataKeys(log.keys)
        self.safe_time_key = log.keys.safe_time
        # Data commits' request records expire as the log's do: its collection sweeps them.
        log.collect_requests_under(self.keys.request_prefix)
        self.request_ttl_ms = log.request_ttl_ms

    def settled_before(self, now_ms: int) -> int:
        """Return the hybrid timestamp below which no data commit's request id still answers.

        That is on a clock that reads ``now_ms``. A request record counts its window from when
        it was written, just after its commit's time was chosen: a tenth of the window more (a
        second at the least) allows for that.
        """
        ttl = self.request_ttl_ms
        return hlc(max(0, now_ms - ttl - max(ttl // 10, 1000)))

    async def commit(
        self,
        table_id: int,
        seq: int,
        payload: bytes,
        commit_ts: int,
        request_id: str,
        digest: bytes = b"",
    ) -> AppendResult:
        """Record data commit ``seq`` of a table under the safe-time rule (see UpdateLog).

        Sending it again after a lost answer is harmless: the request id then answers.
        """
        check_int("seq", seq, 1)
        check_int("commit_ts", commit_ts, 1)
        keys = self.keys
        seq_key, request_key = keys.seq(table_id), keys.request(request_id)
        reads = [kv.Get(seq_key), kv.Get(self.safe_time_key), kv.Get(request_key)]
        safe_time = envelope.encode_int(Kind.SAFE_TIME, commit_ts)
        one = Together(table_id, seq, payload, request_id, digest)
        replace: bytes | None = None  # an expired record of the id, overwritten at most once
        while True:
            compares, puts = self._ops(one, requests.wall_ms() + self.request_ttl_ms, replace)
            result = await send_repeatable(
                self.store,
                "commit_data",
                [kv.less_or_absent(self.safe_time_key, safe_time), *compares],
                [kv.Put(self.safe_time_key, safe_time), *puts],
                reads,
            )
            if result.succeeded:
                return AppendResult(True, seq, commit_ts)
            recorded = result.reads[2].value
            if recorded is None or recorded == replace:
                break
            record = requests.decode_record(recorded)
            if not requests.is_expired(record, requests.wall_ms()) or replace is not None:
                current = _int(result.reads[0].value, Kind.VERSION)
                safe = _int(result.reads[1].value, Kind.SAFE_TIME)
                return requests.request_conflict(current, safe, request_id, record)
            replace = recorded
        current = _int(result.reads[0].value, Kind.VERSION)
        safe = _int(result.reads[1].value, Kind.SAFE_TIME)
        if current != seq - 1:
            return AppendResult(False, current, safe, AppendConflict.VERSION)
        return AppendResult(False, current, safe, AppendConflict.SAFE_TIME)

    async def commit_together(self, commits: Sequence[Together], commit_ts: int) -> Refusal | None:
        """Record data commits of different tables in one transaction, all at ``commit_ts``.

        Each must be the next of its table and its request id unrecorded; the safe time must be
        below ``commit_ts``, and is raised to it. Nothing is retried here: a lost answer raises
        ``UnknownOutcomeError``, and the request ids then tell, one commit at a time, which
        landed.

        Returns:
            None when they committed, else what stood in the way (``Refusal``).

        Raises:
            ValueError: two commits of one table, or with one request id.
        """
        check_int("commit_ts", commit_ts, 1)
        keys = self.keys
        if len({c.table_id for c in commits}) != len(commits) or len(
            {c.request_id for c in commits}
        ) != len(commits):
            raise ValueError("commits sent together must be of different tables and requests")
        expires = requests.wall_ms() + self.request_ttl_ms
        safe_time = envelope.encode_int(Kind.SAFE_TIME, commit_ts)
        compares = [kv.less_or_absent(self.safe_time_key, safe_time)]
        success: list[kv.Op] = [kv.Put(self.safe_time_key, safe_time)]
        reads = [kv.Get(self.safe_time_key)]
        for c in commits:
            more_compares, puts = self._ops(c, expires, None)
            compares += more_compares
            success += puts
            reads += [kv.Get(keys.seq(c.table_id)), kv.Get(keys.request(c.request_id))]
        result = await self.store.txn(compares, success, reads)
        if result.succeeded:
            return None
        return Refusal(
            _int(result.reads[0].value, Kind.SAFE_TIME),
            tuple(_int(read.value, Kind.VERSION) for read in result.reads[1::2]),
            tuple(read.value is not None for read in result.reads[2::2]),
        )

    def _ops(
        self, commit: Together, expires: int, replace: bytes | None
    ) -> tuple[list[kv.Compare], list[kv.Op]]:
        """Return what recording ``commit`` compares and puts, the safe time left out.

        ``replace``: the expired record of the request id it overwrites (None: the id must be
        unrecorded).
        """
        keys = self.keys
        seq, seq_key = commit.seq, keys.seq(commit.table_id)
        request_key = keys.request(commit.request_id)
        previous = (
            kv.absent(seq_key)
            if seq == 1
            else kv.equals(seq_key, encode_int(Kind.VERSION, seq - 1))
        )
        return [previous, kv.equals(request_key, replace)], [
            kv.Put(keys.commit(commit.table_id, seq), envelope.encode(Kind.UPDATE, commit.payload)),
            kv.Put(seq_key, encode_int(Kind.VERSION, seq)),
            kv.Put(request_key, requests.encode_committed(seq, expires, commit.digest)),
        ]

    async def read(self, table_id: int, after: int = 0) -> list[LogEntry]:
        """Return the data commits of a table numbered above ``after``, in order.

        A commit is rewritten only to merge the ones before it into it (``merge``), and a read
        at or after it sees the same through either, so a reader that keeps what it read asks
        only for the ones after the last it holds; the first it gets may be a merged one,
        numbered past ``after + 1``.
        """
        first, end = self.keys.commit_range(table_id)
        start = self.keys.commit(table_id, after + 1)
        prefix = len(first) - VERSION_DIGITS
        read = await self.store.range(start, end)
        return [
            LogEntry(int(item.key[prefix:]), envelope.decode_as(item.value, Kind.UPDATE).body)
            for item in read.kvs
        ]

    async def request(self, request_id: str) -> RequestRecord | None:
        """Return what a request id's record says (None: the id is unrecorded)."""
        read = await self.store.txn([], [kv.Get(self.keys.request(request_id))])
        value = read.reads[0].value
        return None if value is None else requests.decode_record(value)

    async def latest(self, table_id: int) -> int:
        """Return the number of the table's latest data commit (0: none yet)."""
        read = await self.store.txn([], [kv.Get(self.keys.seq(table_id))])
        return _int(read.reads[0].value, Kind.VERSION)

    async def latest_commits(self, table_ids: Sequence[int]) -> dict[int, LogEntry]:
        """Return the latest data commit of each of ``table_ids`` that has one.

        Two transactions per 128 tables (their latest numbers, then those commits), so a
        pass over many tables takes a few round trips per hundred of them.
        """
        found: dict[int, LogEntry] = {}
        for first in range(0, len(table_ids), _READS_PER_TXN):
            chunk = table_ids[first : first + _READS_PER_TXN]
            seqs = await self.store.txn([], [kv.Get(self.keys.seq(t)) for t in chunk])
            numbered = [
                (table_id, seq)
                for table_id, read in zip(chunk, seqs.reads, strict=True)
                if (seq := _int(read.value, Kind.VERSION)) > 0
            ]
            if not numbered:
                continue
            gets = [kv.Get(self.keys.commit(table_id, seq)) for table_id, seq in numbered]
            commits = await self.store.txn([], gets)
            for (table_id, seq), read in zip(numbered, commits.reads, strict=True):
                if read.value is not None:
                    body = envelope.decode_as(read.value, Kind.UPDATE).body
                    found[table_id] = LogEntry(seq, body)
        return found

    async def tables(self) -> list[int]:
        """Return the ids of every table that has data commits, in order.

        The keys are read a page at a time, and each page ends by skipping the rest of the
        keys of the table it ends in: a table costs at most one page, however many commits
        it has, and the request records (under the same prefix) are skipped in one step.
        """
        prefix = self.keys.prefix
        start, end = prefix, prefix_range_end(prefix)
        found: set[int] = set()
        while True:
            page = await self.store.keys(start, end, limit=_TABLES_PAGE)
            for key in page:
                table, _, rest = key[len(prefix) :].partition(".")
                if table.isdigit() and (rest == "seq" or rest.startswith("commit.")):
                    found.add(int(table))
            if len(page) < _TABLES_PAGE:
                return sorted(found)
            last = page[-1][len(prefix) :].partition(".")[0]
            start = prefix_range_end(f"{prefix}{last}.")

    async def merge(self, table_id: int, seq: int, stored: bytes, merged: bytes) -> bool:
        """Put ``merged`` in place of data commits 1..``seq`` of a table, in one transaction.

        Args:
            table_id: the table.
            seq: the last commit merged.
            stored: that commit as read (``read``): nothing is written unless it still is.
            merged: the commit that stands for them all (``catalog.data.merge.merged``).

        Returns:
            Whether it was written (False: another merge came first).
        """
        first, _ = self.keys.commit_range(table_id)
        key = self.keys.commit(table_id, seq)
        result = await self.store.txn(
            [kv.equals(key, envelope.encode(Kind.UPDATE, stored))],
            [kv.Delete(first, key), kv.Put(key, envelope.encode(Kind.UPDATE, merged))],
        )
        return result.succeeded

    async def drop(self, table_id: int) -> None:
        """Delete every data commit of ``table_id`` (a table no retained version holds)."""
        start, end = self.keys.commit_range(table_id)
        await self.store.txn([], [kv.Delete(self.keys.seq(table_id)), kv.Delete(start, end)])
