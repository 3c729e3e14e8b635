"""The ``catalog`` commands that run a server or open the store: serve, token create, compact."""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import gc
import logging
import socket
from typing import Any

from api.cli.base import UsageError, client_of, positive
from api.cli.output import FORMATS, View
from api.server.config import DEFAULT_STORE, ServerSettings
from schemasync.clock import rfc3339
from updatelog.url import open_log


def register(sub: Any, client: argparse.ArgumentParser) -> None:
    """Add serve, token and compact to the ``catalog`` subcommands."""
    serve = sub.add_parser("serve", help="run the REST server")
    _store_flags(serve)
    serve.add_argument("--host", help="bind address (env CATALOG_HOST; 127.0.0.1)")
    serve.add_argument("--port", type=int, help="bind port (env CATALOG_PORT; 8000)")
    serve.add_argument("--node-name", help="this node's name (env CATALOG_NODE_NAME; host name)")
    serve.add_argument(
        "--warehouse",
        help="the cluster's warehouse, where each new table's data goes: a folder or "
        "s3://bucket/prefix (keys and store from AWS_* and CATALOG_S3_ENDPOINT), recorded when "
        "the cluster is created (env CATALOG_WAREHOUSE; ./warehouse beside the SQLite file)",
    )
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
    _secret_flag(serve)
    serve.add_argument(
        "--oidc-issuer",
        help="also accept access tokens of this OpenID Connect provider (env "
        "CATALOG_OIDC_ISSUER; CATALOG_OIDC_ROLES maps its groups to roles)",
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
    _secret_flag(create)
    create.set_defaults(handler=cmd_token_create)

    compact = sub.add_parser(
        "compact",
        help="keep only the latest N versions (opens the store directly)",
        description="Snapshot the update log so that only the latest N versions are kept. "
        "Compaction has no REST endpoint: the command opens the store itself "
        "(--store, with the cluster's --delay-ms and --max-clock-skew-ms) as a short-lived "
        "catalog node; running servers notice the snapshot on their own. Reads as of a "
        "moment before the snapshot are refused from then on, so the data files only they "
        "reached (those the tables' commits removed or overwrote before it, and the folders "
        "of tables no kept version holds) are deleted by the first compaction at least an "
        "hour later.",
    )
    _store_flags(compact)
    compact.add_argument("--keep", type=positive, required=True, help="versions to keep")
    compact.add_argument("-o", "--output", choices=FORMATS, default=argparse.SUPPRESS)
    compact.set_defaults(handler=cmd_compact)


def _secret_flag(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--token-secret-file",
        help="file holding the token secret every server shares (env "
        "CATALOG_TOKEN_SECRET_FILE); needed with auth on, and with --store to sign tokens",
    )


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


def _settings(args: argparse.Namespace) -> ServerSettings:
    """Return ``ServerSettings`` from the environment, with the flags given on top."""
    flags = {
        "store": args.store,
        "host": getattr(args, "host", None),
        "port": getattr(args, "port", None),
        "node_name": getattr(args, "node_name", None),
        "warehouse": getattr(args, "warehouse", None),
        "delay_ms": args.delay_ms,
        "max_clock_skew_ms": args.max_clock_skew_ms,
        "auth": getattr(args, "auth", None),
        "token_secret_file": getattr(args, "token_secret_file", None),
        "oidc_issuer": getattr(args, "oidc_issuer", None),
    }
    try:
        base = ServerSettings()
    except ValueError as e:  # a CATALOG_* variable that is not a number
        raise UsageError(f"bad environment: {e}") from e
    settings = dataclasses.replace(base, **{k: v for k, v in flags.items() if v is not None})
    try:
        settings.oidc()
    except ValueError as e:
        raise UsageError(str(e)) from e
    return settings


def cmd_serve(args: argparse.Namespace) -> None:
    """Run the REST server until interrupted.

    The node starts (recovers from the store) before the port opens, so a store that cannot
    be reached or holds a corrupted value ends the command with its code in one line; a port
    another process holds is refused before anything starts.
    """
    settings = _settings(args)
    _check_port(settings.host, settings.port)
    asyncio.run(_serve(settings, args.log_level))


def _check_port(host: str, port: int) -> None:
    """Refuse (as a usage error) an address this server could not listen on.

    Raises:
        UsageError: the address is taken, or not one of this machine's.
    """
    try:
        family, kind, proto, _, address = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0]
        with socket.socket(family, kind, proto) as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as uvicorn binds
            probe.bind(address)
    except OSError as e:
        raise UsageError(
            f"cannot listen on {host}:{port}: {e.strerror or e}; choose another --port or "
            "--host, or stop what holds it"
        ) from None


