"""``SqliteUpdateLog``: the update log on one SQLite file (the embedded default)."""

from __future__ import annotations

import os

from updatelog.kv_log import DEFAULT_REQUEST_TTL_S, KvUpdateLog
from updatelog.kv_sqlite import DEFAULT_MAX_REQUEST_BYTES, SqliteKvStore


class SqliteUpdateLog(KvUpdateLog):
    """A ``KvUpdateLog`` over a ``SqliteKvStore``; the same rules as on etcd.

    Args:
        path, busy_timeout_s, poll_interval_s, max_request_bytes: the file and how it is used,
            as for ``SqliteKvStore`` (and with what it raises); larger values go as chunks.
        prefix: key prefix, so several catalogs can share one file.
        request_ttl_s: how long a request id keeps its outcome.
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        prefix: str = "",
        busy_timeout_s: float = 5.0,
        poll_interval_s: float = 0.015,
        max_request_bytes: int = DEFAULT_MAX_REQUEST_BYTES,
        request_ttl_s: float = DEFAULT_REQUEST_TTL_S,
    ) -> None:
        store = SqliteKvStore(
            path,
            busy_timeout_s=busy_timeout_s,
            poll_interval_s=poll_interval_s,
            max_request_bytes=max_request_bytes,
        )
        super().__init__(store, prefix=prefix, request_ttl_s=request_ttl_s)
        self.path = store.path
