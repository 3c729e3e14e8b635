"""The ``catalog`` command line: run a server, or talk to one like ``etcdctl`` or ``kubectl``.

::

    catalog serve --store sqlite:///./data/catalog.db --port 8000
    catalog exec --sql "CREATE TABLE t (id INT PRIMARY KEY, v VARCHAR(20))"
    catalog get table T --schema PUBLIC -o yaml
    catalog watch --from-version 1

Exit codes: 0 done, 1 the server refused (its code goes to stderr), 2 bad usage or input,
3 no server could be reached (or the store, for ``compact``).
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import json
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from api.cli_output import FORMATS, View, default_format, hlc_time, show, show_line
from api.client import CatalogApiError, CatalogClient, UnreachableError
from api.client.calls import DEFAULT_URL
from api.config import DEFAULT_STORE, ServerSettings
from catalog.catalog import Catalog
from catalog.errors import CatalogError
from updatelog.errors import InvalidStoreUrlError, StorageUnavailableError, UpdateLogError
from updatelog.url import open_log

EXIT_OK = 0
EXIT_REFUSED = 1
EXIT_USAGE = 2
EXIT_UNREACHABLE = 3


class UsageError(Exception):
    """Bad arguments or input files (exit code 2)."""


Handler = Callable[[argparse.Namespace], View | None]


# -- client commands ----------------------------------------------------------------------


def _client(args: argparse.Namespace) -> CatalogClient:
    return CatalogClient(args.url, timeout=args.timeout, token=args.token or None)


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


def cmd_exec(args: argparse.Namespace) -> View:
    """Apply commands from a JSON file, or DDL statements."""
    with _client(args) as client:
        wait = args.wait_for_nodes
        if args.sql is not None:
            text = _read_source("-") if args.sql == "-" else args.sql
            result = client.sql(text, request_id=args.request_id, wait_for_nodes=wait)
        else:
            commands, request_id = _load_commands(_read_source(args.file), args.file)
            result = client.execute(
                commands, request_id=args.request_id or request_id, wait_for_nodes=wait
            )
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


def _flags(applied: Sequence[bool]) -> str:
    return " ".join("yes" if a else "no-op" for a in applied)


def _at(args: argparse.Namespace) -> dict[str, Any]:
    return {"version": args.version, "at": args.at}


def cmd_get(args: argparse.Namespace) -> View:
    """Show schemas, tables, indexes, zones or the whole catalog."""
    kind = {"schema": "schemas", "table": "tables", "index": "indexes", "zone": "zones"}.get(
        args.kind, args.kind
    )
    if args.kind in ("table", "index", "zone") and args.name is None:
        raise UsageError(f"get {args.kind} needs a NAME")
    with _client(args) as client:
        if args.name is not None and kind == "tables":
            body = client.table_info(args.schema or "PUBLIC", args.name, **_at(args))
            return _table_view(body.model_dump(mode="json", by_alias=True))
        if args.name is not None and kind == "indexes":
            index = client.index(args.schema or "PUBLIC", args.name, **_at(args))
            return View(index.model_dump(mode="json"), title=f"index {index.name}")
        if args.name is not None and kind == "zones":
            zone = client.zone(args.name, **_at(args))
            return View(zone.model_dump(mode="json"), title=f"zone {zone.zone.name}")
        if args.name is not None:
            raise UsageError(f"get {args.kind} takes no NAME")
        cat = client.catalog(**_at(args))
    return _listing(cat, kind, args.schema)


def _listing(cat: Catalog, kind: str, schema: str | None) -> View:
    schema_id = cat.schema(schema).id if schema is not None else None
    title = f"{kind} at version {cat.version}"
    if kind == "catalog":
        return View(
            {
                "version": cat.version,
                "activation_ts": cat.activation_ts,
                "object_id_gen": cat.object_id_gen,
                "default_zone_id": cat.default_zone_id,
                "schemas": [s.model_dump(mode="json") for s in cat.schemas()],
                "zones": [z.model_dump(mode="json") for z in cat.zones()],
                "tables": [t.model_dump(mode="json") for t in cat.tables()],
                "indexes": [i.model_dump(mode="json") for i in cat.indexes()],
            },
            ["KIND", "COUNT"],
            [
                ["schemas", str(len(cat.schemas()))],
                ["zones", str(len(cat.zones()))],
                ["tables", str(len(cat.tables()))],
                ["indexes", str(len(cat.indexes()))],
            ],
            title=f"catalog version {cat.version} (active from {hlc_time(cat.activation_ts)})",
        )
    if kind == "schemas":
        schemas = cat.schemas()
        return View(
            [s.model_dump(mode="json") for s in schemas],
            ["ID", "NAME", "TABLES"],
            [[str(s.id), s.name, str(len(cat.schema_tables(s.id)))] for s in schemas],
            title=title,
        )
    if kind == "tables":
        tables = [t for t in cat.tables() if schema_id is None or t.schema_id == schema_id]
        return View(
            [t.model_dump(mode="json") for t in tables],
            ["SCHEMA", "NAME", "ID", "COLUMNS", "ZONE", "SCHEMA VERSION"],
            [
                [
                    cat.schema_by_id(t.schema_id).name,
                    t.name,
                    str(t.id),
                    str(len(t.versions[-1].columns)),
                    cat.zone_by_id(t.zone_id).name,
                    str(t.schema_version),
                ]
                for t in tables
            ],
            title=title,
        )
    if kind == "indexes":
        indexes = [i for i in cat.indexes() if schema_id is None or i.schema_id == schema_id]
        return View(
            [i.model_dump(mode="json") for i in indexes],
            ["SCHEMA", "NAME", "ID", "TABLE", "KIND", "UNIQUE", "STATUS"],
            [
                [
                    cat.schema_by_id(i.schema_id).name,
                    i.name,
                    str(i.id),
                    cat.table_by_id(i.table_id).name,
                    str(i.kind),
                    "yes" if i.unique else "",
                    str(i.status),
                ]
                for i in indexes
            ],
            title=title,
        )
    zones = cat.zones()
    return View(
        [z.model_dump(mode="json") for z in zones],
        ["NAME", "ID", "PARTITIONS", "REPLICAS", "TABLES", "DEFAULT"],
        [
            [
                z.name,
                str(z.id),
                str(z.partitions),
                str(z.replicas),
                str(len(cat.zone_tables(z.id))),
                "yes" if z.id == cat.default_zone_id else "",
            ]
            for z in zones
        ],
        title=title,
    )


def _table_view(body: dict[str, Any]) -> View:
    table = body["table"]
    columns = table["versions"][-1]["columns"]
    key = set(table["primary_key"])
    indexes = ", ".join(i["name"] for i in body["indexes"]) or "none"
    return View(
        body,
        ["ID", "COLUMN", "TYPE", "NULLABLE", "DEFAULT", "KEY"],
        [
            [
                str(c["id"]),
                c["name"],
                _type_text(c),
                "yes" if c["nullable"] else "no",
                "" if c["default"] is None else json.dumps(c["default"]),
                "PK" if c["id"] in key else "",
            ]
            for c in columns
        ],
        title=f"{body['schema']}.{table['name']} (id {table['id']}, version {body['version']})",
        caption=f"zone {body['zone']['name']}; indexes: {indexes}",
    )


def _type_text(column: dict[str, Any]) -> str:
    params = [str(column[p]) for p in ("precision", "scale", "length") if column[p] is not None]
    return f"{column['type']}({', '.join(params)})" if params else str(column["type"])


def cmd_versions(args: argparse.Namespace) -> View:
    """List retained versions."""
    with _client(args) as client:
        body = client.versions(from_version=args.from_version, limit=args.limit)
    return View(
        body.model_dump(mode="json"),
        ["VERSION", "ACTIVATION TS", "ACTIVE FROM"],
        [[str(v.version), str(v.activation_ts), hlc_time(v.activation_ts)] for v in body.versions],
        title=f"versions {body.earliest}..{body.latest}",
    )


def cmd_diff(args: argparse.Namespace) -> View:
    """Show what changed between two versions."""
    with _client(args) as client:
        body = client.diff(args.a, args.b)
    return View(
        body.model_dump(mode="json"),
        ["CHANGE", "TYPE", "ID", "NAME"],
        [[c.change, c.object_type, str(c.id), c.name] for c in body.changes],
        title=f"changes from version {body.from_version} to {body.to_version}",
    )


def cmd_watch(args: argparse.Namespace) -> None:
    """Print catalog events as they happen (reconnecting and resuming on its own)."""
    seen = 0
    with (
        _client(args) as client,
        client.events(args.from_version, last_event_id=args.last_event_id) as events,
    ):
        if args.count == 0:
            return
        for event in events:
            name = getattr(event.descriptor, "name", "")
            active = hlc_time(event.activation_ts)
            line = f"{event.id:>8}  {event.event:<16} {name}  (version {event.version}, {active})"
            show_line(event.to_json(), line, args.output)
            seen += 1
            if args.count is not None and seen >= args.count:
                return


def cmd_time(args: argparse.Namespace) -> View:
    """Show the server's hybrid clock."""
    with _client(args) as client:
        body = client.time()
    return View({"now": body.now, "physical_ms": body.physical_ms, "time": hlc_time(body.now)})


