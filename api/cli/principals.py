"""``catalog principal``: service principals that engines sign in as (``/v1/principals``).

An admin creates one per pipeline or engine; its client id and secret go into the engine's
configuration (``credential=<client id>:<secret>``)::

    catalog principal create nightly-etl --role writer
    catalog principal list
    catalog principal role analyst reader
    catalog principal rotate nightly-etl
    catalog principal drop nightly-etl

The secret is printed once, by ``create`` and ``rotate``; the catalog keeps only its hash.
"""

from __future__ import annotations

import argparse
from typing import Any

from api.cli.base import client_of
from api.cli.output import View
from api.wire.principals import PrincipalBody, PrincipalCredentials
from api.wire.roles import Role

COLUMNS = ["NAME", "ROLE", "CLIENT ID", "SECRETS"]
_ROLES = [str(r) for r in Role]


def register(sub: Any, client: argparse.ArgumentParser) -> None:
    """Add ``principal create|list|role|rotate|drop`` to the ``catalog`` commands."""
    principal = sub.add_parser("principal", help="service principals engines sign in as")
    actions = principal.add_subparsers(dest="principal_command", required=True, metavar="ACTION")
    create = actions.add_parser(
        "create",
        parents=[client],
        help="create a principal and print its client id and secret (shown once)",
    )
    create.add_argument("name", help="the principal's name (a pipeline's, an engine's)")
    create.add_argument("--role", required=True, choices=_ROLES, help="what it may do")
    create.set_defaults(handler=cmd_principal_create)
    listed = actions.add_parser("list", parents=[client], help="every principal")
    listed.set_defaults(handler=cmd_principal_list)
    role = actions.add_parser("role", parents=[client], help="give a principal another role")
    role.add_argument("name", help="the principal")
    role.add_argument("role", choices=_ROLES, help="its new role, at once for its tokens")
    role.set_defaults(handler=cmd_principal_role)
    rotate = actions.add_parser(
        "rotate", parents=[client], help="give a principal a new secret (its tokens stop)"
    )
    rotate.add_argument("name", help="the principal")
    rotate.set_defaults(handler=cmd_principal_rotate)
    drop = actions.add_parser("drop", parents=[client], help="drop a principal (its tokens stop)")
    drop.add_argument("name", help="the principal")
    drop.set_defaults(handler=cmd_principal_drop)


def _row(principal: PrincipalBody) -> list[str]:
    return [
        principal.name,
        str(principal.role),
        principal.client_id,
        str(principal.credential_version),
    ]


def _credentials(made: PrincipalCredentials, what: str) -> View:
    credential = f"{made.client_id}:{made.client_secret}"
    body = {**made.model_dump(mode="json"), "credential": credential}
    return View(
        body,
        ["NAME", "ROLE", "CREDENTIAL (shown once: keep it safe)"],
        [[made.name, str(made.role), credential]],
        title=f"principal {made.name} {what} at version {made.version}",
    )


def cmd_principal_create(args: argparse.Namespace) -> View:
    """Create a principal."""
    with client_of(args) as client:
        return _credentials(client.create_principal(args.name, args.role), "created")


def cmd_principal_list(args: argparse.Namespace) -> View:
    """List the principals."""
    with client_of(args) as client:
        found = client.principals()
    data = {"principals": [p.model_dump(mode="json") for p in found]}
    return View(data, COLUMNS, [_row(p) for p in found], title=f"{len(found)} principal(s)")


def cmd_principal_role(args: argparse.Namespace) -> View:
    """Give a principal another role."""
    with client_of(args) as client:
        changed = client.change_principal(args.name, args.role)
    return View(changed.model_dump(mode="json"), COLUMNS, [_row(changed)], title="role changed")


def cmd_principal_rotate(args: argparse.Namespace) -> View:
    """Give a principal a new secret."""
    with client_of(args) as client:
        return _credentials(client.rotate_principal_secret(args.name), "given a new secret")


def cmd_principal_drop(args: argparse.Namespace) -> View:
    """Drop a principal."""
    with client_of(args) as client:
        client.drop_principal(args.name)
    return View({"dropped": args.name}, title=f"principal {args.name} dropped")
