"""``EtcdUpdateLog``: the update log on etcd (the distributed store)."""

from __future__ import annotations

from collections.abc import Sequence

from updatelog.etcd_credentials import ANONYMOUS, EtcdCredentials
from updatelog.kv_etcd import DEFAULT_MAX_REQUEST_BYTES, EtcdKvStore
from updatelog.kv_log import DEFAULT_REQUEST_TTL_S, KvUpdateLog


class EtcdUpdateLog(KvUpdateLog):
    """A ``KvUpdateLog`` over an ``EtcdKvStore``; the same rules as on SQLite.

    Args:
        endpoints, credentials, timeout_s, max_request_bytes: the etcd connection, as for
            ``EtcdKvStore``; values over ``max_request_bytes`` go as chunks.
        prefix: key prefix, so several catalogs can share one etcd.
        relist_interval_s: how often a watch re-reads the log to catch up after a silent hang.
        request_ttl_s: how long a request id keeps its outcome.
    """

    def __init__(
        self,
        endpoints: Sequence[tuple[str, int]],
        *,
        prefix: str = "",
        credentials: EtcdCredentials = ANONYMOUS,
        timeout_s: float = 5.0,
        relist_interval_s: float = 1.5,
        max_request_bytes: int = DEFAULT_MAX_REQUEST_BYTES,
        request_ttl_s: float = DEFAULT_REQUEST_TTL_S,
    ) -> None:
        self.kv = EtcdKvStore(
            endpoints,
            credentials=credentials,
            timeout_s=timeout_s,
            max_request_bytes=max_request_bytes,
        )
        super().__init__(
            self.kv,
            prefix=prefix,
            relist_interval_s=relist_interval_s,
            request_ttl_s=request_ttl_s,
        )
        self.endpoints = self.kv.endpoints
        self.timeout_s = timeout_s

    def interrupt_watch_streams(self) -> int:
        """Cancel every open watch stream, as a dropped connection would; return how many."""
        return self.kv.interrupt_watch_streams()
