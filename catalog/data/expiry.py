"""Data no read can reach any more, deleted a while after the catalog is compacted.

A compaction at catalog version V deletes every version before V: a node refuses reads "as of"
a moment before V's activation (its horizon) once it has noticed the snapshot, within its
``follow_interval_s``. From then on no read lists:

- the files of a table no retained version holds (its folder: its location, by default
  ``<warehouse>/table_<id>``; a folder that a table of the latest catalog now has, or that
  holds or is inside one, stays: a table registered from a dropped one's files owns them);
- the files a table's commits at or before the horizon added and then removed or overwrote,
  and that no later commit adds again, nor a snapshot an Iceberg tag or branch names (in any
  retained version) holds, nor one a branch's own snapshots were made on: an engine reads a
  tagged snapshot, or a branch, whatever its age.

But a job that listed its files before (a long Spark job, reading as of an older moment) may
still be reading them. So each compaction records itself in the log (``catalog.data.expiry``:
when, its horizon, the tables it found unreachable), and the files are deleted by a later
compaction, once a recorded one is at least ``grace_ms`` old: a job that listed files before
that one had that long to read them. Compactions recorded less than a tenth of the grace apart
are merged into the later one, which only delays deletions, so the record stays small.

The data commits of unreachable tables are deleted at once (reads no longer list them). Those of
a retained table are merged when its dead files are gone (at once for a table that records no
location: its files are where each job put them, not the catalog's to delete). The commits at
or before the horizon become one (``catalog.data.merge.merged``: the files visible after
them, with the last one's number, time, snapshot id and sequence number; the invariant is in
``catalog.data.iceberg_identity``), so a table that takes a commit every
few seconds keeps about as many records as it took in the grace and the request window, not one
per commit forever; a merge ends at the first tagged commit, so the tag's snapshot stays
itself (its id, its files), and the commits after it stay as they are while the tag does.
Commits whose request ids may still answer on some node are not merged, so a retried request
finds the commit it made; nor are those whose merged record the store would
refuse as too large (they stay, and the round goes on).

Files dead at a horizon stay dead at every later one, so a round that deleted every file dead at
its horizon records that horizon in ``catalog.data.swept``, and the next round reads the commits
only of the tables that have committed since (it reads the latest commit of a hundred tables in
two transactions), deleting only the files that died since, and those whose latest commit is
mergeable but not a merged one: a table that stopped committing is read again once its last
commits can be merged, and every round reads one whose commits a round left (too large to
merge). ``catalog.data.merged`` records how far merging got, so a round with no new horizon and
nothing newly mergeable reads no table at all. A round that could not finish (a
file it could not delete, a table folder this node does not have, a table this node has not
applied yet) records nothing, so the next one does its work again. Deleting files is
housekeeping: a file that cannot be deleted (another process owns the warehouse, or it is on
another machine) is left with a warning in the log, and an error never fails the compaction.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
from collections.abc import Collection, Sequence
from dataclasses import dataclass

from catalog.catalog import Catalog
from catalog.data.files import (
    DataCommit,
    committed_by,
    decode_data_commit,
    encode_data_commit,
    visible_files,
)
from catalog.data.iceberg_identity import snapshot_id_of
from catalog.data.iceberg_refs import branch_bases
from catalog.data.locations import table_locations
from catalog.data.log import DataCommitLog
from catalog.data.merge import merged
from catalog.data.table_files import TableFileError, is_folder, remove_file, remove_folder
from catalog.data.warehouse import folder_of, metadata_folder, overlaps, table_folder
from updatelog import envelope
from updatelog.envelope import Kind
from updatelog.errors import StoreQuotaExceededError, UpdateTooLargeError
from updatelog.kv import Get, Put, absent, equals, less_or_absent
from updatelog.log import LogEntry, UpdateLog

DEFAULT_GRACE_MS = 3_600_000
"""How long a compaction's unreachable files stay, at the least (one hour)."""

_REQUEST_MARGIN = 4096
"""Room left in a store request beside a merged commit (its key, the compare, the framing)."""

_logger = logging.getLogger(__name__)


