"""The update log: versioned opaque payloads with CAS append, watch, snapshots and safe time.

Every rule of the log lives once, in ``KvUpdateLog``, over a small key-value seam
(``updatelog.kv``) that two stores implement: etcd and SQLite. What lives beside the log in the
same store (data commits, the node registry, the API's signing keys) is kept by the package that
owns it, over the same seam (``UpdateLog.store``).

May import: the standard library, msgpack and (in ``updatelog.kv_etcd`` only) the etcd client.
Never imports catalog, schemasync, api or spark.
"""

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
from updatelog.sqlite import SqliteUpdateLog
from updatelog.url import EtcdUrl, SqliteUrl, open_log, parse_store_url

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
