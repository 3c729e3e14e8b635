"""The ``catalog`` command line: run a server, or talk to one like ``etcdctl`` or ``kubectl``.

::

    catalog serve --store sqlite:///./data/catalog.db --port 8000
    catalog exec --sql "CREATE TABLE t (id INT PRIMARY KEY, v VARCHAR(20))"
    catalog get table T --schema PUBLIC -o yaml
    catalog watch --from-version 1

Exit codes: 0 done, 1 the server refused (its code goes to stderr), 2 bad usage or input,
3 no server could be reached (or the store, for ``compact``).

May import: api.client and api.wire (to talk to a server), catalog (names, results),
schemasync (time formats); ``serve`` imports api.server, and the admin commands (issue a
token, compact) open the store through updatelog and catalog directly.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence
from typing import Any

from api.cli import backups, ddl, grants, leases, principals, reads, server
from api.cli.base import (
    EXIT_OK,
    EXIT_REFUSED,
    EXIT_UNREACHABLE,
    EXIT_USAGE,
    Handler,
    UsageError,
)
from api.cli.output import FORMATS, default_format, show
from api.client import CatalogApiError, UnreachableError
from api.client.calls import DEFAULT_URL
from catalog.errors import CatalogError
from updatelog.errors import InvalidStoreUrlError, StorageUnavailableError, UpdateLogError


def build_parser() -> argparse.ArgumentParser:
    """Return the argument parser of ``catalog``."""
    parser = argparse.ArgumentParser(
        prog="catalog", description="An event-sourced, versioned DDL catalog."
    )
    # The client options go before or after the command: the command's copy only overrides
    # the top-level value when given (SUPPRESS leaves the attribute unset otherwise).
    client = argparse.ArgumentParser(add_help=False)
    for target, top in ((parser, True), (client, False)):
        target.add_argument(
            "--url",
            default=os.environ.get("CATALOG_URL", DEFAULT_URL) if top else argparse.SUPPRESS,
            help="server base URL(s), comma-separated for failover (env CATALOG_URL; "
            f"default {DEFAULT_URL})",
        )
        target.add_argument(
            "-o",
            "--output",
            choices=FORMATS,
            default=None if top else argparse.SUPPRESS,
            help="output format (default: table on a terminal, else json)",
        )
        target.add_argument(
            "--token",
            default=os.environ.get("CATALOG_TOKEN", "") if top else argparse.SUPPRESS,
            help="bearer token for servers that check tokens (env CATALOG_TOKEN)",
        )
        target.add_argument(
            "--credential",
            default=os.environ.get("CATALOG_CREDENTIAL", "") if top else argparse.SUPPRESS,
            help="sign in as a principal: <client id>:<secret> (env CATALOG_CREDENTIAL)",
        )
        target.add_argument(
            "--timeout",
            type=float,
            default=30.0 if top else argparse.SUPPRESS,
            help="seconds per attempt (default 30)",
        )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    server.register(sub, client)
    ddl.register(sub, client)
    reads.register(sub, client)
    leases.register(sub, client)
    backups.register(sub, client)
    principals.register(sub, client)
    grants.register(sub, client)
    return parser


def _failed(
    args: argparse.Namespace,
    code: str,
    detail: str,
    exit_code: int,
    errors: Sequence[dict[str, Any]] = (),
    **where: Any,
) -> int:
    """Say why the command failed and return its exit code.

    Under an explicit ``-o json`` the failure is one JSON object on stdout (``code``,
    ``detail`` and, where known, ``status``, ``errors`` and the refused ``statement``'s
    ``line`` and ``column``), so scripts read answers and failures alike; otherwise it is text
    on stderr.
    """
    if getattr(args, "json_failures", False):
        body = {"code": code, "detail": detail, "errors": list(errors) or None, **where}
        print(json.dumps({k: v for k, v in body.items() if v is not None}))
        return exit_code
    print(f"error: {code}: {detail}" if code != "USAGE" else f"error: {detail}", file=sys.stderr)
    for e in errors:
        place = ".".join(str(p) for p in e.get("loc", []))
        print(f"  {place}: {e.get('msg', '')}", file=sys.stderr)
    return exit_code


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``catalog`` with ``argv`` (``sys.argv[1:]`` by default); return the exit code."""
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as e:  # --help (0) or a usage error (2)
        return e.code if isinstance(e.code, int) else EXIT_USAGE
    # Failures are JSON on stdout only when JSON was asked for; a default is for reading.
    args.json_failures = getattr(args, "output", None) == "json"
    if getattr(args, "output", None) is None:
        args.output = default_format(sys.stdout)
    handler: Handler = args.handler
    try:
        view = handler(args)
    except UsageError as e:
        return _failed(args, "USAGE", str(e), EXIT_USAGE)
    except UnreachableError as e:
        return _failed(args, e.code, e.detail, EXIT_UNREACHABLE)
    except CatalogApiError as e:
        where = {"status": e.status, "statement": e.statement, "line": e.line, "column": e.column}
        return _failed(args, e.code, e.detail, EXIT_REFUSED, e.errors, **where)
    except (InvalidStoreUrlError, StorageUnavailableError) as e:
        # ``serve`` that cannot start is told apart from a client that cannot reach a server.
        unusable = isinstance(e, InvalidStoreUrlError) or args.command == "serve"
        return _failed(args, e.code, e.message, EXIT_USAGE if unusable else EXIT_UNREACHABLE)
    except (CatalogError, UpdateLogError) as e:  # compact, or a --schema not in the catalog
        failed = EXIT_USAGE if args.command == "serve" else EXIT_REFUSED  # a corrupted store
        return _failed(args, str(e.code), e.message, failed)
    except ValueError as e:  # arguments the client refuses (a bad URL, a naive time)
        return _failed(args, "USAGE", str(e), EXIT_USAGE)
    except KeyboardInterrupt:
        return EXIT_OK if args.command in ("watch", "serve") else 130
    except BrokenPipeError:  # `catalog watch | head`: the reader left
        return EXIT_OK
    if view is not None:
        show(view, args.output)
    return EXIT_OK
