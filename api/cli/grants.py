"""``catalog grant``, ``revoke``, ``role``, ``grants`` and ``access``: who may do what, and when.

Grants and roles are catalog objects, changed by commands that make versions like any DDL;
the reads answer at the latest version, at ``--version N`` or as of ``--at T``::

    catalog role create MARKETING
    catalog grant USAGE --on schema SALES --to role MARKETING
    catalog grant SELECT,MODIFY --on table SALES.ORDERS --to role MARKETING
    catalog grant USAGE --on role MARKETING --to user nightly-etl
    catalog grants --to role MARKETING
    catalog access who-can SELECT SALES.ORDERS --version 7
    catalog access diff 7 9
    catalog revoke USAGE --on role MARKETING --to user nightly-etl
    catalog role drop MARKETING

Object and role names are typed as in SQL (unquoted they fold to upper case); a principal
(``--to user``) is named exactly as it was created.
"""

from __future__ import annotations

import argparse
from typing import Any

from api.cli.base import UsageError, catalog_version, client_of
from api.cli.output import View, hlc_time
from api.wire.grants import GrantBody, HolderBody, RoleBody, WhoCanBody
from catalog.apply_result import ApplyResult
from catalog.descriptors import GranteeKind, Privilege, SecurableKind
from catalog.identifiers import parse_name, parse_qualified

_KINDS = [str(k) for k in SecurableKind]
_GRANTEES = [str(k) for k in GranteeKind]
GRANT_COLUMNS = ["ID", "GRANT", "SINCE"]


def register(sub: Any, client: argparse.ArgumentParser) -> None:
    """Add ``grant``, ``revoke``, ``role``, ``grants`` and ``access`` to the commands."""
    moment = argparse.ArgumentParser(add_help=False)
    at = moment.add_mutually_exclusive_group()
    at.add_argument("--version", type=catalog_version, help="read this catalog version")
    at.add_argument("--at", help="read as of a hybrid timestamp or an RFC 3339 time")

    for verb, handler, words in (
        ("grant", cmd_grant, "grant privileges on an object to a principal or a role"),
        ("revoke", cmd_revoke, "take privileges back"),
    ):
        change = sub.add_parser(verb, parents=[client], help=words)
        change.add_argument(
            "privileges", metavar="PRIVILEGE[,PRIVILEGE]", help=f"one of {_privilege_list()}"
        )
        _on_option(change, required=True)
        _to_option(change, required=True)
        change.set_defaults(handler=handler)

    role = sub.add_parser("role", help="create, drop or list roles")
    actions = role.add_subparsers(dest="role_command", required=True, metavar="ACTION")
    create = actions.add_parser("create", parents=[client], help="create a role")
    create.add_argument("name", help="the role, as typed in SQL")
    create.add_argument("--if-not-exists", action="store_true", help="no error if it exists")
    create.set_defaults(handler=cmd_role_create)
    drop = actions.add_parser("drop", parents=[client], help="drop a role and its grants")
    drop.add_argument("name", help="the role, as typed in SQL")
    drop.add_argument("--if-exists", action="store_true", help="no error if it does not exist")
    drop.set_defaults(handler=cmd_role_drop)
    listed = actions.add_parser("list", parents=[client, moment], help="every role")
    listed.set_defaults(handler=cmd_role_list)

    grants = sub.add_parser(
        "grants", parents=[client, moment], help="the grants: all, on an object, or to a grantee"
    )
    which = grants.add_mutually_exclusive_group()
    _on_option(which, required=False)
    _to_option(which, required=False)
    grants.set_defaults(handler=cmd_grants)

    access = sub.add_parser("access", help="who could do what, and what changed")
    asks = access.add_subparsers(dest="access_command", required=True, metavar="ACTION")
    who = asks.add_parser(
        "who-can",
        parents=[client, moment],
        help="who could do a privilege on an object, through which grants",
    )
    who.add_argument("privilege", metavar="PRIVILEGE", help=f"one of {_privilege_list()}")
    who.add_argument(
        "object",
        metavar="OBJECT",
        nargs="?",
        help="SALES.ORDERS, a schema or a role, as in SQL (none: the catalog)",
    )
    who.add_argument("--kind", type=str.lower, choices=_KINDS, help="what the object is")
    who.add_argument("--principal", help="only this principal (its exact name)")
    who.set_defaults(handler=cmd_who_can)
    diff = asks.add_parser(
        "diff", parents=[client], help="the grants made and taken back between two moments"
    )
    for end, metavar in (("start", "FROM"), ("end", "TO")):
        diff.add_argument(
            end, metavar=metavar, help="a catalog version (a number) or an RFC 3339 time"
        )
    diff.set_defaults(handler=cmd_access_diff)


