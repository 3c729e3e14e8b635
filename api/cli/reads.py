"""The reading commands of ``catalog``: get, versions, diff, watch, time, nodes."""

from __future__ import annotations

import argparse
import dataclasses
import json
from collections.abc import Iterator
from typing import Any

from api.cli.base import UsageError, catalog_version, client_of, positive
from api.cli.output import View, hlc_time, show_line
from api.wire.models import ChangeBody, FieldChangeBody
from catalog.catalog import Catalog
from catalog.identifiers import parse_name, parse_qualified, quote_name


def register(sub: Any, client: argparse.ArgumentParser) -> None:
    """Add the reading commands to the ``catalog`` subcommands."""
    reads = argparse.ArgumentParser(add_help=False)
    at = reads.add_mutually_exclusive_group()
    at.add_argument("--version", type=catalog_version, help="read this catalog version")
    at.add_argument("--at", help="read as of a hybrid timestamp or an RFC 3339 time")

    get = sub.add_parser(
        "get",
        parents=[client, reads],
        help="show schemas, tables, indexes, views, zones, system views, the catalog",
    )
    get.add_argument(
        "kind",
        choices=[
            "schemas",
            "schema",
            "tables",
            "table",
            "indexes",
            "index",
            "zones",
            "zone",
            "views",
            "system-views",
            "catalog",
        ],
    )
    get.add_argument("name", nargs="?", help="one object's name")
    get.add_argument("--schema", help="schema (default: all for lists, PUBLIC for one object)")
    get.set_defaults(handler=cmd_get)

    versions = sub.add_parser("versions", parents=[client], help="list retained versions")
    versions.add_argument("--from-version", type=positive)
    versions.add_argument("--limit", type=positive)
    versions.set_defaults(handler=cmd_versions)

    describe = sub.add_parser(
        "describe", parents=[client, reads], help="one table: columns, keys, indexes, versions"
    )
    describe.add_argument("kind", choices=["table"])
    describe.add_argument("name", help="the table, as in SQL: [schema.]name")
    describe.set_defaults(handler=cmd_describe)

    diff = sub.add_parser(
        "diff", parents=[client], help="what changed between two versions (A-1 and A alone)"
    )
    diff.add_argument("a", type=catalog_version, metavar="A")
    diff.add_argument("b", type=catalog_version, metavar="B", nargs="?")
    diff.set_defaults(handler=cmd_diff)

    watch = sub.add_parser("watch", parents=[client], help="follow catalog events")
    watch.add_argument("--from-version", type=positive, help="replay from this version first")
    watch.add_argument("--last-event-id", help="resume right after this event id")
    watch.add_argument("--count", type=int, help="stop after this many events")
    watch.set_defaults(handler=cmd_watch)

    time_ = sub.add_parser("time", parents=[client], help="the server's hybrid clock")
    time_.set_defaults(handler=cmd_time)
    nodes = sub.add_parser("nodes", parents=[client], help="live catalog nodes (the registry)")
    nodes.set_defaults(handler=cmd_nodes)


def _at(args: argparse.Namespace) -> dict[str, Any]:
    return {"version": args.version, "at": args.at}


def cmd_get(args: argparse.Namespace) -> View:
    """Show schemas, tables, indexes, views, zones, system views or the whole catalog."""
    kind = {"schema": "schemas", "table": "tables", "index": "indexes", "zone": "zones"}.get(
        args.kind, args.kind
    )
    if args.kind in ("schema", "table", "index", "zone") and args.name is None:
        raise UsageError(f"get {args.kind} needs a NAME")
    with client_of(args) as client:
        if args.name is not None and kind == "tables":
            body = client.table_info(args.schema or "PUBLIC", args.name, **_at(args))
            return _table_view(body.model_dump(mode="json", by_alias=True))
        if args.name is not None and kind == "views":
            view = client.view(args.schema or "PUBLIC", args.name, **_at(args))
            return View(view.model_dump(mode="json"), title=f"view {view.name}")
        if args.name is not None and kind == "indexes":
            index = client.index(args.schema or "PUBLIC", args.name, **_at(args))
            return View(index.model_dump(mode="json"), title=f"index {index.name}")
        if args.name is not None and kind == "schemas":
            schema = client.schema(args.name, **_at(args))
            title = f"schema {schema.schema_.name}"
            return View(schema.model_dump(mode="json", by_alias=True), title=title)
        if args.name is not None and kind == "zones":
            zone = client.zone(args.name, **_at(args))
            return View(zone.model_dump(mode="json"), title=f"zone {zone.zone.name}")
        if args.name is not None:
            raise UsageError(f"get {args.kind} takes no NAME")
        cat = client.catalog(**_at(args))
    return _listing(cat, kind, args.schema)


