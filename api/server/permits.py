"""Grant checks of a request: may its caller do this to that object, on the catalog it reads?

Routes that act on one object ask here (``permit``, ``sees``, ``check_commands``); the rules
are the catalog's (``catalog.access``), decided on the node's local catalog at the version the
request reads, with no round trip. With auth off every request may do everything.

A principal whose cluster role does not cover what it creates (``none``, or a reader given
``CREATE`` on a schema) becomes the owner of what it creates: an ``OWNERSHIP`` grant in the same
version (``GrantCommand.if_created``), so it can go on using it.
"""

from __future__ import annotations

from collections.abc import Sequence

from fastapi import Request

from api.server.audit import record_denial, record_grants
from api.server.claims import Claims
from api.server.errors import ApiError
from api.wire.codes import Code
from catalog.access import FLOOR, Caller, holds, role_covers, sees
from catalog.catalog import Catalog
from catalog.command_privileges import needs
from catalog.commands import (
    CreateRoleCommand,
    CreateSchemaCommand,
    CreateTableCommand,
    CreateViewCommand,
    DropRoleCommand,
)
from catalog.commands.base import CommandBase
from catalog.commands.grants import GrantCommand, RevokeCommand, object_exists
from catalog.descriptors import GranteeKind, PrincipalRole, Privilege, SecurableKind
from catalog.errors import CatalogError
from catalog.event_feed import CatalogEventParameters
from catalog.grant_names import grant_words, securable_name
from catalog.prepare import prepare
from catalog.visible import visible_catalog


def caller(request: Request) -> Caller | None:
    """Return who the request's token stands for, or None with auth off."""
    claims: Claims | None = getattr(request.state, "claims", None)
    if claims is None:
        return None
    return Caller(claims.principal_id, claims.groups, PrincipalRole(str(claims.role)))


def seen_catalog(request: Request, catalog: Catalog) -> Catalog:
    """Return ``catalog`` as the caller may see it (all of it with auth off or a reader)."""
    who = caller(request)
    return catalog if who is None else visible_catalog(catalog, who)


def may(
    request: Request, catalog: Catalog, privilege: Privilege, kind: SecurableKind, object_id: int
) -> bool:
    """Return whether the caller holds ``privilege`` on the object in ``catalog``."""
    who = caller(request)
    return who is None or holds(catalog, who, privilege, kind, object_id)


def visible(request: Request, catalog: Catalog, kind: SecurableKind, object_id: int) -> bool:
    """Return whether the caller may know the object exists (``catalog.access.sees``)."""
    who = caller(request)
    return who is None or sees(catalog, who, kind, object_id)


def permit(
    request: Request, catalog: Catalog, privilege: Privilege, kind: SecurableKind, object_id: int
) -> None:
    """Refuse the request unless the caller holds ``privilege`` on the object.

    Raises:
        ApiError: FORBIDDEN, naming the caller, the privilege and the object (recorded in
            the audit trail).
    """
    if may(request, catalog, privilege, kind, object_id):
        return
    name = securable_name(kind, object_id, catalog)
    what = (
        "the catalog"
        if kind is SecurableKind.CATALOG
        else f"{kind} {name}"
        if name is not None
        else f"the {kind} with id {object_id}"
    )
    claims: Claims = request.state.claims
    refused = ApiError(
        Code.FORBIDDEN,
        f"{claims.subject} has the {claims.role} role and may not do this: it needs the "
        f"{FLOOR[privilege]} role, or {privilege} on {what} granted",
    )
    record_denial(
        request, refused.code, refused.message, claims.subject, privilege=privilege, object=what
    )
    raise refused


def check_commands(
    request: Request, catalog: Catalog, commands: Sequence[CommandBase]
) -> tuple[list[CommandBase], list[int]]:
    """Check every privilege a batch takes; return it with the creator's ownership grants.

    Each command is judged on the catalog as the commands before it leave it, so a batch may
    create a schema and then tables in it. A command that does not fit the catalog is left for
    the batch itself to refuse, with its own error. The ownership grants depend on the caller
    alone (``GrantCommand.if_created``), so a resent batch is the same batch.

    Returns:
        The batch to run, and where in it each of ``commands`` stands.

    Raises:
        ApiError: FORBIDDEN for the first privilege the caller lacks.
    """
    who = caller(request)
    if who is None or _covered(who, catalog, commands):
        return list(commands), list(range(len(commands)))
    batch: list[CommandBase] = []
    positions: list[int] = []
    current: Catalog | None = catalog
    for command in commands:
        if current is not None:
            for privilege, kind, object_id in needs(command, current):
                permit(request, current, privilege, kind, object_id)
        positions.append(len(batch))
        step = [command, *_ownership(request, who, command)]
        batch.extend(step)
        try:
            current = None if current is None else prepare(current, step).catalog
        except CatalogError:
            current = None  # the batch refuses itself there; nothing after it runs
    return batch, positions


