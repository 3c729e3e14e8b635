"""``catalog lease``: take, list and release retention leases (``/v1/leases``).

A job takes a lease on the moment it reads as of, for as long as it runs; while it holds,
compaction and data expiry keep what a read at that moment needs::

    catalog lease take --at 2026-03-04T10:00:00Z --ttl 3600 --owner nightly-report
    catalog lease list
    catalog lease release 3f2a9c0d41b7e655
"""

from __future__ import annotations

import argparse
from typing import Any

from api.cli.base import client_of
from api.cli.output import View, hlc_time
from catalog.leases import RetentionLease


def register(sub: Any, client: argparse.ArgumentParser) -> None:
    """Add ``lease take``, ``lease list`` and ``lease release`` to the ``catalog`` commands."""
    lease = sub.add_parser("lease", help="take, list or release retention leases")
    actions = lease.add_subparsers(dest="lease_command", required=True, metavar="ACTION")
    take = actions.add_parser(
        "take",
        parents=[client],
        help="keep what a read as of a moment needs, for a while",
        description="Take a retention lease: while it holds, compaction and data expiry keep "
        "everything a read as of --at needs. It ends on its own after --ttl seconds.",
    )
    take.add_argument("--at", required=True, help="an RFC 3339 time, or a hybrid timestamp")
    take.add_argument("--ttl", type=float, required=True, help="seconds it holds (a week at most)")
    take.add_argument("--owner", required=True, help="who holds it (a job's name)")
    take.set_defaults(handler=cmd_lease_take)
    listed = actions.add_parser("list", parents=[client], help="the leases that hold")
    listed.set_defaults(handler=cmd_lease_list)
    release = actions.add_parser("release", parents=[client], help="release a lease at once")
    release.add_argument("id", help="the lease's id (lease take, lease list)")
    release.set_defaults(handler=cmd_lease_release)


def _row(lease: RetentionLease) -> list[str]:
    return [lease.id, hlc_time(lease.at), lease.owner, lease.principal, str(lease.expires_ms)]


COLUMNS = ["ID", "AT", "OWNER", "TAKEN BY", "EXPIRES (ms)"]


def cmd_lease_take(args: argparse.Namespace) -> View:
    """Take a lease."""
    with client_of(args) as client:
        lease = client.take_lease(args.at, args.ttl, args.owner)
    return View(lease.model_dump(mode="json"), COLUMNS, [_row(lease)], title="lease taken")


def cmd_lease_list(args: argparse.Namespace) -> View:
    """List the leases that hold."""
    with client_of(args) as client:
        leases = client.leases()
    data = {"leases": [x.model_dump(mode="json") for x in leases]}
    return View(data, COLUMNS, [_row(x) for x in leases], title=f"{len(leases)} lease(s)")


def cmd_lease_release(args: argparse.Namespace) -> View:
    """Release a lease."""
    with client_of(args) as client:
        client.release_lease(args.id)
    return View({"released": args.id}, title=f"lease {args.id} released")
