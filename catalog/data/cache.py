"""``DataCommitCache``: the decoded data commits of the tables a node reads, kept up to date.

A table's data commits are numbered from 1 without gaps, and a commit is rewritten only to
merge the ones before it into it (at expiry, long after any read could tell them apart), so a
node that read commits 1..K of a table reads only the ones after K next time: a read or a
commit costs what came in since, not the table's whole history. What it reads may start with
a merged commit; that one then replaces what the node held. Their timestamps grow
with their numbers (each commit raises the log's safe time to its own, and the next must
exceed it), so the commits visible at T are a prefix, found by bisection.

The tables read least recently are forgotten once the cached commits weigh more than
``max_weight`` together (a commit weighs one, plus one per file it adds or removes); the table
being read is always kept, and a table without commits is never kept.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass, field

from catalog.data.files import DataCommit, committed_by, decode_data_commit
from catalog.data.log import DataCommitLog
from catalog.errors import CatalogError, ErrorCode
from schemasync.clock import describe_ts

DEFAULT_MAX_WEIGHT = 200_000
"""How much the cached commits of all tables may weigh together: commits plus the files they
add or remove (about 1 KB each)."""


@dataclass(slots=True)
class _Series:
    commits: list[DataCommit] = field(default_factory=list)
    weight: int = 0

    @property
    def latest(self) -> int:
        return self.commits[-1].seq if self.commits else 0

    def extend(self, commits: list[DataCommit]) -> int:
        """Append the commits after the latest held; return how much the weight grew.

        A concurrent read of the same table may have appended some of them already. A merged
        commit stands for every commit before it: one past the latest held replaces them.
        """
        before = self.weight
        for commit in commits:
            latest = self.latest
            if commit.seq > latest and commit.merged:
                self.commits, self.weight = [], 0
            elif commit.seq != latest + 1:
                continue
            self.commits.append(commit)
            self.weight += 1 + len(commit.files) + len(commit.removed or ())
        return self.weight - before


class DataCommitCache:
    """Data commits per table, read from the log incrementally (see the module doc).

    Args:
        log: the data commit log to read.
        max_weight: how much the cached commits may weigh together (see the module doc)
            before the tables read least recently are forgotten.
    """

    def __init__(self, log: DataCommitLog, *, max_weight: int = DEFAULT_MAX_WEIGHT) -> None:
        if max_weight < 0:
            raise ValueError("max_weight must be 0 or more")
        self._log = log
        self._max_weight = max_weight
        self._tables: OrderedDict[int, _Series] = OrderedDict()
        self._weight = 0

    async def recorded(self, table_id: int) -> list[DataCommit]:
        """Return every data commit of the table the log holds now, in order.

        Raises:
            StorageUnavailableError: the log could not be reached.
        """
        return list((await self._refreshed(table_id)).commits)

    async def up_to(self, table_id: int, ts: int) -> list[DataCommit]:
        """Return the table's commits the log holds now with ``commit_ts <= ts``, in order.

        Raises:
            CatalogError: VERSION_COMPACTED, the commits before ``ts`` were merged into a
                later one (a node reads that far back only until it notices the compaction).
            StorageUnavailableError: the log could not be reached.
        """
        series = await self._refreshed(table_id)
        commits = series.commits
        if commits and commits[0].merged and ts < commits[0].commit_ts:
            raise CatalogError(
                f"the data commits of table {table_id} up to {describe_ts(commits[0].commit_ts)} "
                f"were merged when the catalog was compacted; a read as of {describe_ts(ts)} "
                "can no longer be answered",
                code=ErrorCode.VERSION_COMPACTED,
            )
        return commits[: committed_by(commits, ts)]

    async def _refreshed(self, table_id: int) -> _Series:
        series = self._tables.get(table_id)
        if series is not None:
            self._tables.move_to_end(table_id)
        else:
            series = _Series()
        entries = await self._log.read(table_id, series.latest)
        added = series.extend([decode_data_commit(e.payload) for e in entries])
        if not series.commits:
            return series  # nothing to keep: any id can be asked for
        held = self._tables.get(table_id)
        if held is series:
            self._weight += added
        elif held is None:  # a first read, or forgotten meanwhile: held (again) whole
            self._tables[table_id] = series
            self._weight += series.weight
        else:  # a concurrent first read's is held
            return series
        self._evict(keep=table_id)
        return series

    def _evict(self, *, keep: int) -> None:
        while self._weight > self._max_weight and len(self._tables) > 1:
            table_id, series = next(iter(self._tables.items()))
            if table_id == keep:
                self._tables.move_to_end(table_id)
                continue
            del self._tables[table_id]
            self._weight -= series.weight