_GRANTING = (GrantCommand, RevokeCommand, CreateRoleCommand, DropRoleCommand)


def _covered(who: Caller, catalog: Catalog, commands: Sequence[CommandBase]) -> bool:
    """Return whether the caller's cluster role alone covers the whole batch.

    An admin's always does; a writer's, when no command grants and every privilege the
    commands take on the catalog before the batch is one a writer holds everywhere (what the
    batch creates needs nothing more of a writer, who owns nothing it makes).
    """
    if role_covers(who.role, Privilege.OWNERSHIP):
        return True
    if not role_covers(who.role, Privilege.DROP) or any(isinstance(c, _GRANTING) for c in commands):
        return False
    return all(
        role_covers(who.role, privilege)
        for command in commands
        for privilege, _, _ in needs(command, catalog)
    )


def _ownership(request: Request, who: Caller, command: CommandBase) -> list[CommandBase]:
    """Return the grant making the caller owner of what ``command`` creates, if it needs one.

    A caller whose cluster role may drop what it creates needs none; an outside provider's
    user, with no principal, cannot own (its groups' grants are what it holds).
    """
    made = _made(command)
    if made is None or who.principal_id is None or role_covers(who.role, Privilege.DROP):
        return []
    kind, schema, name = made
    claims: Claims = request.state.claims
    owner = GrantCommand(
        privileges=(Privilege.OWNERSHIP,),
        on=kind,
        schema=schema,
        name=name,
        to=GranteeKind.USER,
        grantee=claims.subject,
        if_created=True,
    )
    return [owner]


def _made(command: CommandBase) -> tuple[SecurableKind, str | None, str] | None:
    """Return the kind, schema and name of what ``command`` creates, if it creates one."""
    if isinstance(command, CreateSchemaCommand):
        return SecurableKind.SCHEMA, None, command.name
    if isinstance(command, CreateTableCommand):
        return SecurableKind.TABLE, command.schema_, command.name
    if isinstance(command, CreateViewCommand):
        return SecurableKind.VIEW, command.schema_, command.name
    return None


_SUBJECT_KINDS = {
    "schema": SecurableKind.SCHEMA,
    "table": SecurableKind.TABLE,
    "view": SecurableKind.VIEW,
}


def sees_event(who: Caller, before: Catalog, after: Catalog, event: CatalogEventParameters) -> bool:
    """Return whether ``who`` may see ``event``: whether it sees the event's object.

    The object is judged where it exists: after the change, or before it for a drop. An
    index is its table's; zones, system views, principals, roles and grants are the
    cluster's, which only a cluster role sees.
    """
    if role_covers(who.role, Privilege.SELECT):
        return True
    subject = event.subject
    kind, object_id = _SUBJECT_KINDS.get(subject.type), subject.id
    for cat in (after, before):
        if subject.type == "index":
            index = cat.find_index_by_id(subject.id)
            if index is None:
                continue
            kind, object_id = SecurableKind.TABLE, index.table_id
        if kind is None:
            return False
        if object_exists(cat, kind, object_id):
            return sees(cat, who, kind, object_id)
    return False


_READING = frozenset({Privilege.USAGE, Privilege.SELECT})


def audit_grants(request: Request, before: Catalog, after: Catalog) -> None:
    """Write to the audit trail the grants of more than reading made since ``before``."""
    made = set(after.access.grants.keys()) - set(before.access.grants.keys())
    granted = [
        grant_words(grant, after)
        for grant in (after.grant_by_id(i) for i in sorted(made))
        if grant.privilege not in _READING or grant.on is SecurableKind.ROLE
    ]
    if granted:
        claims: Claims | None = getattr(request.state, "claims", None)
        subject = "" if claims is None else claims.subject
        record_grants(request, subject, after.version, granted)
