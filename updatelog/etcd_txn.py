"""The transactions of ``EtcdUpdateLog``: what each operation compares, writes and reads back.

Every function here builds a callable that takes the etcd client (``pyetcd``'s, passed in, never
imported here) and sends exactly one transaction. ``updatelog.etcd`` runs them in worker
threads, retries them and turns their results into the ``UpdateLog`` answers.

etcd's value comparison is always false on a missing key, so "absent or less than" is sent as
one of two compares (``create_revision == 0`` or ``value < x``); a builder takes a guess about
presence and reports the presence it found, so that a wrong guess is sent once more.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from updatelog import envelope, requests
from updatelog.envelope import Kind
from updatelog.errors import FormatError, LogCompactedError
from updatelog.keys import U64_MAX, VERSION_DIGITS, KeyLayout, prefix_range_end
from updatelog.log import AppendConflict, AppendResult, LogEntry, RequestRecord, SafeTimeResult


def check_int(name: str, value: int, low: int) -> None:
    """Raise ValueError unless ``value`` is an int in ``low..U64_MAX``."""
    if type(value) is not int or not low <= value <= U64_MAX:
        raise ValueError(f"{name} must be an integer in {low}..{U64_MAX}, got {value!r}")


@dataclass(frozen=True, slots=True)
class Listing:
    """Updates from one version on, and the log's bounds, all read at one etcd revision."""

    revision: int
    snapshot_version: int
    safe_time: int
    entries: list[LogEntry]
    more: bool


def first_value(response: Any) -> bytes | None:
    """Return the value of a transaction ``Get`` result (a list of (value, meta)), or None."""
    return bytes(response[0][0]) if response else None


def value_at(client: Any, key: str, revision: int) -> bytes | None:
    """Return the value of ``key`` at ``revision``, or None."""
    response = client.get_response(key, revision=revision)
    return bytes(response.kvs[0].value) if response.kvs else None


def decode_int(value: bytes | None, kind: Kind) -> int:
    """Decode an enveloped integer; 0 for a missing key."""
    return 0 if value is None else envelope.decode_int(value, kind)


@dataclass(frozen=True, slots=True)
class AppendState:
    """What an append's outcome depends on, read in one transaction."""

    version: int
    safe_time: int | None
    requests: dict[str, RequestRecord]
    update: bytes | None


class AppendTxn:
    """The transaction of one ``append`` and the reading of its outcome."""

    def __init__(
        self,
        keys: KeyLayout,
        version: int,
        value: bytes,
        proposal_ts: int,
        request_keys: dict[str, str],
    ) -> None:
        self.keys = keys
        self.version = version
        self.value = value
        self.proposal_ts = proposal_ts
        self.request_keys = request_keys

    def _reads(self, t: Any) -> list[Any]:
        keys = self.keys
        return [
            t.get(keys.version),
            t.get(keys.safe_time),
            t.get(keys.update(self.version)),
            *(t.get(k) for k in self.request_keys),
        ]

    def _state(self, responses: list[Any]) -> AppendState:
        version = decode_int(first_value(responses[0]), Kind.VERSION)
        safe = first_value(responses[1])
        recorded: dict[str, RequestRecord] = {}
        for key, response in zip(self.request_keys, responses[3:], strict=True):
            value = first_value(response)
            if value is not None:
                recorded[key] = requests.decode_record(value)
        return AppendState(
            version,
            None if safe is None else envelope.decode_int(safe, Kind.SAFE_TIME),
            recorded,
            first_value(responses[2]),
        )

    def read_state(self, client: Any) -> AppendState:
        """Read everything the outcome depends on, atomically."""
        _, responses = client.transaction(
            compare=[], success=self._reads(client.transactions), failure=[]
        )
        return self._state(responses)

    def txn(self, safe_time_absent: bool) -> Callable[[Any], tuple[bool, AppendState]]:
        """Return the append transaction, guarding the safe time as present or absent."""
        keys, version = self.keys, self.version

        def fn(client: Any) -> tuple[bool, AppendState]:
            t = client.transactions
            compare = [
                t.create(keys.version) == 0
                if version == 1
                else t.value(keys.version) == envelope.encode_int(Kind.VERSION, version - 1),
                t.create(keys.safe_time) == 0
                if safe_time_absent
                else t.value(keys.safe_time)
                < envelope.encode_int(Kind.SAFE_TIME, self.proposal_ts),
                *(t.create(k) == 0 for k in self.request_keys),
            ]
            recorded = requests.encode_committed(version)
            success = [
                t.put(keys.update(version), self.value),
                t.put(keys.version, envelope.encode_int(Kind.VERSION, version)),
                t.put(keys.safe_time, envelope.encode_int(Kind.SAFE_TIME, self.proposal_ts)),
                *(t.put(k, recorded) for k in self.request_keys),
            ]
            ok, responses = client.transaction(
                compare=compare, success=success, failure=self._reads(t)
            )
            if ok:
                return True, AppendState(version, self.proposal_ts, {}, self.value)
            return False, self._state(responses)

        return fn

    def outcome(self, state: AppendState, *, ambiguous: bool) -> AppendResult | None:
        """Return the result a failed transaction (or a read-back) shows, or None to resend.

        After an attempt whose answer was lost, the update at ``version`` holding exactly our
        bytes means that attempt committed.
        """
        safe = state.safe_time or 0
        if ambiguous and state.update == self.value:
            return AppendResult(True, self.version, max(safe, self.proposal_ts))
        for key, rid in self.request_keys.items():
            if key in state.requests:
                return requests.request_conflict(state.version, safe, rid, state.requests[key])
        if state.version != self.version - 1:
            return AppendResult(False, state.version, safe, AppendConflict.VERSION)
        if safe >= self.proposal_ts:
            return AppendResult(False, state.version, safe, AppendConflict.SAFE_TIME)
        return None


