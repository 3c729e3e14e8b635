"""The cluster's identity, and where the store stands: what tells a node its store went back.

A cluster id (a uuid) is written once at ``catalog.cluster``, by the first node to start on
an empty store (or to start on a store from before cluster ids, which then gets one); a
restore writes a new one. A node keeps the id it joined and the versions it applied. The
store only ever moves forward under a running cluster, so a store whose latest version is
below one the node applied, or whose cluster id is not the one it joined, went back in time
(restored from an older copy, wiped, or acknowledged writes lost): the node must stop
(``StoreRegressedError``) rather than follow a log that hands the same version numbers to
other changes.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Protocol

from updatelog import envelope
from updatelog.backoff import send_repeatable
from updatelog.envelope import Kind
from updatelog.errors import StoreRegressedError
from updatelog.keys import KeyLayout, decode_u64
from updatelog.kv import Get, KvStore, Put, absent


class _Log(Protocol):
    store: KvStore
    keys: KeyLayout


@dataclass(frozen=True, slots=True)
class StorePosition:
    """Where the store stands: its latest version and its cluster id (None: not given one)."""

    version: int
    cluster_id: str | None


def new_cluster_id() -> str:
    """Return a fresh cluster id."""
    return str(uuid.uuid4())


def _cluster_id(value: bytes | None) -> str | None:
    return None if value is None else envelope.decode_as(value, Kind.CLUSTER_ID).body.decode()


async def ensure_cluster_id(log: _Log) -> str:
    """Return the store's cluster id, giving it a new one if it has none (compare-and-set).

    Raises:
        StorageUnavailableError: the store did not answer within the bounded retries.
    """
    key = log.keys.cluster
    value = envelope.encode(Kind.CLUSTER_ID, new_cluster_id().encode())
    read = await log.store.txn([], [Get(key)])
    stored = _cluster_id(read.reads[0].value)
    if stored is not None:
        return stored
    result = await send_repeatable(
        log.store, "cluster_id", [absent(key)], [Put(key, value)], [Get(key)]
    )
    found = _cluster_id(value if result.succeeded else result.reads[0].value)
    assert found is not None
    return found


async def store_position(log: _Log) -> StorePosition:
    """Return the store's latest version and cluster id, read together.

    Raises:
        StorageUnavailableError: the store did not answer.
    """
    keys = log.keys
    result = await log.store.txn([], [Get(keys.version), Get(keys.cluster)])
    version_value, cluster_value = (r.value for r in result.reads)
    version = 0
    if version_value is not None:
        version = decode_u64(envelope.decode_as(version_value, Kind.VERSION).body)
    return StorePosition(version, _cluster_id(cluster_value))


def check_position(
    position: StorePosition, applied: int, joined: str, store: str
) -> StoreRegressedError | None:
    """Return the error of a store that went back, or None if it is where it must be.

    Args:
        position: where the store stands, read *after* ``applied`` was read.
        applied: the latest version the node applied.
        joined: the cluster id the node joined.
        store: the store's name, for the message.
    """
    if position.cluster_id is not None and position.cluster_id != joined:
        return StoreRegressedError(
            f"the store {store} is now cluster {position.cluster_id} at version "
            f"{position.version}, not cluster {joined}, which this node joined and applied "
            f"up to version {applied}: it was restored or replaced; restart the node to join "
            "it as its new cluster",
            store_version=position.version,
            applied_version=applied,
        )
    if position.version < applied:
        return StoreRegressedError(
            f"the store {store} is at version {position.version}, below version {applied} "
            "this node applied: it went back in time (restored from an older copy, emptied, "
            "or it lost acknowledged writes); this node serves no changes or latest reads "
            "until it is restarted against the store, as a node of the cluster the store "
            "holds now",
            store_version=position.version,
            applied_version=applied,
        )
    return None


def regressed(store_version: int, applied: int, store: str) -> StoreRegressedError | None:
    """Return the error of a store whose latest version is below ``applied``, else None."""
    return check_position(StorePosition(store_version, None), applied, "", store)