def dead_files(
    commits: Sequence[DataCommit], horizon_ts: int, tagged: Collection[int] = ()
) -> list[str]:
    """Return the paths no read at or after ``horizon_ts`` can reach, in order.

    Those are the paths the commits at or before ``horizon_ts`` added that are not visible at
    it, nor at a snapshot a tag or branch names (an Iceberg engine reads it whatever its
    age), and that no later commit adds again.

    Args:
        commits: every data commit of a table, in order.
        horizon_ts: the earliest moment still read.
        tagged: the snapshot ids the table's tags and branches name (other than main).
    """
    before = [c for c in commits if c.commit_ts <= horizon_ts]
    kept = {f.path for c in visible_files(before) for f in c.files}
    for i, commit in enumerate(before):
        if snapshot_id_of(commit) in tagged:
            kept.update(f.path for c in visible_files(before[: i + 1]) for f in c.files)
    kept.update(f.path for c in commits if c.commit_ts > horizon_ts for f in c.files)
    dead: dict[str, None] = {}
    for commit in before:
        for f in commit.files:
            if f.path not in kept:
                dead[f.path] = None
    return list(dead)


def remove_files(folder: str, paths: Sequence[str]) -> tuple[int, bool]:
    """Delete ``paths`` (relative to ``folder``) where they exist, through no link.

    Each is reached from the folder one name at a time without following a link
    (``catalog.data.table_files``): a link among them is removed itself, never what it points
    to, and a path through a linked folder is left with a warning (another table's files
    may be behind it).

    Returns:
        How many went, and whether every one is gone now (False when one could not be
        deleted: it is left with a warning in the log).
    """
    removed, complete = 0, True
    for path in paths:
        try:
            if remove_file(folder, path):
                removed += 1
        except TableFileError as e:
            if not e.missing:  # a missing folder: deleted by an earlier compaction
                _logger.warning("data expiry: left %s under %s: %s", path, folder, e)
        except OSError as e:
            _logger.warning("data expiry: could not delete %s/%s: %s", folder, path, e)
            complete = False
    return removed, complete


def remove_table_folder(
    warehouse: str, table_id: int, location: str | None, live: Collection[str]
) -> bool:
    """Delete a dropped table's folders and its metadata files; True when it had a folder.

    Its folders are its location and its warehouse folder ``table_<id>`` (where a table moved
    by ``set-location`` was first; the engine folders a load made may be there), in a local
    folder or on S3 (``catalog.data.table_files``).

    Args:
        warehouse: the cluster's warehouse.
        table_id: the dropped table.
        location: its location when it was not its warehouse folder ``table_<id>``.
        live: the locations of the tables of the latest catalog: a folder overlapping one
            stays (a table registered from the dropped one's metadata file owns its files).

    A local folder reached through a link stays, with a warning: what is behind the link may
    be another table's. Inside a folder, links are removed themselves, never followed.
    """
    with contextlib.suppress(OSError, TableFileError):
        remove_folder(metadata_folder(warehouse, table_id))
    folders = [table_folder(warehouse, table_id)]
    if location:
        folders.insert(0, folder_of(location))
    found = False
    for folder in folders:
        if any(overlaps(folder, other) for other in live):
            continue
        try:
            found = remove_folder(folder) or found
        except TableFileError as e:
            found = True
            _logger.warning("data expiry: left %s: %s", folder, e)
        except OSError as e:
            found = True
            _logger.warning("data expiry: could not delete all of %s: %s", folder, e)
    return found


@dataclass(frozen=True, slots=True)
class Compaction:
    """One compaction as the expiry record keeps it.

    Attributes:
        at_ms: when it was recorded (wall clock, milliseconds since the epoch).
        horizon_ts: the earliest moment read after it.
        dropped: the tables it found no retained version holds.
        locations: those of them whose location was not their warehouse folder
            ``table_<id>``, by id (stored only when there is one, so older records read).
    """

    at_ms: int
    horizon_ts: int
    dropped: tuple[int, ...] = ()
    locations: tuple[tuple[int, str], ...] = ()


