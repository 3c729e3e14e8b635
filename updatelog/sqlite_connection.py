"""Threads for ``SqliteUpdateLog``: a connection that owns its thread, and the commit bus.

A thread per connection (rather than a shared pool) keeps each sqlite3 connection on the
thread that opened it, needs no lock around it, and hands each result straight to the caller's
event loop with one ``call_soon_threadsafe``, the cheapest hop there is between a blocking
call and a coroutine. The event loop never runs SQLite code.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import functools
import itertools
import queue
import sqlite3
import threading
from collections.abc import Callable
from typing import TypeVar, cast

from updatelog.errors import FormatError, StorageUnavailableError

T = TypeVar("T")

_Job = tuple[Callable[[sqlite3.Connection], object], Callable[[object, BaseException | None], None]]
_URGENT, _NORMAL, _LAST = 0, 1, 2


class SqliteConnection:
    """One sqlite3 connection on its own thread, which runs the calls given to it in order.

    Urgent calls (``urgent=True``: a small transaction, such as a commit that found the write
    lock taken) go ahead of every queued normal one, so a commit never waits behind a queue of
    large writes, only for the one running.

    SQLite errors come back as update-log errors: ``OperationalError`` (locked past the busy
    timeout, I/O errors, a missing directory) as ``StorageUnavailableError``, a corrupted file
    or one that is not a database as ``FormatError``.

    Args:
        path: the database file.
        busy_timeout_s: how long a statement waits for another connection's lock.

    Raises:
        StorageUnavailableError: the file cannot be opened.
        FormatError: the file is not a database.
    """

    def __init__(self, path: str, busy_timeout_s: float) -> None:
        self.path = path
        self._busy_timeout_s = busy_timeout_s
        self._jobs: queue.PriorityQueue[tuple[int, int, _Job | None]] = queue.PriorityQueue()
        self._order = itertools.count()
        self._closed = False
        self._opened = concurrent.futures.Future[None]()
        self._finished = concurrent.futures.Future[None]()
        thread = threading.Thread(target=self._serve, name=f"sqlite-log:{path}", daemon=True)
        thread.start()
        self._opened.result()

    def _serve(self) -> None:
        try:
            db = guarded(self.path, functools.partial(connect, self.path, self._busy_timeout_s))
        except BaseException as e:
            self._closed = True
            self._opened.set_exception(e)
            self._finished.set_result(None)
            return
        self._opened.set_result(None)
        while (job := self._jobs.get()[2]) is not None:
            fn, done = job
            try:
                result = guarded(self.path, functools.partial(fn, db))
            except BaseException as e:
                done(None, e)
            else:
                done(result, None)
        db.close()
        self._finished.set_result(None)

    def _submit(
        self,
        fn: Callable[[sqlite3.Connection], object],
        done: Callable[[object, BaseException | None], None],
        urgent: bool = False,
    ) -> None:
        if self._closed:
            raise StorageUnavailableError(f"SQLite store {self.path}: the log is closed")
        self._jobs.put((_URGENT if urgent else _NORMAL, next(self._order), (fn, done)))

    def call_sync(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        """Run ``fn(connection)`` on the connection's thread and block until it returns."""
        future = concurrent.futures.Future[T]()

        def done(result: object, error: BaseException | None) -> None:
            if error is not None:
                future.set_exception(error)
            else:
                future.set_result(cast(T, result))

        self._submit(fn, done)
        return future.result()

    async def call(self, fn: Callable[[sqlite3.Connection], T], *, urgent: bool = False) -> T:
        """Run ``fn(connection)`` on the connection's thread and await its result."""
        loop = asyncio.get_running_loop()
        future: asyncio.Future[T] = loop.create_future()

        def resolve(result: object, error: BaseException | None) -> None:
            if future.cancelled():
                return
            if error is not None:
                future.set_exception(error)
            else:
                future.set_result(cast(T, result))

        def done(result: object, error: BaseException | None) -> None:
            # A RuntimeError means the caller's loop is closed: nobody is left to tell.
            with contextlib.suppress(RuntimeError):
                loop.call_soon_threadsafe(resolve, result, error)

        self._submit(fn, done, urgent)
        return await future

    async def transaction(
        self, fn: Callable[[sqlite3.Connection], T], *, write: bool, urgent: bool = False
    ) -> T:
        """Run ``fn`` in one transaction: ``BEGIN IMMEDIATE`` for writes, a snapshot for reads."""
        return await self.call(functools.partial(in_transaction, fn, write), urgent=urgent)

    def close(self) -> concurrent.futures.Future[None]:
        """Refuse new calls; the thread runs the queued ones, then closes the connection.

        Returns:
            A future that is done once the connection is closed. Idempotent.
        """
        if not self._closed:
            self._closed = True
            self._jobs.put((_LAST, next(self._order), None))
        return self._finished


