"""One ``append``: its compare-and-set, and how an answer (or a lost answer) is read.

The transaction compares ``catalog.version == N - 1`` (absent for N = 1), ``catalog.safe_time <
u`` (or absent) and that each request key is absent — or still holds the expired record seen
last time, which it then replaces: past its expiry a request id is free again. It puts the
update (or its manifest), the version, the safe time and the request records.

Conflicts are reported in this order: a live request record (so a retried request learns its
outcome), then the version, then the safe time. After an attempt whose answer was lost, or
that etcd answered "full" (it applies the write that crosses its quota and says so anyway),
the update key holding exactly our bytes means that attempt committed.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Protocol

from updatelog import envelope, requests
from updatelog.backoff import Backoff
from updatelog.envelope import Kind
from updatelog.errors import (
    StorageUnavailableError,
    StoreQuotaExceededError,
    UnknownOutcomeError,
    UpdateTooLargeError,
)
from updatelog.keys import KeyLayout
from updatelog.kv import Get, KvStore, Put, Read, absent, equals, less_or_absent
from updatelog.log import AppendConflict, AppendResult, RequestIds

_MAX_BACKOFF_S = 0.25


class _Log(Protocol):
    """What an append needs of its log."""

    store: KvStore
    keys: KeyLayout
    request_ttl_ms: int


@dataclass(frozen=True, slots=True)
class _State:
    version: int
    safe_time: int
    update: bytes | None
    snapshot: int
    records: dict[str, bytes]


class Append:
    """The state of one ``KvUpdateLog.append`` call."""

    def __init__(
        self,
        log: _Log,
        version: int,
        stored: bytes,
        proposal_ts: int,
        request_ids: RequestIds,
    ) -> None:
        self.log = log
        self.keys = keys = log.keys
        self.version = version
        self.stored = stored
        self.proposal_ts = proposal_ts
        by_id = request_ids if isinstance(request_ids, Mapping) else dict.fromkeys(request_ids, b"")
        self.request_keys = {keys.request(rid): rid for rid in by_id}
        self.digests = {keys.request(rid): digest for rid, digest in by_id.items()}
        self.replace: dict[str, bytes] = {}  # expired records this attempt overwrites
        self.update_key = keys.update(version)
        self.reads = [
            Get(keys.version),
            Get(keys.safe_time),
            Get(self.update_key),
            Get(keys.snapshot_version),
            *(Get(k) for k in self.request_keys),
        ]

    def _state(self, reads: list[Read]) -> _State:
        records = {
            key: value
            for key, read in zip(self.request_keys, reads[4:], strict=True)
            if (value := read.value) is not None
        }
        return _State(
            envelope.decode_int(reads[0].value, Kind.VERSION) if reads[0].value else 0,
            envelope.decode_int(reads[1].value, Kind.SAFE_TIME) if reads[1].value else 0,
            reads[2].value,
            envelope.decode_int(reads[3].value, Kind.VERSION) if reads[3].value else 0,
            records,
        )

    def _outcome(self, state: _State, *, ambiguous: bool) -> AppendResult | None:
        """Return what a failed attempt (or a read-back) shows, or None to send again."""
        safe = state.safe_time
        if ambiguous and state.update == self.stored:
            return AppendResult(True, self.version, max(safe, self.proposal_ts))
        now = requests.wall_ms()
        for key, rid in self.request_keys.items():
            raw = state.records.get(key)
            if raw is None:
                continue
            record = requests.decode_record(raw)
            if requests.is_expired(record, now):
                self.replace[key] = raw
                continue
            return requests.request_conflict(state.version, safe, rid, record)
        if state.version != self.version - 1:
            return AppendResult(False, state.version, safe, AppendConflict.VERSION)
        if safe >= self.proposal_ts:
            return AppendResult(False, state.version, safe, AppendConflict.SAFE_TIME)
        return None

    async def run(self) -> AppendResult:
        """Send the append until it commits, conflicts, or the store stays silent too long."""
        log, keys, version = self.log, self.keys, self.version
        backoff = Backoff(log.store.timeout_s, cap_s=_MAX_BACKOFF_S)
        ambiguous = False
        # Each pass either ends, or follows a lost answer (bounded by the deadline), or an
        # expired request record to replace (each is replaced at most once).
        while True:
            if ambiguous:
                try:
                    read = await log.store.txn([], self.reads)
                except StorageUnavailableError as e:
                    raise StorageUnavailableError(f"{e.message}; it may have committed") from e
                state = self._state(read.reads)
                decided = self._outcome(state, ambiguous=True)
                if state.update is not None and decided is not None:
                    return decided
                if state.update is None and state.snapshot > version:
                    # A snapshot took update N before we could look: no telling whose it was.
                    raise StorageUnavailableError(
                        f"{log}: the answer to the append of version {version} was lost and "
                        "the log was compacted past it since; it may have committed"
                    )
            expires = requests.wall_ms() + log.request_ttl_ms
            safe_time = envelope.encode_int(Kind.SAFE_TIME, self.proposal_ts)
            compares = [
                absent(keys.version)
                if version == 1
                else equals(keys.version, envelope.encode_int(Kind.VERSION, version - 1)),
                less_or_absent(keys.safe_time, safe_time),
                *(equals(k, self.replace.get(k)) for k in self.request_keys),
            ]
            success = [
                Put(self.update_key, self.stored),
                Put(keys.version, envelope.encode_int(Kind.VERSION, version)),
                Put(keys.safe_time, safe_time),
                *(
                    Put(k, requests.encode_committed(version, expires, digest))
                    for k, digest in self.digests.items()
                ),
            ]
            try:
                result = await log.store.txn(compares, success, self.reads)
            except (UpdateTooLargeError, StoreQuotaExceededError) as e:
                if isinstance(e, UpdateTooLargeError) and not ambiguous:
                    raise  # definite: refused before it was proposed, and the only attempt
                # etcd applies the write that crosses its quota and answers "full" all the
                # same; an earlier attempt whose answer was lost may have landed too: look.
                state = self._state((await log.store.txn([], self.reads)).reads)
                if state.update == self.stored:
                    return AppendResult(True, version, max(state.safe_time, self.proposal_ts))
                if not ambiguous:
                    raise  # nothing of this append was written
                raise StorageUnavailableError(
                    f"{log}: append of version {version}: {e.message}; an earlier attempt "
                    "whose answer was lost may still commit"
                ) from e
            except UnknownOutcomeError as e:
                ambiguous = True
                if backoff.exhausted():
                    raise StorageUnavailableError(
                        f"{log}: append of version {version} got no answer within "
                        f"{log.store.timeout_s:g}s ({e.message}); it may have committed"
                    ) from e
                await backoff.pause()
                continue
            if result.succeeded:
                return AppendResult(True, version, self.proposal_ts)
            replaced = dict(self.replace)
            decided = self._outcome(self._state(result.reads), ambiguous=ambiguous)
            if decided is not None:
                return decided
            if self.replace == replaced:
                if backoff.exhausted():
                    raise StorageUnavailableError(f"{log}: append of version {version} kept racing")
                await backoff.pause()