def record_refusal_txn(
    keys: KeyLayout, request_id: str, version: int, refusal: bytes
) -> Callable[[Any], AppendResult]:
    """Build the transaction recording ``request_id`` as refused with the log at ``version``.

    It compares ``catalog.version == version`` and that the request id is absent, then puts the
    refusal record. Sending it again after a lost answer is harmless: the second one finds the
    record (our own or another outcome) and reports it as a ``REQUEST`` conflict.
    """
    key = keys.request(request_id)
    stored_version = envelope.encode_int(Kind.VERSION, version)

    def fn(client: Any) -> AppendResult:
        t = client.transactions
        reads = [t.get(keys.version), t.get(keys.safe_time), t.get(key)]
        ok, responses = client.transaction(
            compare=[t.value(keys.version) == stored_version, t.create(key) == 0],
            success=[t.put(key, requests.encode_refused(version, refusal)), *reads],
            failure=reads,
        )
        latest = decode_int(first_value(responses[-3]), Kind.VERSION)
        safe = decode_int(first_value(responses[-2]), Kind.SAFE_TIME)
        if ok:
            return AppendResult(True, latest, safe)
        recorded = first_value(responses[-1])
        if recorded is not None:
            record = requests.decode_record(recorded)
            return requests.request_conflict(latest, safe, request_id, record)
        return AppendResult(False, latest, safe, AppendConflict.VERSION)

    return fn


def commit_data_txn(
    keys: KeyLayout, table_id: int, seq: int, value: bytes, commit_ts: int, request_id: str
) -> Callable[[bool], Callable[[Any], tuple[AppendResult | None, bool]]]:
    """Build the data-commit transaction (``UpdateLog.commit_data``).

    It compares the table's commit number, the safe time (absent or lower, per the guess the
    caller passes in) and that the request id is absent. The callable returns the result (None
    if the guess about the safe time's presence was wrong) and whether the safe time was absent.
    Sending it again after a lost answer is harmless: the request id then answers.
    """
    seq_key, request_key = keys.data_seq(table_id), keys.data_request(request_id)

    def txn(absent: bool) -> Callable[[Any], tuple[AppendResult | None, bool]]:
        def fn(client: Any) -> tuple[AppendResult | None, bool]:
            t = client.transactions
            compare = [
                t.create(seq_key) == 0
                if seq == 1
                else t.value(seq_key) == envelope.encode_int(Kind.VERSION, seq - 1),
                t.create(keys.safe_time) == 0
                if absent
                else t.value(keys.safe_time) < envelope.encode_int(Kind.SAFE_TIME, commit_ts),
                t.create(request_key) == 0,
            ]
            success = [
                t.put(keys.data_commit(table_id, seq), value),
                t.put(seq_key, envelope.encode_int(Kind.VERSION, seq)),
                t.put(keys.safe_time, envelope.encode_int(Kind.SAFE_TIME, commit_ts)),
                t.put(request_key, envelope.encode_int(Kind.REQUEST, seq)),
            ]
            reads = [t.get(seq_key), t.get(keys.safe_time), t.get(request_key)]
            ok, responses = client.transaction(compare=compare, success=success, failure=reads)
            if ok:
                return AppendResult(True, seq, commit_ts), False
            current = decode_int(first_value(responses[0]), Kind.VERSION)
            stored = first_value(responses[1])
            safe = decode_int(stored, Kind.SAFE_TIME)
            recorded = first_value(responses[2])
            if recorded is not None:
                by = envelope.decode_int(recorded, Kind.REQUEST)
                conflict = AppendConflict.REQUEST
                return AppendResult(False, current, safe, conflict, by, request_id), False
            if current != seq - 1:
                return AppendResult(False, current, safe, AppendConflict.VERSION), False
            if stored is not None and safe >= commit_ts:
                return AppendResult(False, current, safe, AppendConflict.SAFE_TIME), False
            return None, stored is None

        return fn

    return txn


