"""How many reads of writers' files the server runs at once: per table, and in all.

Reading a commit's manifests is slow work a writer can make slower (up to the limits of
``api.iceberg.avro_reads``), so it runs on threads of its own — never the event loop's, never
the threads every other request shares — and in bounded numbers: at most
``FILE_READS_PER_TABLE`` for one table and ``FILE_READS`` in the server process, so one
table's writers cannot starve another's. A read waits up to ``FILE_READ_WAIT_S`` for a slot
(woken as soon as one is given back);
after that its commit is refused with 503 (nothing written; the client sends it again). A
slot is given back when its thread ends, not when its request does: a request cut short
leaves its read counted until the read's own deadline frees the thread.
"""

from __future__ import annotations

import asyncio
import os
import threading
from collections import Counter
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import ParamSpec, TypeVar

from api.iceberg.errors import unavailable

FILE_READS = 4
"""How many commits' files the server process reads at once."""
FILE_READS_PER_TABLE = 2
"""How many of them may be one table's."""
FILE_READ_WAIT_S = 10.0
"""How long a read waits for a slot before its commit is refused."""

P = ParamSpec("P")
R = TypeVar("R")
_Waiter = tuple[asyncio.AbstractEventLoop, "asyncio.Future[None]"]
"""A read waiting for a slot: its event loop and the future that wakes it."""


def _wake(woken: asyncio.Future[None]) -> None:
    if not woken.done():
        woken.set_result(None)


class FileReads:
    """The slots and threads of the reads of writers' files, keyed by table folder."""

    def __init__(self, limit: int, per_table: int, wait_s: float) -> None:
        self.limit, self.per_table, self.wait_s = limit, per_table, wait_s
        self._lock = threading.Lock()
        self._held: Counter[str] = Counter()
        self._waiters: list[_Waiter] = []
        self._threads = ThreadPoolExecutor(limit, thread_name_prefix="table-file-reads")

    def _take(self, table: str, waiter: _Waiter | None = None) -> bool:
        """Take a slot of ``table``; when none is free, leave ``waiter`` to be woken."""
        with self._lock:
            if self._held.total() >= self.limit or self._held[table] >= self.per_table:
                if waiter is not None:
                    self._waiters.append(waiter)
                return False
            self._held[table] += 1
            return True

    def _give_back(self, table: str) -> None:
        with self._lock:
            self._held[table] -= 1
            if self._held[table] <= 0:
                del self._held[table]
            waiters, self._waiters = self._waiters, []
        for loop, woken in waiters:  # each tries again (on its own event loop)
            loop.call_soon_threadsafe(_wake, woken)

    async def run(self, table: str, fn: Callable[P, R], *args: P.args, **kwargs: P.kwargs) -> R:
        """Run ``fn`` on a reading thread once a slot of ``table`` is free; return its result.

        Raises:
            IcebergError: ServiceUnavailableException when no slot was free in time.
        """
        table = os.path.normpath(table)
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.wait_s
        while True:
            woken: asyncio.Future[None] = loop.create_future()
            if self._take(table, (loop, woken)):
                break
            try:
                await asyncio.wait_for(woken, max(0.0, deadline - loop.time()))
            except TimeoutError:
                raise unavailable(
                    f"the server is reading the files of {self.limit} commits "
                    f"({self.per_table} of one table) and no slot came free within "
                    f"{self.wait_s:g} s; nothing was written: send the commit again"
                ) from None
        try:
            future: Future[R] = self._threads.submit(fn, *args, **kwargs)
        except BaseException:
            self._give_back(table)
            raise
        future.add_done_callback(lambda _: self._give_back(table))
        return await asyncio.wrap_future(future)

    def held(self) -> int:
        """Return how many slots are taken."""
        with self._lock:
            return self._held.total()


file_reads = FileReads(FILE_READS, FILE_READS_PER_TABLE, FILE_READ_WAIT_S)
"""The server process's reads of writers' files."""