def cmd_nodes(args: argparse.Namespace) -> View:
    """List the live catalog nodes (the node registry)."""
    with _client(args) as client:
        nodes = client.nodes()
    return View(
        [n.model_dump(mode="json") for n in nodes],
        ["NAME", "ADDRESS", "APPLIED", "SAFE TIME", "AGE"],
        [
            [
                n.name,
                n.address or "",
                str(n.applied_version),
                hlc_time(n.safe_time),
                "" if n.heartbeat_age_ms is None else f"{n.heartbeat_age_ms / 1000:.1f}s",
            ]
            for n in nodes
        ],
        caption=f"{len(nodes)} live node(s)",
    )


# -- commands that open the store ---------------------------------------------------------


def _settings(args: argparse.Namespace) -> ServerSettings:
    """Return ``ServerSettings`` from the environment, with the flags given on top."""
    flags = {
        "store": args.store,
        "host": getattr(args, "host", None),
        "port": getattr(args, "port", None),
        "node_name": getattr(args, "node_name", None),
        "delay_ms": args.delay_ms,
        "max_clock_skew_ms": args.max_clock_skew_ms,
        "auth": getattr(args, "auth", None),
    }
    try:
        base = ServerSettings()
    except ValueError as e:  # a CATALOG_* variable that is not a number
        raise UsageError(f"bad environment: {e}") from e
    return dataclasses.replace(base, **{k: v for k, v in flags.items() if v is not None})


