"""``seed_log``: write a whole log into an empty store, as a restore does.

The log's own writes only ever extend a log; a restore writes one from nothing: the updates
(and the snapshot they follow) first, a few per transaction, large ones as chunks, then one
last transaction that makes the log exist: the settings, the cluster id, the snapshot version,
the latest version and the safe time, only if the store still holds no catalog. Until that
transaction a node sees an empty store; after it, the whole log. A node that initialised the
store meanwhile makes the last transaction fail, and the seed says so.
"""

from __future__ import annotations

from collections.abc import Sequence

from updatelog import envelope
from updatelog.envelope import Kind
from updatelog.errors import UpdateLogError
from updatelog.kv import Op, Put, absent
from updatelog.kv_log import KvUpdateLog
from updatelog.log import ClusterSettings, LogEntry

OPS_PER_TXN = 64
"""The most puts one seeding transaction carries (etcd takes 128 operations at most)."""


class StoreNotEmptyError(UpdateLogError):
    """The store holds a catalog (or one was started in it while seeding): nothing to seed."""

    code = "STORE_NOT_EMPTY"


async def check_empty(log: KvUpdateLog) -> None:
    """Check the store holds no key of this catalog at all.

    Raises:
        StoreNotEmptyError: it holds some.
    """
    start, end = log.keys.all_range
    if await log.store.keys(start, end, limit=1):
        raise StoreNotEmptyError(
            f"{log} already holds a catalog: a restore goes into an empty store (a new one, "
            "or another key prefix)"
        )


async def seed_log(
    log: KvUpdateLog,
    *,
    settings: ClusterSettings,
    cluster_id: str,
    snapshot: LogEntry | None,
    updates: Sequence[LogEntry],
    safe_time: int,
) -> None:
    """Write a log holding ``snapshot`` (if any) and ``updates`` into an empty store.

    The caller checks the store is empty first (``check_empty``) and may write what lives
    beside the log (data commits) before the log itself.

    Raises:
        StoreNotEmptyError: a node initialised the store meanwhile.
        StorageUnavailableError: the store could not be reached.
    """
    keys = log.keys
    puts: list[Op] = []
    size = 0
    for entry in updates:
        value = await _stored(log, Kind.UPDATE, "u", entry)
        puts.append(Put(keys.update(entry.version), value))
        size += len(value)
        if len(puts) >= OPS_PER_TXN or size >= log.chunks.chunk_bytes:
            await log.store.txn([], puts)
            puts, size = [], 0
    if puts:
        await log.store.txn([], puts)
    last = updates[-1].version if updates else snapshot.version if snapshot else 0
    final: list[Op] = [
        Put(keys.settings, envelope.encode_settings(settings)),
        Put(keys.cluster, envelope.encode(Kind.CLUSTER_ID, cluster_id.encode())),
        Put(keys.safe_time, envelope.encode_int(Kind.SAFE_TIME, safe_time)),
        Put(keys.version, envelope.encode_int(Kind.VERSION, last)),
    ]
    if snapshot is not None:
        value = await _stored(log, Kind.SNAPSHOT, "s", snapshot)
        final += [
            Put(keys.snapshot(snapshot.version), value),
            Put(keys.snapshot_version, envelope.encode_int(Kind.VERSION, snapshot.version)),
        ]
    result = await log.store.txn([absent(keys.version), absent(keys.settings)], final)
    if not result.succeeded:
        raise StoreNotEmptyError(
            f"a node initialised {log} while it was being restored: stop every node on it, "
            "empty it, and restore again"
        )


async def _stored(log: KvUpdateLog, kind: Kind, letter: str, entry: LogEntry) -> bytes:
    """Return what to store for ``entry``: its envelope, or its chunks' manifest."""
    framed = envelope.encode_pieces(kind, [entry.payload])
    if sum(len(piece) for piece in framed) <= log.chunks.chunk_bytes:
        return b"".join(framed)
    return await log.chunks.write(letter, entry.version, framed)
