"""``DirectConnection``: short SQLite transactions run on the caller's own thread.

A small transaction costs SQLite a few tens of microseconds plus the commit's fsync; handing it
to a connection thread and back to the event loop costs about as much again. So the store runs
the transactions of the update log's hot path (an append, a safe-time raise, a read of a few
keys) right where they are called, as Redis writes and fsyncs its append-only file on its own
event loop, and keeps its connection thread for everything that may wait:

- a transaction that would wait for a lock is declined at once (the connection's busy timeout
  is zero), rolled back, and the caller sends it to the thread, which waits as configured;
- a transaction that writes more than ``max_bytes`` goes to the thread;
- a commit that took longer than ``slow_s`` (a stalled disk) sends every transaction to the
  thread for the next ``pause_s``, so a slow disk does not hold the event loop; so does a
  large write (``pause``: a snapshot's chunks and the checkpoints after them keep the disk
  busy, and a commit on the event loop would hold it for as long as its fsync waits).

The connection checkpoints the write-ahead log as SQLite does by default, inside the commit
that fills it to 1,000 pages (about 2 ms here, once every ~150 appends): a checkpoint run
beside a stream of commits never catches up with them, and a write-ahead log that is never
reset grows without bound and makes every commit slower. Durability is the store's:
``synchronous=FULL``, a commit is on disk when it returns.
"""

from __future__ import annotations

import functools
import sqlite3
import threading
import time
from collections.abc import Callable
from typing import Final, TypeVar

from updatelog.sqlite_connection import connect, guarded, in_transaction

T = TypeVar("T")

DECLINED: Final = object()
"""What ``DirectConnection.run`` returns when the transaction must go to the thread instead."""

_WAIT_CODES = (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED)


class DirectConnection:
    """One sqlite3 connection used by whichever thread calls ``run`` (one at a time).

    Args:
        path: the database file (already created, in WAL mode).
        max_bytes: the most a transaction may write to run here.
        slow_s: a commit slower than this pauses direct runs for ``pause_s``.
        pause_s: how long transactions go to the thread after a slow commit.
    """

    def __init__(
        self, path: str, *, max_bytes: int = 64 * 1024, slow_s: float = 0.05, pause_s: float = 1.0
    ) -> None:
        self.path = path
        self.max_bytes = max_bytes
        self.slow_s = slow_s
        self.pause_s = pause_s
        self._db: sqlite3.Connection | None = None
        self._lock = threading.Lock()
        self._paused_until = 0.0
        self._closed = False

    def run(self, fn: Callable[[sqlite3.Connection], T], *, write: bool, size: int = 0) -> object:
        """Run ``fn`` in one transaction here, or return ``DECLINED`` (nothing was done).

        Args:
            fn: the transaction's body.
            write: whether it writes (``BEGIN IMMEDIATE``).
            size: about how many bytes it writes.

        Returns:
            What ``fn`` returned, or ``DECLINED``.

        Raises:
            StorageUnavailableError, FormatError: as ``SqliteConnection`` raises them.
        """
        if self._closed or size > self.max_bytes or time.monotonic() < self._paused_until:
            return DECLINED
        if not self._lock.acquire(blocking=False):
            return DECLINED  # another thread is using it: take the usual way
        try:
            if self._db is None:
                self._db = guarded(
                    self.path, functools.partial(connect, self.path, 0, any_thread=True)
                )
            start = time.monotonic()
            try:
                result = guarded(self.path, functools.partial(in_transaction, fn, write, self._db))
            except Exception as e:
                cause = e.__cause__
                if isinstance(cause, sqlite3.OperationalError) and _would_wait(cause):
                    return DECLINED  # rolled back: the thread waits for the lock instead
                raise
            if time.monotonic() - start > self.slow_s:
                self.pause()
            return result
        finally:
            self._lock.release()

    def pause(self) -> None:
        """Decline every transaction for the next ``pause_s`` (the disk is busy elsewhere)."""
        self._paused_until = max(self._paused_until, time.monotonic() + self.pause_s)

    def close(self) -> None:
        """Close the connection; later runs are declined. Idempotent."""
        with self._lock:
            self._closed = True
            if self._db is not None:
                self._db.close()
                self._db = None


def _would_wait(error: sqlite3.OperationalError) -> bool:
    return (getattr(error, "sqlite_errorcode", 0) & 0xFF) in _WAIT_CODES