def encode_compactions(compactions: Sequence[Compaction]) -> bytes:
    """Return the stored form of ``catalog.data.expiry``."""
    body: list[list[object]] = []
    for c in compactions:
        entry: list[object] = [c.at_ms, c.horizon_ts, list(c.dropped)]
        if c.locations:
            entry.append([[table_id, location] for table_id, location in c.locations])
        body.append(entry)
    return envelope.encode(Kind.UPDATE, json.dumps(body).encode())


def decode_compactions(data: bytes) -> list[Compaction]:
    """Return the compactions of a stored ``catalog.data.expiry``."""
    body = json.loads(envelope.decode_as(data, Kind.UPDATE).body)
    return [
        Compaction(
            int(entry[0]),
            int(entry[1]),
            tuple(entry[2]),
            tuple((int(t), str(loc)) for t, loc in (entry[3] if len(entry) > 3 else ())),
        )
        for entry in body
    ]


class DataExpiry:
    """Deletes the data compactions made unreachable (see the module doc).

    Args:
        log: the update log.
        warehouse: the cluster's warehouse folder; None when it has none (then the folders
            of dropped tables stay, as do the dead files of tables without a location).
        max_clock_skew_ms: the cluster's bound on clock skew (a request id is taken for
            expired only when it is on every node's clock).
    """

    def __init__(self, log: UpdateLog, warehouse: str | None, *, max_clock_skew_ms: int) -> None:
        self._log = log
        self._commits = DataCommitLog(log)
        self._warehouse = warehouse
        self.max_clock_skew_ms = max_clock_skew_ms
        """How far any node's clock may be behind this one's (the cluster's bound)."""
        self.stats = {
            "tables_dropped": 0,
            "folders_deleted": 0,
            "files_deleted": 0,
            "commits_merged": 0,
        }

    async def expire(
        self,
        retained: Sequence[Catalog],
        *,
        grace_ms: int = DEFAULT_GRACE_MS,
        earlier: Sequence[Catalog] = (),
    ) -> None:
        """Record this compaction, and delete what those at least ``grace_ms`` old made unreachable.

        Args:
            retained: the catalog versions kept after the compaction, oldest first (the first
                one's activation is the horizon).
            grace_ms: how old a recorded compaction must be before its files go.
            earlier: the versions the compaction deleted, oldest first (where the locations
                of the tables dropped are found).

        Raises:
            StorageUnavailableError: the log could not be reached.
            FormatError: a stored data commit or record does not decode.
        """
        latest = retained[-1]
        dropped: list[int] = []
        for table_id in await self._commits.tables():
            # Ids only grow: one at or above the latest catalog's generator may be a table
            # created elsewhere since, which this node has not applied yet.
            if table_id < latest.object_id_gen and not any(c.has_table(table_id) for c in retained):
                dropped.append(table_id)
        now_ms = time.time_ns() // 1_000_000
        this = Compaction(
            now_ms, retained[0].activation_ts, tuple(dropped), self._moved(dropped, earlier)
        )
        due = await self._record(this, now_ms - grace_ms, max(1, grace_ms // 10))
        if due is None:
            return  # another node is recording a compaction: it deletes this round
        for table_id in dropped:
            await self._commits.drop(table_id)
            self.stats["tables_dropped"] += 1
        if not due:
            return
        if self._warehouse is not None:
            moved = {t: location for c in due for t, location in c.locations}
            live = table_locations(latest)
            for table_id in sorted({t for c in due for t in c.dropped}):
                if await asyncio.to_thread(
                    remove_table_folder, self._warehouse, table_id, moved.get(table_id), live
                ):
                    self.stats["folders_deleted"] += 1
        horizon = max(c.horizon_ts for c in due)
        await self._log.raise_safe_time(horizon)  # no commit at or before it can come now
        await self._sweep(retained, horizon)

    def _moved(
        self, dropped: Sequence[int], earlier: Sequence[Catalog]
    ) -> tuple[tuple[int, str], ...]:
        """Return the locations of the ``dropped`` tables other than ``table_<id>``, by id."""
        moved: list[tuple[int, str]] = []
        for table_id in dropped:
            holder = next((c for c in reversed(earlier) if c.has_table(table_id)), None)
            location = None if holder is None else holder.table_by_id(table_id).location
            if location is None or self._warehouse is None:
                continue
            if folder_of(location) != table_folder(self._warehouse, table_id):
                moved.append((table_id, location))
        return tuple(moved)

    async def _sweep(self, retained: Sequence[Catalog], horizon: int) -> None:
        """Delete the files dead at ``horizon`` and merge the commits no read tells apart.

        Two marks say how far earlier rounds got: ``catalog.data.swept`` (every file dead at
        it is gone) and ``catalog.data.merged`` (how far merging got; with no later horizon
        either, the round has nothing to do). A table is read again only when it has committed
        since the first, or its latest commit is mergeable and not a merged one (``_to_read``).
        A round that could not finish moves neither.
        """
        latest = retained[-1]
        keys = self._commits.keys
        swept, merged_to = await self._mark(keys.swept), await self._mark(keys.merged)
        now_ms = time.time_ns() // 1_000_000
        settled = self._commits.settled_before(now_ms - self.max_clock_skew_ms)
        limit = max(0, min(horizon, settled - 1))
        if horizon <= swept and limit <= merged_to:
            return
        complete = True
        folders: dict[int, str | None] = {}
        for table_id in await self._commits.tables():
            if latest.has_table(table_id):
                location = latest.table_by_id(table_id).location
                folders[table_id] = None if location is None else folder_of(location)
            elif table_id >= latest.object_id_gen:
                complete = False  # created since this node's latest catalog: not swept here
        if swept:
            # A table with no commit since the last sweep has the same dead files, gone then;
            # it has commits to merge only while its latest mergeable one is not a merged one.
            last = await self._commits.latest_commits(list(folders))
            latest_commits = {t: decode_data_commit(e.payload) for t, e in last.items()}
            folders = {
                table_id: folder
                for table_id, folder in folders.items()
                if table_id in latest_commits and _to_read(latest_commits[table_id], swept, limit)
            }
        for table_id, folder in folders.items():
            tagged = _tagged(retained, table_id)
            complete &= await self._expire_files(table_id, folder, horizon, swept, limit, tagged)
        if complete:
            await self._raise_mark(keys.swept, horizon)
            await self._raise_mark(keys.merged, limit)

    async def _mark(self, key: str) -> int:
        """Return the moment a mark (``catalog.data.swept`` or ``.merged``) is at (0: none)."""
        stored = (await self._log.store.txn([], [Get(key)])).reads[0].value
        return 0 if stored is None else envelope.decode_int(stored, Kind.SAFE_TIME)

    async def _raise_mark(self, key: str, ts: int) -> None:
        """Move a mark up to ``ts`` (never down: another node's round may be ahead)."""
        value = envelope.encode_int(Kind.SAFE_TIME, ts)
        await self._log.store.txn([less_or_absent(key, value)], [Put(key, value)])

    async def _record(
        self, this: Compaction, due_before_ms: int, merge_within_ms: int
    ) -> list[Compaction] | None:
        """Add ``this`` to the record and take out the compactions due; None on a race."""
        key = self._commits.keys.expiry
        stored = (await self._log.store.txn([], [Get(key)])).reads[0].value
        compactions = [] if stored is None else decode_compactions(stored)
        due = [c for c in compactions if c.at_ms <= due_before_ms]
        kept = [c for c in compactions if c.at_ms > due_before_ms]
        if this.at_ms <= due_before_ms:
            due.append(this)
        elif kept and this.at_ms - kept[-1].at_ms < merge_within_ms:
            merged = (*kept[-1].dropped, *this.dropped)
            moved = (*kept[-1].locations, *this.locations)
            kept[-1] = Compaction(this.at_ms, this.horizon_ts, merged, moved)
        else:
            kept.append(this)
        expected = absent(key) if stored is None else equals(key, stored)
        result = await self._log.store.txn([expected], [Put(key, encode_compactions(kept))])
        return due if result.succeeded else None

    async def _expire_files(
        self,
        table_id: int,
        folder: str | None,
        horizon_ts: int,
        swept_ts: int,
        limit_ts: int,
        tagged: Collection[int] = (),
    ) -> bool:
        """Delete the files of ``table_id`` dead at ``horizon_ts`` that were not at ``swept_ts``.

        Once they are gone, its commits no read tells apart any more are merged (``_merge``).
        A table without a folder (it records no location) has its files wherever each job
        put them, which the catalog does not own: they are left, and its commits merged.

        Returns:
            Whether every one is gone (False when one could not be deleted, or the table's
            folder is not on this node).
        """
        entries = await self._commits.read(table_id)
        commits = await asyncio.to_thread(lambda: [decode_data_commit(e.payload) for e in entries])

        def dead() -> list[str]:
            gone = set(dead_files(commits, swept_ts, tagged)) if swept_ts else set()
            return [path for path in dead_files(commits, horizon_ts, tagged) if path not in gone]

        paths = await asyncio.to_thread(dead)
        complete = True
        if paths and folder is not None:
            if not await asyncio.to_thread(is_folder, folder):
                return False  # the warehouse is not on this node: a node that has it deletes them
            removed, complete = await asyncio.to_thread(remove_files, folder, paths)
            self.stats["files_deleted"] += removed
        if complete:  # the files merging forgets are gone: no later round needs to find them
            complete = await self._merge(table_id, commits, entries, limit_ts, tagged)
        return complete

    async def _merge(
        self,
        table_id: int,
        commits: Sequence[DataCommit],
        entries: Sequence[LogEntry],
        limit_ts: int,
        tagged: Collection[int] = (),
    ) -> bool:
        """Put one commit in place of the table's commits at or before ``limit_ts``.

        The limit is at or before the horizon, so no read at or after it tells them apart from
        the one (``merged``), and none before it is served any more; and before the moment the
        request ids of commits stop answering on every node (``_sweep``), so a retried request
        still finds the very commit it made. A merged commit the store would refuse as too
        large is not written: the commits stay.

        Returns:
            False when the store was full (a later round tries again), else True.
        """
        count = committed_by(commits, limit_ts)
        named = [i for i, c in enumerate(commits[:count]) if snapshot_id_of(c) in tagged]
        if named:  # a tagged snapshot stays itself: merge at most up to it (it ends the merge)
            count = named[0] + 1
        if count < 2:
            return True  # nothing to gain: one commit stands for itself
        payload = encode_data_commit(merged(commits[:count]))
        if len(payload) > self._log.store.max_request_bytes - _REQUEST_MARGIN:
            return True
        last = entries[count - 1]
        try:
            done = await self._commits.merge(table_id, last.version, last.payload, payload)
        except UpdateTooLargeError as e:
            _logger.warning("data expiry: table %s keeps its commits unmerged: %s", table_id, e)
            return True
        except StoreQuotaExceededError as e:
            _logger.warning("data expiry: table %s not merged this round: %s", table_id, e)
            return False
        if done:
            self.stats["commits_merged"] += count - (1 if commits[0].merged else 0)
        return True


def _tagged(retained: Sequence[Catalog], table_id: int) -> set[int]:
    """Return the snapshots the table's tags and branches name in any retained version.

    With them, the snapshots of main the lines of snapshots written to other branches were made
    on: those snapshots' files may be files of the branches too.
    """
    tagged: set[int] = set()
    for catalog in retained:
        if catalog.has_table(table_id):
            state = catalog.table_by_id(table_id).iceberg
            if state is not None:
                tagged.update(r.snapshot_id for r in state.refs)
                tagged.update(branch_bases(state.branch_snapshots))
    return tagged


def _to_read(last: DataCommit, swept: int, limit: int) -> bool:
    """Whether a round reads a table whose latest commit is ``last`` (see ``_sweep``).

    Commits are numbered from 1 and a merged one stands for every one before it, so a latest
    commit that is neither the first nor a merged one has others before it to merge with.
    """
    if last.commit_ts > swept:
        return True  # files may have died since the last sweep
    return last.commit_ts <= limit and last.seq > 1 and not last.merged