def _listing(cat: Catalog, kind: str, schema: str | None) -> View:
    schema_id = cat.schema(parse_name(schema)).id if schema is not None else None
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
                "system_views": [v.model_dump(mode="json") for v in cat.system_views()],
                "views": [v.model_dump(mode="json") for v in cat.views()],
            },
            ["KIND", "COUNT"],
            [
                ["schemas", str(len(cat.schemas()))],
                ["zones", str(len(cat.zones()))],
                ["tables", str(len(cat.tables()))],
                ["indexes", str(len(cat.indexes()))],
                ["views", str(len(cat.views()))],
                ["system views", str(len(cat.system_views()))],
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
    if kind == "views":
        listed = [v for v in cat.views() if schema_id is None or v.schema_id == schema_id]
        return View(
            [v.model_dump(mode="json") for v in listed],
            ["SCHEMA", "NAME", "ID", "COLUMNS", "VERSION", "DIALECTS"],
            [
                [
                    cat.schema_by_id(v.schema_id).name,
                    v.name,
                    str(v.id),
                    str(len(v.columns)),
                    str(v.current_version_id),
                    ", ".join(r.dialect for r in v.current.representations),
                ]
                for v in listed
            ],
            title=title,
        )
    if kind == "system-views":
        views = cat.system_views()
        return View(
            [v.model_dump(mode="json") for v in views],
            ["NAME", "ID", "TYPE", "COLUMNS"],
            [[v.name, str(v.id), str(v.view_type), str(len(v.columns))] for v in views],
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
    key = set(table["primary_key"])
    indexes = ", ".join(i["name"] for i in body["indexes"]) or "none"
    return View(
        body,
        ["ID", "COLUMN", "TYPE", "NULLABLE", "DEFAULT", "KEY"],
        [
            [
                str(c["id"]),
                "  " * (len(path) - 1) + ".".join(path),
                _type_text(c),
                "yes" if c["nullable"] else "no",
                _default_text(c),
                "PK" if c["id"] in key else "",
            ]
            for path, c, _ in _walk(table["versions"][-1]["columns"])
        ],
        title=f"{body['schema']}.{table['name']} (id {table['id']}, version {body['version']})",
        caption=f"zone {body['zone']['name']}; indexes: {indexes}",
    )


def _walk(
    columns: list[dict[str, Any]], prefix: tuple[str, ...] = (), parent: int | None = None
) -> Iterator[tuple[tuple[str, ...], dict[str, Any], int | None]]:
    """Yield each column and nested field with its path and its holder's id, depth first.

    A STRUCT's fields, an ARRAY's ``element`` and a MAP's ``key`` and ``value`` follow their
    column, each named by its path (``PAYLOAD.ITEMS.element.PRICE``).
    """
    for column in columns:
        path = (*prefix, column["name"])
        yield path, column, parent
        yield from _walk(column.get("fields") or [], path, column["id"])


def _type_text(column: dict[str, Any]) -> str:
    """Spell a type: ``DECIMAL(10, 2)``, ``ARRAY<T>``, ``MAP<K, V>``, ``STRUCT<...>``.

    A STRUCT is summed up: its fields are rows of their own.
    """
    fields = column.get("fields") or []
    if column["type"] == "STRUCT":
        return "STRUCT<...>"
    if column["type"] == "ARRAY" and len(fields) == 1:
        return f"ARRAY<{_type_text(fields[0])}>"
    if column["type"] == "MAP" and len(fields) == 2:
        return f"MAP<{_type_text(fields[0])}, {_type_text(fields[1])}>"
    params = [str(column[p]) for p in ("precision", "scale", "length") if column[p] is not None]
    return f"{column['type']}({', '.join(params)})" if params else str(column["type"])


def cmd_versions(args: argparse.Namespace) -> View:
    """List retained versions."""
    with client_of(args) as client:
        body = client.versions(from_version=args.from_version, limit=args.limit)
    return View(
        body.model_dump(mode="json"),
        ["VERSION", "ACTIVE FROM", "WHO", "MESSAGE"],
        [
            [
                str(v.version),
                hlc_time(v.activation_ts),
                ", ".join(sorted({f"{o.principal} ({o.client})" for o in v.origins})),
                "; ".join(o.message for o in v.origins if o.message),
            ]
            for v in body.versions
        ],
        title=f"versions {body.earliest}..{body.latest}",
    )


def cmd_describe(args: argparse.Namespace) -> View:
    """Describe one table: its columns and keys, indexes, zone and every schema version."""
    schema, name = (quote_name(exact) for exact in parse_qualified(args.name))
    with client_of(args) as client:
        body = client.table_info(schema, name, **_at(args)).model_dump(mode="json", by_alias=True)
        history = client.schema_versions(schema, name, version=body["version"])
    body["schema_versions"] = [v.model_dump(mode="json") for v in history]
    table = body["table"]
    names = {c["id"]: c["name"] for c in table["versions"][-1]["columns"]}
    colocation = (
        ", ".join(names[i] for i in table["colocation_columns"])
        or "all its values (no primary key)"
    )
    indexes = "; ".join(f"{i['name']} {i['status']}" for i in body["indexes"]) or "none"
    caption = "\n".join(
        (
            f"zone {body['zone']['name']}; colocated by {colocation}",
            f"data in {table.get('location') or 'the warehouse the job names (no location)'}",
            f"indexes: {indexes}",
            f"schema versions: {_schema_versions(body['schema_versions'])}",
        )
    )
    return dataclasses.replace(_table_view(body), caption=caption)


def _schema_versions(versions: list[dict[str, Any]]) -> str:
    """List a table's schema versions, each with how it differs from the one before.

    ``+`` added, ``-`` dropped, ``~`` changed: ``1 (ID, NAME), 2 (+NOTE), 3 (~NOTE)``.
    """
    parts = []
    before: dict[int, tuple[str, dict[str, Any], int | None]] = {}
    for version in versions:
        now = {c["id"]: (".".join(p), _own(c), up) for p, c, up in _walk(version["columns"])}
        if not before:
            change = ", ".join(c["name"] for c in version["columns"])
        else:
            # A field added or dropped with its holder is not listed again.
            added = [
                f"+{n}"
                for i, (n, _, up) in now.items()
                if i not in before and (up is None or up in before)
            ]
            dropped = [
                f"-{n}"
                for i, (n, _, up) in before.items()
                if i not in now and (up is None or up in now)
            ]
            changed = [f"~{n}" for i, (n, c, _) in now.items() if i in before and before[i][1] != c]
            change = ", ".join(added + dropped + changed)
        parts.append(f"{version['version']} ({change})")
        before = now
    return ", ".join(parts)


def _own(column: dict[str, Any]) -> dict[str, Any]:
    """A column's own properties: its name and type, not its nested fields (compared apart)."""
    return {k: v for k, v in column.items() if k != "fields"}


def _default_text(column: dict[str, Any]) -> str:
    if column.get("default_function"):
        return f"{column['default_function']}()"
    return "" if column["default"] is None else json.dumps(column["default"])


def cmd_diff(args: argparse.Namespace) -> View:
    """Show what changed between two versions, or made version A (from A-1)."""
    a, b = (args.a, args.b) if args.b is not None else (max(args.a - 1, 0), args.a)
    with client_of(args) as client:
        body = client.diff(a, b)
    return View(
        body.model_dump(mode="json"),
        ["CHANGE", "TYPE", "ID", "NAME", "WHAT"],
        [[c.change, c.object_type, str(c.id), c.name, _what_changed(c)] for c in body.changes],
        title=f"changes from version {body.from_version} to {body.to_version}",
    )


def _what_changed(change: ChangeBody) -> str:
    """Sum up an altered object: ``status REGISTERED → BUILDING; +NOTE; ~A (type INT32 → INT64)``.

    ``+`` a column added, ``-`` dropped, ``~`` altered (with what changed in it).
    """
    parts = [_moved(f) for f in change.fields]
    for column in change.columns:
        if column.change == "added":
            parts.append(f"+{column.name}")
        elif column.change == "dropped":
            parts.append(f"-{column.name}")
        else:
            parts.append(f"~{column.name} ({', '.join(_moved(f) for f in column.fields)})")
    return "; ".join(parts)


def _moved(field: FieldChangeBody) -> str:
    return f"{field.field} {_plain(field.before)} → {_plain(field.after)}"


def _plain(value: Any) -> str:
    """A value as a person reads it: text as it is, anything else as JSON (``null``, ``7``)."""
    return value if isinstance(value, str) else json.dumps(value)


def cmd_watch(args: argparse.Namespace) -> None:
    """Print catalog events as they happen (reconnecting and resuming on its own)."""
    seen = 0
    with (
        client_of(args) as client,
        client.events(args.from_version, last_event_id=args.last_event_id) as events,
    ):
        if args.count == 0:
            return
        for event in events:
            name = event.subject.name
            active = hlc_time(event.activation_ts)
            line = f"{event.id:>8}  {event.event:<16} {name}  (version {event.version}, {active})"
            show_line(event.to_json(), line, args.output)
            seen += 1
            if args.count is not None and seen >= args.count:
                return


def cmd_time(args: argparse.Namespace) -> View:
    """Show the server's hybrid clock."""
    with client_of(args) as client:
        body = client.time()
    return View({"now": body.now, "physical_ms": body.physical_ms, "time": hlc_time(body.now)})


def cmd_nodes(args: argparse.Namespace) -> View:
    """List the live catalog nodes (the node registry)."""
    with client_of(args) as client:
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