def read_data_txn(keys: KeyLayout, table_id: int) -> Callable[[Any], list[LogEntry]]:
    """Build ``read_data``: one range read of a table's data commits."""
    start, end = keys.data_commit_range(table_id)
    prefix = len(start) - VERSION_DIGITS

    def fn(client: Any) -> list[LogEntry]:
        response = client.get_range_response(start, end)
        return [
            LogEntry(
                int(bytes(kv.key).decode()[prefix:]),
                envelope.decode_as(bytes(kv.value), Kind.UPDATE).body,
            )
            for kv in response.kvs
        ]

    return fn


def swap_value_txn(key: str, expected: bytes | None, value: bytes) -> Callable[[Any], bool]:
    """Build a compare-and-swap of one key: put ``value`` if it holds ``expected`` (None: absent).

    Sending it again after a lost answer reports False when the first one committed; callers
    read the key back to tell (it then holds ``value``).
    """

    def fn(client: Any) -> bool:
        t = client.transactions
        guard = t.create(key) == 0 if expected is None else t.value(key) == expected
        ok, responses = client.transaction(
            compare=[guard], success=[t.put(key, value)], failure=[t.get(key)]
        )
        return bool(ok) or first_value(responses[0]) == value

    return fn


def raise_safe_time_txn(
    keys: KeyLayout, ts: int, absent: bool
) -> Callable[[Any], tuple[SafeTimeResult | None, bool]]:
    """Build the transaction that raises ``catalog.safe_time`` to ``ts`` if it is lower.

    The callable returns the resulting safe time and latest version (None if the guess about
    the key's presence was wrong and it must be sent again) and whether the key was absent.
    """
    value = envelope.encode_int(Kind.SAFE_TIME, ts)

    def fn(client: Any) -> tuple[SafeTimeResult | None, bool]:
        t = client.transactions
        guard = t.create(keys.safe_time) == 0 if absent else t.value(keys.safe_time) < value
        reads = [t.get(keys.version), t.get(keys.safe_time)]
        ok, responses = client.transaction(
            compare=[guard], success=[t.put(keys.safe_time, value), *reads], failure=reads
        )
        latest = decode_int(first_value(responses[-2]), Kind.VERSION)
        stored = first_value(responses[-1])
        safe = decode_int(stored, Kind.SAFE_TIME)
        if ok or safe >= ts:
            return SafeTimeResult(max(safe, ts), latest), False
        return None, stored is None

    return fn


