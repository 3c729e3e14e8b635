"""A local cluster on loopback ports: a 3-member etcd cluster and N ``catalog serve`` processes.

::

    python -m deploy.local_cluster --nodes 3          # prints the URLs, runs until Ctrl-C

or, from Python (the chaos tests do this)::

    with LocalCluster(nodes=3) as cluster:
        client = CatalogClient(cluster.urls)
        cluster.kill_node(1)          # kill -9 a catalog node
        cluster.etcd.kill(cluster.etcd.leader_index())
        cluster.restart_node(1)

Every process is tracked by pid and stopped by pid (SIGTERM, then SIGKILL after a timeout);
nothing is ever killed by name. Ports are picked free on 127.0.0.1 at start-up.
"""

from __future__ import annotations

import argparse
import contextlib
import secrets
import signal
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path

from deploy.certificates import make_tls_files
from deploy.etcd_server import EtcdCluster, EtcdUser, free_port
from deploy.managed_process import ManagedProcess
from updatelog.keys import KeyLayout

HOST = "127.0.0.1"
START_TIMEOUT_S = 60.0
STOP_TIMEOUT_S = 10.0
_POLL_S = 0.05


class ClusterError(RuntimeError):
    """A process of the local cluster did not start, or did not become ready in time."""


def _ready(url: str, timeout_s: float) -> bool:
    try:
        with urllib.request.urlopen(url + "/readyz", timeout=timeout_s) as response:
            return bool(response.status == 200)
    except (OSError, ValueError):  # refused, reset, 503 (HTTPError is an OSError), bad body
        return False


class CatalogProcess(ManagedProcess):
    """One ``catalog serve`` OS process on a fixed port; restartable on the same port.

    Args:
        name: the node name (``--node-name``).
        port: the port it listens on.
        store: the update-log URL.
        log_path: where its output goes (appended across restarts).
        delay_ms: the cluster's schema sync delay.
        max_clock_skew_ms: the cluster's maximum clock skew.
        env: extra environment variables (e.g. ``CATALOG_CLOCK_OFFSET_MS``).
    """

    def __init__(
        self,
        name: str,
        port: int,
        store: str,
        log_path: Path,
        *,
        delay_ms: int,
        max_clock_skew_ms: int,
        env: Mapping[str, str] | None = None,
    ) -> None:
        super().__init__(log_path, STOP_TIMEOUT_S)
        self.name = name
        self.port = port
        self.store = store
        self.delay_ms = delay_ms
        self.max_clock_skew_ms = max_clock_skew_ms
        self.env = dict(env or {})

    @property
    def url(self) -> str:
        """Return the node's base URL."""
        return f"http://{HOST}:{self.port}"

    def command(self) -> list[str]:
        """Return the command line: ``catalog serve`` run by this interpreter."""
        return [
            sys.executable,
            "-m",
            "api.cli",
            "serve",
            "--store",
            self.store,
            "--host",
            HOST,
            "--port",
            str(self.port),
            "--node-name",
            self.name,
            "--delay-ms",
            str(self.delay_ms),
            "--max-clock-skew-ms",
            str(self.max_clock_skew_ms),
            "--log-level",
            "warning",
        ]

    def spawn(self) -> None:
        """Start the process without waiting for it.

        Raises:
            ClusterError: it is already running.
        """
        if self.pid is not None:
            raise ClusterError(f"catalog node {self.name} is already running")
        self._popen(self.command(), self.env)

    def wait_ready(self, timeout_s: float = START_TIMEOUT_S) -> None:
        """Wait until ``/readyz`` answers 200.

        Raises:
            ClusterError: the process exited or stayed unready for ``timeout_s``.
        """
        deadline = time.monotonic() + timeout_s
        while not _ready(self.url, 1.0):
            if self._proc is None or self._proc.poll() is not None:
                raise ClusterError(f"catalog node {self.name} exited:\n{self.log_tail()}")
            if time.monotonic() > deadline:
                raise ClusterError(
                    f"catalog node {self.name} not ready after {timeout_s:.0f} s:\n"
                    f"{self.log_tail()}"
                )
            time.sleep(_POLL_S)


