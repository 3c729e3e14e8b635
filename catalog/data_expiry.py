"""Data no read can reach any more, deleted when the catalog is compacted.

A compaction at catalog version V deletes every version before V: from then on no read "as of"
a moment before V's activation is answered (``VERSION_COMPACTED``), neither by the catalog nor
by the data commits. So, at a compaction:

- a table no retained version holds loses its data commits and, where the cluster has a
  warehouse, its folder (``<warehouse>/table_<id>``): its files with it;
- a retained table loses the files its commits added and then removed or overwrote, at or
  before the horizon, that no later commit names. The horizon is V's activation, but never
  later than ``file_grace_ms`` ago: a job that listed its files within that time (a long Spark
  job reading as of an older moment) still finds them, as Iceberg's snapshot expiry keeps
  files for a while.

The commit records stay: they are small, and keep every snapshot's number and identity; reads
before the horizon are refused instead. A file that cannot be deleted (another process owns
the warehouse, or it is on another machine) is left, with a warning in the log: deleting is
housekeeping, never a reason to fail the compaction.
"""

from __future__ import annotations

import asyncio
import logging
import shutil
from collections.abc import Sequence
from pathlib import Path

from catalog.catalog import Catalog
from catalog.data_files import DataCommit, decode_data_commit, visible_files
from catalog.data_log import DataCommitLog
from catalog.warehouse import table_folder

DEFAULT_FILE_GRACE_MS = 3_600_000
"""How long a file stays after the commit that removed it, at the least (one hour)."""

log = logging.getLogger(__name__)


def dead_files(commits: Sequence[DataCommit], horizon_ts: int) -> list[str]:
    """Return the paths no read at or after ``horizon_ts`` can reach, in order.

    Those are the paths the commits at or before ``horizon_ts`` added that are not visible at
    it, and that no later commit adds again.

    Args:
        commits: every data commit of a table, in order.
        horizon_ts: the earliest moment still read.
    """
    before = [c for c in commits if c.commit_ts <= horizon_ts]
    kept = {f.path for c in visible_files(before) for f in c.files}
    kept.update(f.path for c in commits if c.commit_ts > horizon_ts for f in c.files)
    dead: dict[str, None] = {}
    for commit in before:
        for f in commit.files:
            if f.path not in kept:
                dead[f.path] = None
    return list(dead)


def remove_files(folder: Path, paths: Sequence[str]) -> int:
    """Delete ``paths`` (relative to ``folder``) where they exist; return how many went."""
    removed = 0
    for path in paths:
        try:
            (folder / path).unlink()
        except FileNotFoundError:
            continue
        except OSError as e:
            log.warning("data expiry: could not delete %s: %s", folder / path, e.strerror)
            continue
        removed += 1
    return removed


def remove_table_folder(warehouse: Path, table_id: int) -> bool:
    """Delete a dropped table's folder in the warehouse; True when there was one to delete."""
    folder = table_folder(warehouse, table_id)
    if not folder.is_dir():
        return False
    try:
        shutil.rmtree(folder)
    except OSError as e:
        log.warning("data expiry: could not delete all of %s: %s", folder, e)
    return True


class DataExpiry:
    """Deletes the data a compaction made unreachable (see the module doc).

    Args:
        log: the data commit log.
        warehouse: the cluster's warehouse folder; None when it has none (then only the
            files of tables that recorded their folder are deleted).
    """

    def __init__(self, log: DataCommitLog, warehouse: str | None) -> None:
        self._log = log
        self._warehouse = None if warehouse is None else Path(warehouse)
        self.stats = {"tables_dropped": 0, "folders_deleted": 0, "files_deleted": 0}

    async def expire(self, retained: Sequence[Catalog], horizon_ts: int) -> None:
        """Delete what no read at or after ``horizon_ts`` reaches.

        Args:
            retained: the catalog versions still kept, oldest first.
            horizon_ts: the earliest moment still read (see the module doc for the grace).

        Raises:
            StorageUnavailableError: the log could not be reached.
        """
        latest = retained[-1]
        for table_id in await self._log.tables():
            # Ids only grow: one at or above the latest catalog's generator may be a table
            # created elsewhere since, which this node has not applied yet.
            if table_id >= latest.object_id_gen:
                continue
            if not any(c.has_table(table_id) for c in retained):
                await self._log.drop(table_id)
                self.stats["tables_dropped"] += 1
                if self._warehouse is not None and await asyncio.to_thread(
                    remove_table_folder, self._warehouse, table_id
                ):
                    self.stats["folders_deleted"] += 1
            elif latest.has_table(table_id):
                location = latest.table_by_id(table_id).location
                if location is not None:
                    await self._expire_files(table_id, Path(location), horizon_ts)

    async def _expire_files(self, table_id: int, folder: Path, horizon_ts: int) -> None:
        commits = [decode_data_commit(e.payload) for e in await self._log.read(table_id)]
        dead = dead_files(commits, horizon_ts)
        if dead:
            self.stats["files_deleted"] += await asyncio.to_thread(remove_files, folder, dead)