async def _serve(settings: ServerSettings, log_level: str) -> None:
    import uvicorn  # the server's dependencies load only for the server
    from uvicorn.logging import DefaultFormatter

    # The catalog's own lines (the one naming node, address, store and version at start,
    # warnings) in uvicorn's format; uvicorn's loggers keep their own handlers.
    handler = logging.StreamHandler()
    handler.setFormatter(DefaultFormatter("%(levelprefix)s %(message)s", use_colors=False))
    logging.basicConfig(level=log_level.upper(), handlers=[handler])

    from api.server.app import create_app
    from api.server.auth import TokenAuthority, auth_enabled, read_token_secret
    from api.server.header_timeout import with_header_timeout
    from catalog.runtime.node import CatalogNode

    checks_tokens = auth_enabled(settings.host, settings.auth)
    secret = read_token_secret(settings.token_secret_file) if checks_tokens else b""
    node = await CatalogNode.start(settings.store, settings.node_name, settings.node_options())
    # The process is the server's: what recovery built (every retained version) stays for its
    # life, so it is kept out of the cyclic collector's sight, whose full passes would
    # otherwise walk it all, seconds at a hundred thousand versions, holding every request.
    gc.freeze()
    try:
        authority = None
        if checks_tokens:  # a secret that is not the cluster's ends the command here
            authority = TokenAuthority(node.log, secret)
            await authority.load()
        config = uvicorn.Config(
            create_app(settings, node=node, authority=authority),
            host=settings.host,
            port=settings.port,
            log_level=log_level,
            http=with_header_timeout(settings.header_timeout_s),
            # Event streams never end on their own; cut them rather than wait forever.
            timeout_graceful_shutdown=5,
        )
        await uvicorn.Server(config).serve()
    finally:
        await node.close()


def cmd_token_create(args: argparse.Namespace) -> View:
    """Issue a bearer token: through the server (an admin token), or from the store itself."""
    from api.server.auth import TokenAuthority, read_token_secret
    from api.wire.roles import Role

    ttl_s = _duration(args.ttl)
    if args.store is None:
        with client_of(args) as client:
            body = client.create_token(args.role, ttl_s, args.subject)
        return _token_view(body.token, args.role, body.expires_at)

    secret = read_token_secret(args.token_secret_file or ServerSettings().token_secret_file)

    async def sign() -> tuple[str, int]:
        log = open_log(args.store)
        try:
            authority = TokenAuthority(log, secret)
            await authority.load()
            return await authority.issue(Role(args.role), ttl_s, args.subject)
        finally:
            await log.close()

    token, expires = asyncio.run(sign())
    return _token_view(token, args.role, expires)


def _token_view(token: str, role: str, expires_at: int) -> View:
    """The token, its role and its expiry: Unix seconds, and RFC 3339 for people."""
    body = {
        "token": token,
        "role": role,
        "expires_at": expires_at,
        "expires": rfc3339(expires_at * 1000),
    }
    return View(body, title="token")


def _duration(text: str) -> int:
    """Parse ``90``, ``90s``, ``15m``, ``1h`` or ``7d`` into seconds."""
    units = {"s": 1, "m": 60, "h": 3600, "d": 86400}
    number, unit = (text[:-1], units[text[-1]]) if text and text[-1] in units else (text, 1)
    if not (number.isascii() and number.isdigit()) or int(number) < 1:
        raise UsageError(f"--ttl {text!r} is not a duration such as 3600, 15m, 1h or 7d")
    return int(number) * unit


def cmd_compact(args: argparse.Namespace) -> View:
    """Snapshot the store directly so only the latest N versions are kept."""
    from catalog.runtime.node import CatalogNode
    from catalog.runtime.options import NodeOptions

    settings = _settings(args)

    async def compact() -> dict[str, Any]:
        async with CatalogNode.open(
            settings.store,
            "catalog-cli-compact",
            NodeOptions(
                delay_ms=settings.delay_ms,
                max_clock_skew_ms=settings.max_clock_skew_ms,
                safe_time_ticker=False,
                registry_ttl_s=None,
            ),
        ) as node:
            snapshot = await node.manager.compact(keep_versions=args.keep)
            held = node.manager.held_back
            return {
                "snapshot_version": snapshot,
                "earliest": await node.log.earliest_version(),
                "latest": await node.log.latest_version(),
                "data_expiry": dict(node.manager.expiry.stats),
                "held_back_by": None if held is None else held.model_dump(mode="json"),
            }

    data = asyncio.run(compact())
    return View(data, title="compacted" if data["snapshot_version"] else "nothing to compact")