class LocalCluster:
    """A 3-member etcd cluster and ``nodes`` catalog processes, all on loopback ports.

    Node ``i`` is given every etcd member, listed from member ``i % 3`` on, so the nodes spread
    over the members; ``node_store`` can pin a node to one member instead.

    Args:
        nodes: number of catalog nodes.
        etcd_members: size of the etcd cluster.
        base_dir: where data and logs go (a temporary directory removed on ``stop`` if None).
        delay_ms: the cluster's schema sync delay.
        max_clock_skew_ms: the cluster's maximum clock skew.
        clock_offsets_ms: per node, an offset added to its clock (``CATALOG_CLOCK_OFFSET_MS``).
        prefix: key prefix of the catalog in etcd.
        unsafe_no_fsync: skip fsync in etcd (a process kill still loses nothing acknowledged).
        heartbeat_ms: etcd's Raft heartbeat; small values make elections quick.
        election_ms: etcd's Raft election timeout.
        secure: etcd serves clients over TLS with client certificates (made on the spot
            under ``base_dir/tls``) and checks users: the catalog nodes connect as user
            ``catalog``, who may read and write the catalog's keys only, with the password
            in a file (``base_dir/etcd-catalog.password``) rather than on a command line.
    """

    def __init__(
        self,
        nodes: int = 3,
        *,
        etcd_members: int = 3,
        base_dir: Path | None = None,
        delay_ms: int = 100,
        max_clock_skew_ms: int = 100,
        clock_offsets_ms: Sequence[int] = (),
        prefix: str = "catalog",
        unsafe_no_fsync: bool = True,
        heartbeat_ms: int = 50,
        election_ms: int = 500,
        secure: bool = False,
    ) -> None:
        if nodes < 1:
            raise ValueError("a cluster needs at least one catalog node")
        self._own_dir: tempfile.TemporaryDirectory[str] | None = None
        if base_dir is None:
            self._own_dir = tempfile.TemporaryDirectory(prefix="catalog-cluster-")
            base_dir = Path(self._own_dir.name)
        self.base_dir = base_dir
        self.prefix = prefix
        self.delay_ms = delay_ms
        self.max_clock_skew_ms = max_clock_skew_ms
        self._node_count = nodes
        self._offsets = list(clock_offsets_ms) + [0] * (nodes - len(clock_offsets_ms))
        tls = make_tls_files(base_dir / "tls") if secure else None
        self._user: EtcdUser | None = None
        self._query = ""
        if tls is not None:
            password_file = base_dir / "etcd-catalog.password"
            password = secrets.token_urlsafe(24)
            password_file.touch(mode=0o600)
            password_file.write_text(password)
            key_range = KeyLayout(prefix).all_range
            self._user = EtcdUser("catalog", password, key_range)
            self._query = (
                f"?ca={tls.ca}&cert={tls.client_cert}&key={tls.client_key}"
                f"&user=catalog&password_file={password_file}"
            )
        self.etcd = EtcdCluster(
            etcd_members,
            base_dir=base_dir / "etcd",
            heartbeat_ms=heartbeat_ms,
            election_ms=election_ms,
            unsafe_no_fsync=unsafe_no_fsync,
            tls=tls,
        )
        self.nodes: list[CatalogProcess] = []

    @property
    def store_url(self) -> str:
        """Return the ``etcd://`` URL naming every member, with the catalog's prefix.

        When secure, it names the TLS files, the user and its password file (not the
        password).
        """
        return f"etcd://{','.join(self.etcd.endpoints)}/{self.prefix}{self._query}"

    @property
    def urls(self) -> list[str]:
        """Return every catalog node's base URL."""
        return [n.url for n in self.nodes]

    def node_store(self, index: int, member: int | None = None) -> str:
        """Return the store URL of node ``index``: all members from ``index`` on, or one.

        Args:
            index: the node.
            member: pin the node to this etcd member only (None: every member, rotated).
        """
        endpoints = self.etcd.endpoints
        if member is not None:
            chosen = [endpoints[member]]
        else:
            k = index % len(endpoints)
            chosen = endpoints[k:] + endpoints[:k]
        return f"etcd://{','.join(chosen)}/{self.prefix}{self._query}"

    def start(self) -> LocalCluster:
        """Start etcd, then the catalog nodes, and wait until every node is ready.

        Raises:
            EtcdServerError: etcd did not become healthy.
            ClusterError: a catalog node did not become ready.
        """
        try:
            self.etcd.start()
            if self._user is not None:
                root_password = secrets.token_urlsafe(24)  # nobody needs root afterwards
                self.etcd.members[0].enable_auth(root_password, users=[self._user])
            for i in range(self._node_count):
                env = {"CATALOG_CLOCK_OFFSET_MS": str(self._offsets[i])}
                self.nodes.append(
                    CatalogProcess(
                        f"n{i}",
                        free_port(),
                        self.node_store(i),
                        self.base_dir / "logs" / f"n{i}.log",
                        delay_ms=self.delay_ms,
                        max_clock_skew_ms=self.max_clock_skew_ms,
                        env=env,
                    )
                )
            # The first node initialises the cluster (version 1); the others then join it.
            self.nodes[0].spawn()
            self.nodes[0].wait_ready()
            for node in self.nodes[1:]:
                node.spawn()
            for node in self.nodes[1:]:
                node.wait_ready()
        except BaseException:
            self.stop()
            raise
        return self

    def kill_node(self, index: int) -> None:
        """Kill catalog node ``index`` with SIGKILL."""
        self.nodes[index].kill()

    def stop_node(self, index: int) -> None:
        """Stop catalog node ``index`` gracefully (SIGTERM)."""
        self.nodes[index].stop()

    def restart_node(self, index: int, *, store: str | None = None, wait: bool = True) -> None:
        """Start node ``index`` again on its port (after a kill or stop), optionally elsewhere.

        Args:
            index: the node.
            store: a different store URL for it (e.g. ``node_store(index, member=k)``).
            wait: wait until it is ready.
        """
        node = self.nodes[index]
        node.stop()
        if store is not None:
            node.store = store
        node.spawn()
        if wait:
            node.wait_ready()

    def pause_node(self, index: int) -> None:
        """Freeze catalog node ``index`` (SIGSTOP)."""
        self.nodes[index].pause()

    def resume_node(self, index: int) -> None:
        """Unfreeze catalog node ``index`` (SIGCONT)."""
        self.nodes[index].resume()

    def stop(self) -> None:
        """Stop every catalog node, then etcd, and remove a temporary directory. Idempotent."""
        for node in self.nodes:  # SIGTERM all first, so they shut down side by side
            node.terminate()
        for node in reversed(self.nodes):
            node.stop()
        self.etcd.stop()
        if self._own_dir is not None:
            self._own_dir.cleanup()
            self._own_dir = None

    def describe(self) -> str:
        """Return a few lines naming etcd's endpoints and the catalog URLs."""
        lines = [f"etcd endpoints:  {','.join(self.etcd.endpoints)}"]
        lines.append(f"store URL:       {self.store_url}")
        lines += [f"catalog {n.name}:      {n.url}  (pid {n.pid})" for n in self.nodes]
        lines.append(f"client URL list: CATALOG_URL={','.join(self.urls)}")
        lines.append(f"data and logs:   {self.base_dir}")
        return "\n".join(lines)

    def __enter__(self) -> LocalCluster:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()


