"""The update log: versioned opaque payloads with CAS append, watch, snapshots and safe time.

May import: the standard library, msgpack and (in ``updatelog.etcd`` only) the etcd client.
Never imports catalog, schemasync, api or spark.
"""

from updatelog.errors import (
    FormatError,
    InvalidStoreUrlError,
    LogCompactedError,
    SettingsMismatchError,
    StorageUnavailableError,
    UpdateLogError,
    VersionConflictError,
)
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
    "UpdateLog",
    "UpdateLogError",
    "VersionConflictError",
    "WatchEvent",
    "open_log",
    "parse_store_url",
]
