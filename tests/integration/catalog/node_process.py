"""Run ``registry_node_worker`` (a registered node in another OS process) for one test."""

from __future__ import annotations

import contextlib
import os
import select
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
START_TIMEOUT_S = 60.0
STOP_TIMEOUT_S = 15.0


@contextlib.contextmanager
def node_process(url: str, name: str, ttl_s: float) -> Iterator[subprocess.Popen[str]]:
    """Start a node process registered as ``name``; stop it (whatever state it is in) on exit.

    The process is ready (recovered, registered) when this yields. Leaving resumes it if it
    was paused, closes its stdin so that it closes its node, and kills it if it does not stop.
    """
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "tests.integration.catalog.registry_node_worker",
            url,
            name,
            str(ttl_s),
        ],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        ready, _, _ = select.select([proc.stdout], [], [], START_TIMEOUT_S)
        line = proc.stdout.readline() if ready else ""
        if not line.startswith("ready"):
            raise RuntimeError(f"node process {name} did not start: {line!r}")
        yield proc
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGCONT)
        try:
            proc.communicate(timeout=STOP_TIMEOUT_S)  # closes stdin: the worker closes its node
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.communicate(timeout=STOP_TIMEOUT_S)