def _on_option(parser: Any, *, required: bool) -> None:
    parser.add_argument(
        "--on",
        nargs="+",
        metavar=("KIND", "NAME"),
        required=required,
        help=f"the object: KIND ({', '.join(_KINDS)}) then its NAME as in SQL (none for catalog)",
    )


def _to_option(parser: Any, *, required: bool) -> None:
    parser.add_argument(
        "--to",
        nargs=2,
        metavar=("user|role", "NAME"),
        required=required,
        help="the grantee: user (a principal, its exact name) or role (as in SQL)",
    )


def _privilege_list() -> str:
    return ", ".join(Privilege)


def _privileges(text: str) -> list[Privilege]:
    """Return the privileges of ``SELECT,modify``.

    Raises:
        UsageError: a word that is no privilege.
    """
    found = []
    for word in (w.strip().upper() for w in text.split(",")):
        if word not in Privilege.__members__:
            raise UsageError(f"unknown privilege {word or '(empty)'}: one of {_privilege_list()}")
        found.append(Privilege(word))
    return found


def _object(on: list[str]) -> tuple[SecurableKind, str | None]:
    """Return the kind and the name as typed of ``--on KIND [NAME]``.

    Raises:
        UsageError: an unknown kind, a missing or extra name.
    """
    kind_text, *rest = on
    if kind_text.lower() not in _KINDS:
        raise UsageError(f"--on {kind_text}: an object is one of {', '.join(_KINDS)}")
    kind = SecurableKind(kind_text.lower())
    if len(rest) > 1:
        raise UsageError(f"--on {kind} takes one NAME, got {' '.join(rest)}")
    name = rest[0] if rest else None
    if (name is None) != (kind is SecurableKind.CATALOG):
        needs = "takes no NAME" if kind is SecurableKind.CATALOG else "needs the object's NAME"
        raise UsageError(f"--on {kind} {needs}")
    return kind, name


def _grantee(to: list[str]) -> tuple[GranteeKind, str]:
    """Return ``--to user|role NAME``.

    Raises:
        UsageError: neither ``user`` nor ``role``.
    """
    kind, name = to
    if kind.lower() not in _GRANTEES:
        raise UsageError(f"--to {kind}: a grantee is a user (a principal) or a role")
    return GranteeKind(kind.lower()), name


def _change(args: argparse.Namespace, verb: str) -> View:
    """Grant or revoke (``verb``) what the arguments name, with exact names."""
    privileges = _privileges(args.privileges)
    kind, typed = _object(args.on)
    to, grantee = _grantee(args.to)
    schema, name = None, typed
    if typed is not None and kind in (SecurableKind.TABLE, SecurableKind.VIEW):
        schema, name = parse_qualified(typed, str(kind))
    elif typed is not None:
        name = parse_name(typed)
    exact = grantee if to is GranteeKind.USER else parse_name(grantee)
    with client_of(args) as client:
        send = client.grant if verb == "grant" else client.revoke
        result = send(privileges, kind, name, schema, to=to, grantee=exact)
    shown = ".".join(n for n in (schema, name) if n is not None)
    words = f"{','.join(privileges)} ON {kind.upper()} {shown}".rstrip()
    words += f" {'TO' if verb == 'grant' else 'FROM'} {to.upper()} {exact}"
    return _result_view(result, f"{verb.upper()} {words}")


def cmd_grant(args: argparse.Namespace) -> View:
    """Grant privileges."""
    return _change(args, "grant")


def cmd_revoke(args: argparse.Namespace) -> View:
    """Revoke privileges."""
    return _change(args, "revoke")