def cmd_serve(args: argparse.Namespace) -> None:
    """Run the REST server until interrupted."""
    import uvicorn  # the server's dependencies load only for the server

    from api.app import create_app

    settings = _settings(args)
    uvicorn.run(
        create_app(settings),
        host=settings.host,
        port=settings.port,
        log_level=args.log_level,
        # Event streams never end on their own; cut them rather than wait forever.
        timeout_graceful_shutdown=5,
    )


def cmd_token_create(args: argparse.Namespace) -> View:
    """Issue a bearer token: through the server (an admin token), or from the store itself."""
    from api.auth import TokenAuthority
    from api.roles import Role

    ttl_s = _duration(args.ttl)
    if args.store is None:
        with _client(args) as client:
            body = client.create_token(args.role, ttl_s, args.subject)
        return View(body.model_dump(mode="json"), title="token")

    async def issue() -> tuple[str, int]:
        log = open_log(args.store)
        try:
            authority = TokenAuthority(log)
            await authority.load()
            return await authority.issue(Role(args.role), ttl_s, args.subject)
        finally:
            await log.close()

    token, expires = asyncio.run(issue())
    return View({"token": token, "role": args.role, "expires_at": expires}, title="token")


def _duration(text: str) -> int:
    """Parse ``90``, ``90s``, ``15m``, ``1h`` or ``7d`` into seconds."""
    units = {"s": 1, "m": 60, "h": 3600, "d": 86400}
    number, unit = (text[:-1], units[text[-1]]) if text and text[-1] in units else (text, 1)
    if not (number.isascii() and number.isdigit()) or int(number) < 1:
        raise UsageError(f"--ttl {text!r} is not a duration such as 3600, 15m, 1h or 7d")
    return int(number) * unit


