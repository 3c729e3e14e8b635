"""What every ``catalog`` command group shares: exit codes, the client, argument types."""

from __future__ import annotations

import argparse
from collections.abc import Callable

from api.cli.output import View
from api.client import CatalogClient
from catalog.origin import CLIENT_HEADER

CLI_CLIENT = "cli"
"""How the command line names itself to the server (recorded with the versions it makes)."""

EXIT_OK = 0
EXIT_REFUSED = 1
EXIT_USAGE = 2
EXIT_UNREACHABLE = 3


class UsageError(Exception):
    """Bad arguments or input files (exit code 2)."""


Handler = Callable[[argparse.Namespace], View | None]


def client_of(args: argparse.Namespace) -> CatalogClient:
    """Return a client for the server the global options name."""
    return CatalogClient(
        args.url,
        timeout=args.timeout,
        token=args.token or None,
        credential=getattr(args, "credential", "") or None,
        headers={CLIENT_HEADER: CLI_CLIENT},
    )


def positive(text: str) -> int:
    """An argument type: a positive integer."""
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text} is not a positive integer")
    return value


def catalog_version(text: str) -> int:
    """An argument type: a catalog version (0 is the empty catalog before version 1)."""
    value = int(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"{text} is not a catalog version (0 or more)")
    return value