def _result_view(result: ApplyResult, what: str) -> View:
    changed = any(result.applied)
    data = {
        "version": result.version,
        "applied": list(result.applied),
        "activation_ts": result.activation_ts,
    }
    return View(
        data,
        ["VERSION", "CHANGED", "ACTIVATION"],
        [[str(result.version), "yes" if changed else "no-op", hlc_time(result.activation_ts)]],
        title=what if changed else f"{what}: nothing to change",
    )


def cmd_role_create(args: argparse.Namespace) -> View:
    """Create a role."""
    name = parse_name(args.name)
    with client_of(args) as client:
        result = client.create_role(name, args.if_not_exists)
    return _result_view(result, f"CREATE ROLE {name}")


def cmd_role_drop(args: argparse.Namespace) -> View:
    """Drop a role."""
    name = parse_name(args.name)
    with client_of(args) as client:
        result = client.drop_role(name, args.if_exists)
    return _result_view(result, f"DROP ROLE {name}")


def _role_row(role: RoleBody) -> list[str]:
    return [role.name, "\n".join(role.holds), "\n".join(role.members)]


def cmd_role_list(args: argparse.Namespace) -> View:
    """List the roles."""
    with client_of(args) as client:
        body = client.roles(args.version, args.at)
    return View(
        body.model_dump(mode="json"),
        ["ROLE", "HOLDS", "GRANTED TO"],
        [_role_row(r) for r in body.roles],
        title=f"{len(body.roles)} role(s) at version {body.version}",
    )


def _grant_row(grant: GrantBody) -> list[str]:
    return [str(grant.id), grant.words, hlc_time(grant.update_ts)]


def cmd_grants(args: argparse.Namespace) -> View:
    """List the grants: all, on one object, or to one grantee."""
    kind, name = _object(args.on) if args.on is not None else (None, None)
    to, grantee = _grantee(args.to) if args.to is not None else (None, None)
    with client_of(args) as client:
        body = client.grants(kind, name, to, grantee, args.version, args.at)
    return View(
        body.model_dump(mode="json"),
        GRANT_COLUMNS,
        [_grant_row(g) for g in body.grants],
        title=f"{len(body.grants)} grant(s) at version {body.version}",
    )


def _chain(grants: list[GrantBody]) -> str:
    return "\n".join(g.words for g in grants)


def _holder_row(body: WhoCanBody, holder: HolderBody) -> list[str]:
    through = _chain(body.chain(holder.through))
    if holder.cluster_role is not None:
        through = f"its cluster role {holder.cluster_role}" + (f"\n{through}" if through else "")
    return [f"{holder.kind.upper()} {holder.name}", through, _chain(body.chain(holder.usage))]


def cmd_who_can(args: argparse.Namespace) -> View:
    """Show who could do a privilege on an object, and through which grants."""
    privileges = _privileges(args.privilege)
    if len(privileges) != 1:
        raise UsageError(f"who-can asks about one privilege at a time, not {args.privilege}")
    privilege = privileges[0]
    with client_of(args) as client:
        body = client.who_can(
            privilege, args.object, args.kind, args.principal, args.version, args.at
        )
    what = f"{body.on} {body.object}".rstrip()
    return View(
        body.model_dump(mode="json"),
        ["HOLDER", "THROUGH", "SCHEMA USAGE THROUGH"],
        [_holder_row(body, h) for h in body.holders],
        title=f"who could {privilege} on {what} at version {body.version}",
        caption=None if body.holders else "nobody",
    )


def _end(text: str) -> tuple[str | None, int | None]:
    """Return one end of ``access diff`` as (moment, version): a number is a version."""
    return (None, catalog_version(text)) if text.isdigit() else (text, None)


def cmd_access_diff(args: argparse.Namespace) -> View:
    """Show the grants made and taken back between two versions or moments."""
    (start, start_version), (end, end_version) = _end(args.start), _end(args.end)
    with client_of(args) as client:
        body = client.access_diff(start, end, from_version=start_version, to_version=end_version)
    rows = [["granted", *_grant_row(g)] for g in body.granted]
    rows += [["revoked", *_grant_row(g)] for g in body.revoked]
    return View(
        body.model_dump(mode="json"),
        ["CHANGE", *GRANT_COLUMNS],
        rows,
        title=f"grants from version {body.from_version} to {body.to_version}",
        caption=None if rows else "no grant made or taken back",
    )
