"""``catalog backup`` and ``catalog restore``: a catalog's copy, and a new cluster made from one.

::

    catalog backup --store etcd://10.0.0.5:2379/prod --to prod.backup
    catalog backup --store sqlite:///./data/catalog.db --to then.backup --at 2026-03-04T10:00:00Z
    catalog restore --from prod.backup --store etcd://10.0.0.9:2379/prod

A backup reads the store directly while the cluster keeps taking changes; a restore writes
into an empty store, as a new cluster (see ``catalog.backup``).
"""

from __future__ import annotations

import argparse
import asyncio
from pathlib import Path
from typing import Any

from api.cli.base import UsageError, catalog_version, client_of
from api.cli.output import View, hlc_time
from api.server.moments import parse_timestamp
from catalog.backup.restore import RestoreSummary, restore_backup
from catalog.backup.take import BackupSummary, take_backup
from updatelog.kv_log import KvUpdateLog
from updatelog.url import open_log


def register(sub: Any, client: argparse.ArgumentParser) -> None:
    """Add ``backup`` and ``restore`` to the ``catalog`` commands."""
    backup = sub.add_parser(
        "backup",
        parents=[client],
        help="write a copy of a catalog (read from its store) to a file",
        description="Write a consistent copy of the catalog in --store (its retained versions, "
        "data commits and settings) to --to, while the cluster keeps taking changes.",
    )
    backup.add_argument(
        "--store", help="the catalog's store URL (without it, a server makes it: --url)"
    )
    backup.add_argument("--to", required=True, type=Path, help="the backup file to write")
    moment = backup.add_mutually_exclusive_group()
    moment.add_argument("--version", type=catalog_version, help="back up this retained version")
    moment.add_argument("--at", help="back up as of an RFC 3339 time or a hybrid timestamp")
    backup.set_defaults(handler=cmd_backup)

    restore = sub.add_parser(
        "restore",
        parents=[client],
        help="make a new cluster in an empty store from a backup",
        description="Restore --from into the empty store --store, as a new cluster (a new "
        "cluster id): the catalog at the backup's version has the source's digest.",
    )
    restore.add_argument("--from", dest="source", required=True, type=Path, help="the backup")
    restore.add_argument("--store", required=True, help="the empty store's URL")
    restore.add_argument(
        "--warehouse", help="the warehouse the new cluster names (default: the backup's)"
    )
    restore.set_defaults(handler=cmd_restore)


def cmd_backup(args: argparse.Namespace) -> View:
    """Write a backup (read from the store, or made by a server)."""
    if args.store is None:
        return _backup_from_server(args)
    at = None if args.at is None else parse_timestamp(args.at)

    async def run() -> BackupSummary:
        log = open_log(args.store)
        try:
            return await take_backup(log, args.to, version=args.version, at_ts=at)
        finally:
            await log.close()

    summary = asyncio.run(run())
    body = {
        "file": str(summary.path),
        "version": summary.version,
        "earliest_version": summary.earliest,
        "as_of": hlc_time(summary.at_ts),
        "digest": summary.digest,
        "data_commits": summary.data_commits,
        "bytes": summary.size_bytes,
    }
    return View(body, title=f"backup of version {summary.version} written")


def _backup_from_server(args: argparse.Namespace) -> View:
    """Download a backup from a server (``POST /v1/backup``, the admin role)."""
    with client_of(args) as client:
        version, digest, size = client.backup(args.to, version=args.version, at=args.at)
    body = {"file": str(args.to), "version": version, "digest": digest, "bytes": size}
    return View(body, title=f"backup of version {version} written")


def cmd_restore(args: argparse.Namespace) -> View:
    """Restore a backup into an empty store."""

    async def run() -> RestoreSummary:
        log = open_log(args.store)
        try:
            if not isinstance(log, KvUpdateLog):
                raise UsageError(f"{args.store} is not a store a restore can write")
            return await restore_backup(args.source, log, warehouse=args.warehouse)
        finally:
            await log.close()

    summary = asyncio.run(run())
    body = {
        "cluster_id": summary.cluster_id,
        "version": summary.version,
        "earliest_version": summary.earliest,
        "digest": summary.digest,
        "data_commits": summary.data_commits,
        "missing_files": summary.missing_files,
        "missing_file_count": summary.missing_count,
    }
    return View(body, title=f"restored version {summary.version} as cluster {summary.cluster_id}")