def connect(path: str, busy_timeout_s: float, *, any_thread: bool = False) -> sqlite3.Connection:
    """Open ``path`` in autocommit mode with durable commits (``synchronous=FULL``).

    Deleted content is zeroed only on pages a transaction writes anyway
    (``secure_delete=FAST``): zeroing every page a deletion frees (the default of some
    builds, Debian's among them) wrote each deleted update and snapshot chunk to the
    write-ahead log a second time, five times the cost of the deletions after a snapshot.

    Args:
        path: the database file.
        busy_timeout_s: how long a statement waits for another connection's lock.
        any_thread: allow calls from threads other than this one (the caller serializes them).
    """
    db = sqlite3.connect(
        path, timeout=busy_timeout_s, isolation_level=None, check_same_thread=not any_thread
    )
    try:
        db.execute("PRAGMA synchronous=FULL")
        db.execute("PRAGMA secure_delete=FAST")
    except BaseException:
        db.close()
        raise
    return db


def guarded(path: str, fn: Callable[[], T]) -> T:
    """Run ``fn`` and turn SQLite's errors into update-log errors (see ``SqliteConnection``)."""
    try:
        return fn()
    except sqlite3.OperationalError as e:
        # The store is not available now; the caller may retry later.
        raise StorageUnavailableError(f"SQLite store {path}: {e}") from e
    except sqlite3.DatabaseError as e:
        # Only the base class means a corrupted file or not a database; subclasses such
        # as ProgrammingError are bugs and keep their own type.
        if type(e) is not sqlite3.DatabaseError:
            raise
        raise FormatError(f"SQLite store {path} is not a readable database: {e}") from e


def in_transaction(fn: Callable[[sqlite3.Connection], T], write: bool, db: sqlite3.Connection) -> T:
    """Run ``fn(db)`` between BEGIN (IMMEDIATE when ``write``) and COMMIT; roll back on error.

    Args:
        fn: the transaction's body.
        write: take the write lock up front, so the transaction never fails to upgrade.
        db: the connection.

    Returns:
        What ``fn`` returned.
    """
    db.execute("BEGIN IMMEDIATE" if write else "BEGIN")
    try:
        result = fn(db)
    except BaseException:
        if db.in_transaction:
            db.execute("ROLLBACK")
        raise
    # WAL commits are atomic: a failing COMMIT leaves nothing behind, so unlike a network
    # store there is no ambiguous outcome to read back.
    db.execute("COMMIT")
    return result


class CommitBus:
    """Wakes this process's watchers of a file when any connection in the process commits.

    Watchers are ``threading.Event`` objects, so a commit on any thread or event loop wakes a
    watcher's thread directly.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._waiters: dict[str, set[threading.Event]] = {}

    def subscribe(self, path: str, waiter: threading.Event) -> None:
        """Wake ``waiter`` on every commit published for ``path``."""
        with self._lock:
            self._waiters.setdefault(path, set()).add(waiter)

    def unsubscribe(self, path: str, waiter: threading.Event) -> None:
        """Stop waking ``waiter``."""
        with self._lock:
            waiters = self._waiters.get(path)
            if waiters is not None:
                waiters.discard(waiter)
                if not waiters:
                    del self._waiters[path]

    def publish(self, path: str) -> None:
        """Tell every watcher of ``path`` that something was committed."""
        with self._lock:
            waiters = list(self._waiters.get(path, ()))
        for waiter in waiters:
            waiter.set()
