"""The update log: versioned opaque payloads with CAS append, watch, snapshots and safe time.

Every rule of the log lives once, in ``KvUpdateLog``, over a small key-value seam
(``updatelog.kv``) that two stores implement: etcd and SQLite. What lives beside the log in the
same store (data commits, the node registry, the API's signing keys) is kept by the package that
owns it, over the same seam (``UpdateLog.store``).

May import: the standard library, msgpack and (in ``updatelog.kv_etcd*`` only) the etcd client.
Never imports catalog, schemasync, api or spark. The stores and store URLs load on first use,
so that a program that only needs the errors and models (the REST client) opens no database.
"""

import importlib
from typing import TYPE_CHECKING, Any

from updatelog.errors import (
    FormatError,
    InvalidStoreUrlError,
    LogCompactedError,
    SettingsMismatchError,
    StorageUnavailableError,
    StoreQuotaExceededError,
    UnknownOutcomeError,
    UpdateLogError,
    UpdateTooLargeError,
    VersionConflictError,
)
from updatelog.kv_log import KvUpdateLog
from updatelog.log import (
    AppendConflict,
    AppendResult,
    ClusterSettings,
    LogEntry,
    RequestRecord,
    SafeTimeAdvanced,
    SafeTimeResult,
    SnapshotRequired,
    UpdateLog,
    WatchEvent,
)

if TYPE_CHECKING:
    from updatelog.sqlite import SqliteUpdateLog
    from updatelog.url import EtcdUrl, SqliteUrl, open_log, parse_store_url

_ON_FIRST_USE = {
    "SqliteUpdateLog": "updatelog.sqlite",
    "EtcdUrl": "updatelog.url",
    "SqliteUrl": "updatelog.url",
    "open_log": "updatelog.url",
    "parse_store_url": "updatelog.url",
}


def __getattr__(name: str) -> Any:
    module = _ON_FIRST_USE.get(name)
    if module is None:
        raise AttributeError(f"module 'updatelog' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)


__all__ = [
    "AppendConflict",
    "AppendResult",
    "ClusterSettings",
    "EtcdUrl",
    "FormatError",
    "InvalidStoreUrlError",
    "KvUpdateLog",
    "LogCompactedError",
    "LogEntry",
    "RequestRecord",
    "SafeTimeAdvanced",
    "SafeTimeResult",
    "SettingsMismatchError",
    "SnapshotRequired",
    "SqliteUpdateLog",
    "SqliteUrl",
    "StorageUnavailableError",
    "StoreQuotaExceededError",
    "UnknownOutcomeError",
    "UpdateLog",
    "UpdateLogError",
    "UpdateTooLargeError",
    "VersionConflictError",
    "WatchEvent",
    "open_log",
    "parse_store_url",
]