def cmd_compact(args: argparse.Namespace) -> View:
    """Snapshot the store directly so only the latest N versions are kept."""
    from catalog.node import CatalogNode

    settings = _settings(args)

    async def compact() -> dict[str, Any]:
        async with CatalogNode.open(
            settings.store,
            "catalog-cli-compact",
            delay_ms=settings.delay_ms,
            max_clock_skew_ms=settings.max_clock_skew_ms,
            safe_time_ticker=False,
            registry_ttl_s=None,  # a tool, not a node that serves: stay out of the registry
        ) as node:
            snapshot = await node.manager.compact(keep_versions=args.keep)
            return {
                "snapshot_version": snapshot,
                "earliest": await node.log.earliest_version(),
                "latest": await node.log.latest_version(),
            }

    data = asyncio.run(compact())
    return View(data, title="compacted" if data["snapshot_version"] else "nothing to compact")


# -- parsing and main ---------------------------------------------------------------------


def _positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text} is not a positive integer")
    return value


def _store_flags(parser: argparse.ArgumentParser, *, required: bool = False) -> None:
    parser.add_argument(
        "--store",
        required=required,
        help=f"update-log URL (env CATALOG_STORE; default {DEFAULT_STORE}), "
        "e.g. sqlite:///./data/catalog.db or etcd://127.0.0.1:2379/prefix",
    )
    parser.add_argument(
        "--delay-ms", type=int, help="schema sync delay, ms (env CATALOG_DELAY_MS; 500)"
    )
    parser.add_argument(
        "--max-clock-skew-ms",
        type=int,
        help="maximum clock skew, ms (env CATALOG_MAX_CLOCK_SKEW_MS; 500)",
    )


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
            "--timeout",
            type=float,
            default=30.0 if top else argparse.SUPPRESS,
            help="seconds per attempt (default 30)",
        )
    reads = argparse.ArgumentParser(add_help=False)
    at = reads.add_mutually_exclusive_group()
    at.add_argument("--version", type=_positive, help="read this catalog version")
    at.add_argument("--at", help="read as of a hybrid timestamp or an RFC 3339 time")

    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    serve = sub.add_parser("serve", help="run the REST server")
    _store_flags(serve)
    serve.add_argument("--host", help="bind address (env CATALOG_HOST; 127.0.0.1)")
    serve.add_argument("--port", type=int, help="bind port (env CATALOG_PORT; 8000)")
    serve.add_argument("--node-name", help="this node's name (env CATALOG_NODE_NAME; host name)")
    serve.add_argument(
        "--log-level", default="info", choices=["critical", "error", "warning", "info", "debug"]
    )
    auth = serve.add_mutually_exclusive_group()
    auth.add_argument(
        "--auth",
        choices=["on", "off", "auto"],
        help="check bearer tokens (env CATALOG_AUTH; auto: on unless bound to loopback)",
    )
    auth.add_argument(
        "--no-auth",
        dest="auth",
        action="store_const",
        const="off",
        help="local development only: anyone who reaches the server may change the catalog",
    )
    serve.set_defaults(handler=cmd_serve)

    token = sub.add_parser("token", help="bearer tokens")
    token_sub = token.add_subparsers(dest="token_command", required=True, metavar="ACTION")
    create = token_sub.add_parser(
        "create",
        parents=[client],
        help="issue a token (needs an admin token, or --store to sign with the store's keys)",
    )
    create.add_argument("--role", required=True, choices=["reader", "writer", "admin"])
    create.add_argument("--ttl", default="1h", help="lifetime: seconds or 15m, 1h, 7d (1h)")
    create.add_argument("--subject", default="catalog", help="who the token is for")
    create.add_argument(
        "--store", help="sign with the keys in this store instead of asking a server"
    )
    create.set_defaults(handler=cmd_token_create)

    run = sub.add_parser("exec", parents=[client], help="apply DDL (JSON commands or SQL)")
    source = run.add_mutually_exclusive_group(required=True)
    source.add_argument("-f", "--file", help="JSON commands file ('-' for stdin)")
    source.add_argument("--sql", help="DDL statements ('-' for stdin)")
    run.add_argument("--request-id", help="idempotency key (a new one by default)")
    run.add_argument(
        "--wait-for-nodes",
        type=float,
        metavar="SECONDS",
        help="also wait (at most SECONDS, up to 60) until every live node applied the change, "
        "and list the nodes that did and did not",
    )
    run.set_defaults(handler=cmd_exec)

    get = sub.add_parser(
        "get", parents=[client, reads], help="show schemas, tables, indexes, zones, the catalog"
    )
    get.add_argument(
        "kind",
        choices=["schemas", "tables", "table", "indexes", "index", "zones", "zone", "catalog"],
    )
    get.add_argument("name", nargs="?", help="one object's name")
    get.add_argument("--schema", help="schema (default: all for lists, PUBLIC for one object)")
    get.set_defaults(handler=cmd_get)

    versions = sub.add_parser("versions", parents=[client], help="list retained versions")
    versions.add_argument("--from-version", type=_positive)
    versions.add_argument("--limit", type=_positive)
    versions.set_defaults(handler=cmd_versions)

    diff = sub.add_parser("diff", parents=[client], help="what changed between two versions")
    diff.add_argument("a", type=_positive, metavar="A")
    diff.add_argument("b", type=_positive, metavar="B")
    diff.set_defaults(handler=cmd_diff)

    watch = sub.add_parser("watch", parents=[client], help="follow catalog events")
    watch.add_argument("--from-version", type=_positive, help="replay from this version first")
    watch.add_argument("--last-event-id", help="resume right after this event id")
    watch.add_argument("--count", type=int, help="stop after this many events")
    watch.set_defaults(handler=cmd_watch)

    compact = sub.add_parser(
        "compact",
        help="keep only the latest N versions (opens the store directly)",
        description="Snapshot the update log so that only the latest N versions are kept. "
        "There is no REST endpoint for this yet: the command opens the store itself "
        "(--store, with the cluster's --delay-ms and --max-clock-skew-ms) as a short-lived "
        "catalog node; running servers notice the snapshot on their own.",
    )
    _store_flags(compact)
    compact.add_argument("--keep", type=_positive, required=True, help="versions to keep")
    compact.add_argument("-o", "--output", choices=FORMATS, default=argparse.SUPPRESS)
    compact.set_defaults(handler=cmd_compact)

    time_ = sub.add_parser("time", parents=[client], help="the server's hybrid clock")
    time_.set_defaults(handler=cmd_time)
    nodes = sub.add_parser("nodes", parents=[client], help="live catalog nodes (the registry)")
    nodes.set_defaults(handler=cmd_nodes)
    return parser