@contextlib.contextmanager
def _sigterm_as_interrupt() -> Iterator[None]:
    """Treat SIGTERM like Ctrl-C so ``kill <pid>`` also stops the cluster cleanly.

    Ctrl-C (SIGINT) stops it too even when the command inherited SIGINT ignored, as a
    shell's background job (``... &`` in a script) does: Python then keeps ignoring it.
    """

    def interrupt(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    previous = {s: signal.signal(s, interrupt) for s in (signal.SIGTERM, signal.SIGINT)}
    try:
        yield
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)


def main(argv: Sequence[str] | None = None) -> int:
    """Run a local cluster until Ctrl-C (or SIGTERM); return the exit code."""
    parser = argparse.ArgumentParser(
        prog="python -m deploy.local_cluster",
        description="Start a 3-member etcd cluster and N catalog nodes on loopback ports.",
    )
    parser.add_argument("--nodes", type=int, default=3, help="catalog nodes (default 3)")
    parser.add_argument("--etcd-members", type=int, default=3, help="etcd members (default 3)")
    parser.add_argument("--delay-ms", type=int, default=500, help="schema sync delay (500)")
    parser.add_argument("--max-clock-skew-ms", type=int, default=500, help="max skew (500)")
    parser.add_argument("--data-dir", type=Path, help="keep data and logs here (default: temp)")
    parser.add_argument(
        "--insecure",
        action="store_true",
        help="etcd over plain HTTP without users (default: TLS with client certificates, and "
        "the nodes connect as an etcd user that may touch the catalog's keys only)",
    )
    args = parser.parse_args(argv)
    cluster = LocalCluster(
        args.nodes,
        etcd_members=args.etcd_members,
        base_dir=args.data_dir,
        delay_ms=args.delay_ms,
        max_clock_skew_ms=args.max_clock_skew_ms,
        unsafe_no_fsync=False,
        heartbeat_ms=100,
        election_ms=1000,
        secure=not args.insecure,
    )
    with _sigterm_as_interrupt():
        try:
            cluster.start()
            print(cluster.describe(), flush=True)
            print("running; press Ctrl-C to stop", flush=True)
            while True:
                time.sleep(1.0)
                for node in cluster.nodes:
                    if node.pid is None:
                        print(f"catalog {node.name} exited:\n{node.log_tail()}", file=sys.stderr)
                        return 1
        except KeyboardInterrupt:
            print("stopping", flush=True)
        finally:
            cluster.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
