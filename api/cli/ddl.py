"""``catalog exec``, ``drop`` and ``index``: apply DDL, as JSON commands or SQL statements."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from api.cli.base import UsageError, client_of
from api.cli.output import View, hlc_time
from catalog import commands as c
from catalog.apply_result import ApplyResult
from catalog.identifiers import parse_qualified


def register(sub: Any, client: argparse.ArgumentParser) -> None:
    """Add ``exec`` to the ``catalog`` subcommands."""
    run = sub.add_parser("exec", parents=[client], help="apply DDL (JSON commands or SQL)")
    source = run.add_mutually_exclusive_group(required=True)
    source.add_argument(
        "-f",
        "--file",
        help="a file of DDL statements when its name ends in .sql, else of JSON commands "
        "('-': JSON commands from stdin); either way one atomic batch",
    )
    source.add_argument("--sql", help="DDL statements ('-' for stdin)")
    _change_options(run)
    run.add_argument(
        "--wait-for-nodes",
        type=float,
        metavar="SECONDS",
        help="also wait (at most SECONDS, up to 60) until every live node applied the change, "
        "and list the nodes that did and did not",
    )
    run.set_defaults(handler=cmd_exec)

    drop = sub.add_parser("drop", parents=[client], help="drop a table (and its indexes)")
    drop.add_argument("kind", choices=["table"])
    drop.add_argument("name", help="the table, as typed in SQL ([schema.]name)")
    drop.add_argument("--if-exists", action="store_true", help="no error if it does not exist")
    _change_options(drop)
    drop.set_defaults(handler=cmd_drop)

    index = sub.add_parser(
        "index", parents=[client], help="move an index on: REGISTERED → BUILDING → AVAILABLE"
    )
    index.add_argument("step", choices=sorted(_INDEX_STEPS))
    index.add_argument("name", help="the index, as typed in SQL ([schema.]name)")
    _change_options(index)
    index.set_defaults(handler=cmd_index)


def _change_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--request-id", help="idempotency key (a new one by default)")
    parser.add_argument(
        "-m",
        "--message",
        help="why, in your words: the new version records it with who asked "
        "(catalog versions shows it)",
    )


def cmd_exec(args: argparse.Namespace) -> View:
    """Apply commands from a JSON file, or DDL statements."""
    with client_of(args) as client:
        wait = args.wait_for_nodes
        if args.sql is not None or args.file.endswith(".sql"):
            if args.sql is None:
                text = _read_source(args.file)
            else:
                text = _read_source("-") if args.sql == "-" else args.sql
            result = client.sql(
                text, request_id=args.request_id, wait_for_nodes=wait, message=args.message
            )
        else:
            commands, request_id = _load_commands(_read_source(args.file), args.file)
            result = client.execute(
                commands,
                request_id=args.request_id or request_id,
                wait_for_nodes=wait,
                message=args.message,
            )
    return _result_view(result)


def cmd_drop(args: argparse.Namespace) -> View:
    """Drop one table (with its indexes) as one batch."""
    schema, name = parse_qualified(args.name)
    command = c.DropTable(schema=schema, name=name, if_exists=args.if_exists)
    with client_of(args) as client:
        return _result_view(
            client.execute(command, request_id=args.request_id, message=args.message)
        )


_INDEX_STEPS = {"start-build": c.StartBuildingIndex, "available": c.MakeIndexAvailable}


def cmd_index(args: argparse.Namespace) -> View:
    """Move one index by name: start its build, or make it available once built."""
    schema, name = parse_qualified(args.name, "index")
    command = _INDEX_STEPS[args.step](schema=schema, name=name)
    with client_of(args) as client:
        return _result_view(
            client.execute(command, request_id=args.request_id, message=args.message)
        )


def _result_view(result: ApplyResult) -> View:
    data: dict[str, Any] = {
        "version": result.version,
        "applied": list(result.applied),
        "activation_ts": result.activation_ts,
    }
    columns = ["VERSION", "APPLIED", "ACTIVATION"]
    row = [str(result.version), _flags(result.applied), hlc_time(result.activation_ts)]
    if result.nodes_synced is not None and result.nodes_lagging is not None:
        data["nodes_synced"] = list(result.nodes_synced)
        data["nodes_lagging"] = list(result.nodes_lagging)
        columns += ["NODES SYNCED", "NODES LAGGING"]
        row += [" ".join(result.nodes_synced), " ".join(result.nodes_lagging)]
    return View(data, columns, [row])


def _read_source(name: str) -> str:
    if name == "-":
        return sys.stdin.read()
    try:
        return Path(name).read_text(encoding="utf-8")
    except OSError as e:
        raise UsageError(f"cannot read {name}: {e.strerror or e}") from e


def _load_commands(text: str, source: str) -> tuple[list[Any], str | None]:
    """Read ``[cmd, ...]``, ``{"commands": [...], "request_id": ...}`` or one ``{"op": ...}``."""
    try:
        doc = json.loads(text)
    except ValueError as e:
        raise UsageError(f"{source} is not valid JSON: {e}") from e
    if isinstance(doc, dict) and "commands" in doc:
        commands, request_id = doc["commands"], doc.get("request_id")
    elif isinstance(doc, dict):
        commands, request_id = [doc], None
    else:
        commands, request_id = doc, None
    if not isinstance(commands, list) or not all(isinstance(c, dict) for c in commands):
        raise UsageError(f"{source}: expected a command object, a list of them, or {{commands}}")
    return commands, request_id if isinstance(request_id, str) else None


def _flags(applied: Sequence[bool]) -> str:
    return " ".join("yes" if a else "no-op" for a in applied)