def _refused(code: str, detail: str, errors: Sequence[dict[str, Any]] = ()) -> None:
    print(f"error: {code}: {detail}", file=sys.stderr)
    for e in errors:
        where = ".".join(str(p) for p in e.get("loc", []))
        print(f"  {where}: {e.get('msg', '')}", file=sys.stderr)


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``catalog`` with ``argv`` (``sys.argv[1:]`` by default); return the exit code."""
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as e:  # --help (0) or a usage error (2)
        return e.code if isinstance(e.code, int) else EXIT_USAGE
    if getattr(args, "output", None) is None:
        args.output = default_format(sys.stdout)
    handler: Handler = args.handler
    try:
        view = handler(args)
    except UsageError as e:
        print(f"error: {e}", file=sys.stderr)
        return EXIT_USAGE
    except UnreachableError as e:
        print(f"error: {e.code}: {e.detail}", file=sys.stderr)
        return EXIT_UNREACHABLE
    except CatalogApiError as e:
        _refused(e.code, e.detail, e.errors)
        return EXIT_REFUSED
    except InvalidStoreUrlError as e:
        print(f"error: {e.code}: {e.message}", file=sys.stderr)
        return EXIT_USAGE
    except StorageUnavailableError as e:
        print(f"error: {e.code}: {e.message}", file=sys.stderr)
        return EXIT_UNREACHABLE
    except (CatalogError, UpdateLogError) as e:  # compact, or a --schema not in the catalog
        _refused(str(e.code), e.message)
        return EXIT_REFUSED
    except ValueError as e:  # arguments the client refuses (a bad URL, a naive time)
        print(f"error: {e}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        return EXIT_OK if args.command in ("watch", "serve") else 130
    except BrokenPipeError:  # `catalog watch | head`: the reader left
        return EXIT_OK
    if view is not None:
        show(view, args.output)
    return EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
