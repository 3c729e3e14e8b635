"""Server processes for benchmarks: a real ``catalog serve``, or one of ``bench.serve_api``'s.

Each runs as its own process on a free loopback port, so the load generator and the server do
not share an interpreter; ``stop`` ends it by its own process id.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import httpx

from deploy.etcd_process import stop_process
from deploy.etcd_server import free_port

ROOT = Path(__file__).resolve().parents[1]


def start(
    argv: list[str],
    port: int,
    ready_path: str,
    env: dict[str, str] | None = None,
    cpu: int | None = None,
) -> tuple[subprocess.Popen[bytes], str]:
    """Run ``python <argv>`` and wait until ``ready_path`` answers 200 on ``port``.

    ``cpu`` pins the process to that core (``taskset``, which execs the server under the
    same process id).

    Raises:
        RuntimeError: the server did not answer within 60 s.
    """
    pin = ["taskset", "-c", str(cpu)] if cpu is not None else []
    proc = subprocess.Popen(
        [*pin, sys.executable, *argv],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT), **(env or {})},
    )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and proc.poll() is None:
        try:
            if httpx.get(url + ready_path, timeout=1).status_code == 200:
                return proc, url
        except httpx.TransportError:
            pass
        time.sleep(0.1)
    stop(proc)
    raise RuntimeError(f"server {' '.join(argv)} did not start")


def serve_catalog(
    store: str, env: dict[str, str] | None = None
) -> tuple[subprocess.Popen[bytes], str]:
    """Start ``catalog serve`` on ``store`` with no schema-sync delay; return it and its URL."""
    port = free_port()
    argv = ["-m", "api.cli", "serve", "--store", store, "--host", "127.0.0.1"]
    argv += ["--port", str(port), "--node-name", "bench", "--delay-ms", "0"]
    argv += ["--max-clock-skew-ms", "0", "--log-level", "warning"]
    return start(argv, port, "/readyz", env)


def serve_api(mode: str, arg: str, cpu: int | None = None) -> tuple[subprocess.Popen[bytes], str]:
    """Start ``bench.serve_api`` in ``mode`` (``catalog`` or ``bare``), pinned to ``cpu`` if
    given; return it and its URL."""
    port = free_port()
    argv = ["-m", "bench.serve_api", mode, str(port), arg]
    return start(argv, port, "/openapi.json", cpu=cpu)


def stop(proc: subprocess.Popen[bytes]) -> None:
    """Stop a server started here: terminate, then kill if it does not exit."""
    stop_process(proc, timeout_s=10)