def save_snapshot_txn(
    keys: KeyLayout, version: int, payload: bytes, absent: bool, ambiguous: bool
) -> Callable[[Any], tuple[bool | None, bool]]:
    """Build the snapshot transaction: one compare-and-set that also deletes older updates.

    It compares ``catalog.snapshot.version < version`` (or absent, per ``absent``) and
    ``catalog.version >= version``, then puts the snapshot version and the snapshot at
    ``catalog.update.<version>`` and range-deletes every older update key. With ``ambiguous``
    (an earlier attempt got no answer) finding exactly this snapshot in place counts as saved.
    The callable returns True/False, or None to send again, and whether the key was absent.
    """
    value = envelope.encode(Kind.SNAPSHOT, payload)
    stored_version = envelope.encode_int(Kind.VERSION, version)
    below = envelope.encode_int(Kind.VERSION, version - 1)
    first_kept = keys.update(version)

    def fn(client: Any) -> tuple[bool | None, bool]:
        t = client.transactions
        guard = (
            t.create(keys.snapshot_version) == 0
            if absent
            else t.value(keys.snapshot_version) < stored_version
        )
        ok, responses = client.transaction(
            compare=[guard, t.value(keys.version) > below],
            success=[
                t.put(keys.snapshot_version, stored_version),
                t.put(first_kept, value),
                t.delete(keys.update(0), first_kept),
            ],
            failure=[t.get(keys.version), t.get(keys.snapshot_version), t.get(first_kept)],
        )
        if ok:
            return True, False
        latest = decode_int(first_value(responses[0]), Kind.VERSION)
        stored = first_value(responses[1])
        current = decode_int(stored, Kind.VERSION)
        if ambiguous and current == version and first_value(responses[2]) == value:
            return True, False  # the attempt whose answer was lost did commit
        if version <= current or version > latest:
            return False, stored is None
        return None, stored is None

    return fn


def entries_from(keys: KeyLayout, kvs: Any, first: int) -> list[LogEntry]:
    """Decode the update keys of a range read, checking that they are contiguous.

    Raises:
        FormatError: a value is corrupted, or a version is missing in the middle.
    """
    entries: list[LogEntry] = []
    for kv in kvs:
        version = keys.version_of_update(bytes(kv.key).decode("utf-8", "replace"))
        if entries and version != entries[-1].version + 1:
            raise FormatError(f"the log has a gap: version {entries[-1].version + 1} is missing")
        env = envelope.decode_as(bytes(kv.value), Kind.UPDATE, Kind.SNAPSHOT)
        entries.append(LogEntry(version, env.body, env.kind is Kind.SNAPSHOT))
    if entries and entries[0].version < first:
        raise FormatError(f"range read from version {first} returned {entries[0].version}")
    return entries


def read_range(
    keys: KeyLayout, from_version: int, to_version: int | None
) -> Callable[[Any], list[LogEntry]]:
    """Build ``read``: one range read of the update keys, and the snapshot version if needed.

    The snapshot version is read only when the range does not start at ``from_version``, and
    then at the range read's revision, so both describe the same moment.
    """
    start = keys.update(from_version)
    end = prefix_range_end(keys.update_prefix)
    if to_version is not None and to_version + 1 < 10**VERSION_DIGITS:
        end = keys.update(to_version + 1)

    def fn(client: Any) -> list[LogEntry]:
        response = client.get_range_response(start, end)
        entries = entries_from(keys, response.kvs, from_version)
        if entries and entries[0].version == from_version:
            return entries
        at = int(response.header.revision)
        snapshot = decode_int(value_at(client, keys.snapshot_version, at), Kind.VERSION)
        if from_version < snapshot:
            raise LogCompactedError(
                f"version {from_version} was compacted into the snapshot at {snapshot}",
                earliest_version=snapshot,
            )
        if entries:
            raise FormatError(f"the log has a gap: version {from_version} is missing")
        return []

    return fn


def list_updates(keys: KeyLayout, next_version: int, limit: int) -> Callable[[Any], Listing]:
    """Build a watch's re-list: up to ``limit`` updates from ``next_version``, and the bounds.

    The updates are read first; the safe time and snapshot version (adjacent keys, one range)
    are then read at that read's revision, so the listing is one consistent moment that a
    watch can continue from at ``revision + 1``.
    """
    start, end = keys.update(next_version), prefix_range_end(keys.update_prefix)
    meta_start = min(keys.safe_time, keys.snapshot_version)
    meta_end = max(keys.safe_time, keys.snapshot_version) + "\x00"

    def fn(client: Any) -> Listing:
        response = client.get_range_response(start, end, limit=limit)
        revision = int(response.header.revision)
        meta = client.get_range_response(meta_start, meta_end, revision=revision)
        found = {bytes(kv.key).decode("utf-8", "replace"): bytes(kv.value) for kv in meta.kvs}
        return Listing(
            revision,
            decode_int(found.get(keys.snapshot_version), Kind.VERSION),
            decode_int(found.get(keys.safe_time), Kind.SAFE_TIME),
            entries_from(keys, response.kvs, next_version),
            bool(response.more),
        )

    return fn
