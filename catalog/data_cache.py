"""``DataCommitCache``: the decoded data commits of the tables a node reads, kept up to date.

A table's data commits are numbered from 1 without gaps and never rewritten (only deleted
together, once no retained catalog version holds the table), so a node that read commits
1..K of a table reads only the ones after K next time: a read or a commit costs what came in
since, not the table's whole history. Their timestamps grow with their numbers (each commit
raises the log's safe time to its own, and the next must exceed it), so the commits visible
at T are a prefix, found by bisection.

The tables read least recently are forgotten once the cached commits name more than
``max_files`` files together; the table being read is always kept.
"""

from __future__ import annotations

import bisect
from collections import OrderedDict
from dataclasses import dataclass, field

from catalog.data_files import DataCommit, decode_data_commit
from catalog.data_log import DataCommitLog

DEFAULT_MAX_FILES = 200_000
"""How many files the cached commits of all tables may name together (about 1 KB each)."""


@dataclass(slots=True)
class _Series:
    commits: list[DataCommit] = field(default_factory=list)
    stamps: list[int] = field(default_factory=list)  # commit_ts of each, for bisection
    files: int = 0

    @property
    def latest(self) -> int:
        return self.commits[-1].seq if self.commits else 0

    def extend(self, commits: list[DataCommit]) -> int:
        """Append the commits after the latest held; return how many files they name.

        A concurrent read of the same table may have appended some of them already.
        """
        added = 0
        for commit in commits:
            if commit.seq == self.latest + 1:
                self.commits.append(commit)
                self.stamps.append(commit.commit_ts)
                added += len(commit.files)
        self.files += added
        return added


class DataCommitCache:
    """Data commits per table, read from the log incrementally (see the module doc).

    Args:
        log: the data commit log to read.
        max_files: how many files the cached commits may name together before the tables
            read least recently are forgotten.
    """

    def __init__(self, log: DataCommitLog, *, max_files: int = DEFAULT_MAX_FILES) -> None:
        if max_files < 0:
            raise ValueError("max_files must be 0 or more")
        self._log = log
        self._max_files = max_files
        self._tables: OrderedDict[int, _Series] = OrderedDict()
        self._files = 0

    async def recorded(self, table_id: int) -> list[DataCommit]:
        """Return every data commit of the table the log holds now, in order.

        Raises:
            StorageUnavailableError: the log could not be reached.
        """
        return list((await self._refreshed(table_id)).commits)

    async def up_to(self, table_id: int, ts: int) -> list[DataCommit]:
        """Return the table's commits the log holds now with ``commit_ts <= ts``, in order."""
        series = await self._refreshed(table_id)
        return series.commits[: bisect.bisect_right(series.stamps, ts)]

    async def _refreshed(self, table_id: int) -> _Series:
        series = self._tables.get(table_id)
        if series is None:
            series = self._tables[table_id] = _Series()
        else:
            self._tables.move_to_end(table_id)
        entries = await self._log.read(table_id, series.latest)
        added = series.extend([decode_data_commit(e.payload) for e in entries])
        if self._tables.get(table_id) is series:  # not forgotten meanwhile
            self._files += added
            self._evict(keep=table_id)
        return series

    def _evict(self, *, keep: int) -> None:
        while self._files > self._max_files and len(self._tables) > 1:
            table_id, series = next(iter(self._tables.items()))
            if table_id == keep:
                self._tables.move_to_end(table_id)
                continue
            del self._tables[table_id]
            self._files -= series.files

    def forget(self, table_id: int) -> None:
        """Drop what is held of a table (its commits were deleted from the log)."""
        series = self._tables.pop(table_id, None)
        if series is not None:
            self._files -= series.files
