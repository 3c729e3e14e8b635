"""Where the API's token-signing keys live: one key beside the update log, in its store.

``catalog.auth.keys`` holds the keys (an opaque payload in a ``Kind.AUTH_KEYS`` envelope).
Every node reads them from there and a rotation replaces them by compare-and-set, so every node
verifies every token. They are the API's, not the log's: only this module reads or writes them.
"""

from __future__ import annotations

from updatelog import envelope
from updatelog.backoff import send_repeatable
from updatelog.envelope import Kind
from updatelog.kv import Get, Put, equals
from updatelog.log import UpdateLog


async def load_signing_keys(log: UpdateLog) -> bytes | None:
    """Return the stored signing keys, or None when none were stored yet."""
    (read,) = (await log.store.txn([], [Get(log.keys.auth_keys)])).reads
    return None if read.value is None else envelope.decode_as(read.value, Kind.AUTH_KEYS).body


async def swap_signing_keys(log: UpdateLog, expected: bytes | None, keys: bytes) -> bool:
    """Store ``keys`` if the stored ones are still ``expected`` (None: absent); CAS.

    A repeat after a lost answer reads the key back: holding ``keys`` means it committed.
    """
    key = log.keys.auth_keys
    value = envelope.encode(Kind.AUTH_KEYS, keys)
    old = None if expected is None else envelope.encode(Kind.AUTH_KEYS, expected)
    result = await send_repeatable(
        log.store, "signing keys", [equals(key, old)], [Put(key, value)], [Get(key)]
    )
    return result.succeeded or result.reads[0].value == value
