"""``ManagedProcess``: one OS process with its output in a log file, signalled by its own pid.

The base of an etcd member and of a catalog node process: tests pause, kill and restart them.
A process nobody stopped is stopped when its object is collected or the interpreter exits.
"""

from __future__ import annotations

import os
import signal
import subprocess
import weakref
from collections.abc import Mapping, Sequence
from pathlib import Path

from deploy.etcd_process import stop_process


class ManagedProcess:
    """One OS process started by ``_popen``; its output goes to ``log_path``.

    Args:
        log_path: the file that receives the process's output (appended across restarts).
        stop_timeout_s: how long ``stop`` and ``kill`` wait for the process to end.
    """

    def __init__(self, log_path: Path, stop_timeout_s: float) -> None:
        self.log_path = log_path
        self._stop_timeout_s = stop_timeout_s
        self._proc: subprocess.Popen[bytes] | None = None
        self._finalizer: weakref.finalize[[subprocess.Popen[bytes], float], ManagedProcess] | None
        self._finalizer = None

    @property
    def pid(self) -> int | None:
        """Return the pid of the running process, or None."""
        return self._proc.pid if self._proc is not None and self._proc.poll() is None else None

    def is_running(self) -> bool:
        """Return whether the process is alive."""
        return self.pid is not None

    def _popen(self, command: Sequence[str], env: Mapping[str, str] | None = None) -> None:
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        with self.log_path.open("ab") as log:
            self._proc = subprocess.Popen(
                list(command),
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                env=None if env is None else {**os.environ, **env},
            )
        # A forgotten process must not outlive the interpreter that started it.
        self._finalizer = weakref.finalize(self, stop_process, self._proc, self._stop_timeout_s)

    def _signal(self, signum: int) -> bool:
        if self._proc is None or self._proc.poll() is not None:
            return False
        self._proc.send_signal(signum)
        return True

    def pause(self) -> None:
        """Freeze the process (SIGSTOP): it keeps its sockets but answers nothing."""
        self._signal(signal.SIGSTOP)

    def resume(self) -> None:
        """Let a paused process run again (SIGCONT)."""
        self._signal(signal.SIGCONT)

    def kill(self) -> None:
        """Kill the process with SIGKILL (a crash: no shutdown, data kept)."""
        if self._signal(signal.SIGKILL) and self._proc is not None:
            self._proc.wait(timeout=self._stop_timeout_s)

    def terminate(self) -> None:
        """Ask the process to stop (SIGCONT, then SIGTERM) without waiting for it."""
        if self._signal(signal.SIGCONT):
            self._signal(signal.SIGTERM)

    def stop(self, timeout_s: float | None = None) -> None:
        """Stop the process: SIGTERM, then SIGKILL after ``timeout_s``. Idempotent."""
        if self._proc is not None:
            stop_process(self._proc, self._stop_timeout_s if timeout_s is None else timeout_s)
        if self._finalizer is not None:
            self._finalizer.detach()
            self._finalizer = None

    def log_tail(self, lines: int = 40) -> str:
        """Return the last lines of the process's output, for error messages."""
        try:
            text = self.log_path.read_text(errors="replace")
        except OSError:
            return "(no log)"
        return "\n".join(text.splitlines()[-lines:])
