"""Grant checks of a request: may its caller do this to that object, on the catalog it reads?

Routes that act on one object ask here (``permit``, ``sees``, ``check_commands``); the rules
are the catalog's (``catalog.access``), decided on the node's local catalog at the version the
request reads, with no round trip. With auth off every request may do everything.

A principal whose cluster role does not cover what it creates (``none``, or a reader given
``CREATE`` on a schema) becomes the owner of what it creates: an ``OWNERSHIP`` grant in the same
version (``GrantCommand.if_created``), so it can go on using it.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Sequence
from typing import Any

from fastapi import Request

from api.server.audit import record_denial, record_grants
from api.server.claims import Claims
from api.server.errors import ApiError
from api.wire.codes import Code
from catalog.access import FLOOR, Caller, holds, role_covers, sees
from catalog.catalog import Catalog
from catalog.command_privileges import Need, needs
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
from catalog.errors import (
    AccessDeniedError,
    BatchPosition,
    CatalogError,
    ErrorCode,
    NotFoundError,
)
from catalog.event_feed import CatalogEventParameters
from catalog.grant_names import grant_words, securable_name
from catalog.manager import Precondition
from catalog.prepare import prepare
from catalog.visible import visible_catalog


def caller(request: Request) -> Caller | None:
    """Return who the request's token stands for, or None with auth off."""
    claims: Claims | None = getattr(request.state, "claims", None)
    if claims is None:
        return None
    return Caller(claims.principal_id, claims.groups, PrincipalRole(str(claims.role)))


VISIBLE_KEPT = 64
"""How many callers' parts of catalog versions a node keeps (``seen_catalog``)."""


def seen_catalog(request: Request, catalog: Catalog) -> Catalog:
    """Return ``catalog`` as the caller may see it (all of it with auth off or a reader).

    A caller's part of a version is kept (the last ``VISIBLE_KEPT``), so a client reading one
    table after another does not rebuild it each time.
    """
    who = caller(request)
    if who is None or role_covers(who.role, Privilege.SELECT):
        return catalog
    kept: OrderedDict[Any, Catalog] = request.app.state.__dict__.setdefault(
        "visible_catalogs", OrderedDict()
    )
    latest = _latest(request)
    key = (catalog.version, catalog.activation_ts, latest.version, who)
    found = kept.get(key)
    if found is None:
        found = kept[key] = visible_catalog(catalog, who, latest)
        while len(kept) > VISIBLE_KEPT:
            kept.popitem(last=False)
    else:
        kept.move_to_end(key)
    return found


def may(
    request: Request, catalog: Catalog, privilege: Privilege, kind: SecurableKind, object_id: int
) -> bool:
    """Return whether the caller holds ``privilege`` on the object in ``catalog`` (and now)."""
    who = caller(request)
    if who is None or role_covers(who.role, privilege):  # the role is the latest catalog's
        return True
    return holds(catalog, who, privilege, kind, object_id) and _still(
        request, catalog, kind, object_id, lambda now: holds(now, who, privilege, kind, object_id)
    )


def visible(request: Request, catalog: Catalog, kind: SecurableKind, object_id: int) -> bool:
    """Return whether the caller may know the object exists (``catalog.access.sees``; and now)."""
    who = caller(request)
    if who is None or role_covers(who.role, Privilege.SELECT):  # sees everything, now too
        return True
    return sees(catalog, who, kind, object_id) and _still(
        request, catalog, kind, object_id, lambda now: sees(now, who, kind, object_id)
    )


def _latest(request: Request) -> Catalog:
    latest: Catalog = request.app.state.node.service.latest_catalog()
    return latest


def _still(
    request: Request,
    catalog: Catalog,
    kind: SecurableKind,
    object_id: int,
    check: Callable[[Catalog], bool],
) -> bool:
    """Return whether a decision on an earlier ``catalog`` holds now too (``check``).

    For an object still there, on the latest catalog: a grant taken back ends reads of the
    past as well.
    """
    latest = _latest(request)
    if latest is catalog or latest.version == catalog.version:
        return True
    return not object_exists(latest, kind, object_id) or check(latest)


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
    claims: Claims = request.state.claims
    refused = ApiError(Code.FORBIDDEN, _refusal(request, privilege, kind, object_id, name))
    record_denial(
        request,
        refused.code,
        refused.message,
        claims.subject,
        privilege=privilege,
        object=_what(kind, object_id, name),
    )
    raise refused


def _what(kind: SecurableKind, object_id: int, name: str | None) -> str:
    if kind is SecurableKind.CATALOG:
        return "the catalog"
    return f"{kind} {name}" if name is not None else f"the {kind} with id {object_id}"


def _refusal(
    request: Request, privilege: Privilege, kind: SecurableKind, object_id: int, name: str | None
) -> str:
    """Say why the caller may not: its role, and what it would need."""
    claims: Claims = request.state.claims
    return (
        f"{claims.subject} has the {claims.role} role and may not do this: it needs the "
        f"{FLOOR[privilege]} role, or {privilege} on {_what(kind, object_id, name)} granted"
    )


def check_commands(
    request: Request, latest: Catalog, commands: Sequence[CommandBase], warehouse: str | None
) -> tuple[list[CommandBase], list[int], Precondition | None]:
    """Return the batch to run (with the creator's ownership grants) and its privilege check.

    The check is a precondition: the manager runs it on the very catalog it judges the batch
    on, so no grant changed between the check and the change. Each command is judged on the
    catalog the commands before it leave, so a batch may create a schema and then tables in
    it; a command that does not fit there is left for the batch itself to refuse, with its own
    error, on the same catalog. The ownership grants depend on the caller and the commands
    alone (``GrantCommand.if_created``), so a resent batch is the same batch.

    Returns:
        The batch, where in it each of ``commands`` stands, and the check (None when the
        caller's cluster role covers the whole batch, or auth is off).
    """
    who = caller(request)
    if who is None:
        return list(commands), list(range(len(commands))), None
    batch: list[CommandBase] = []
    positions: list[int] = []
    for command in commands:
        positions.append(len(batch))
        batch.extend([command, *_ownership(request, who, command)])
    if _covered(who, latest, commands):
        return batch, positions, None
    sent = set(positions)

    def check(catalog: Catalog) -> None:
        current = catalog
        for index, command in enumerate(batch):
            if index in sent:  # numbered in the batch run, as the batch's own refusals are
                for privilege, kind, object_id in needs(command, current):
                    _allow(request, who, current, (privilege, kind, object_id), index + 1)
            try:
                current = prepare(current, [command], warehouse=warehouse).catalog
            except CatalogError:
                return  # the batch refuses itself here, on this same catalog

    return batch, positions, check


def _allow(request: Request, who: Caller, catalog: Catalog, need: Need, number: int) -> None:
    """Refuse command ``number`` unless ``who`` holds ``need``.

    An object the caller may not see is refused as missing, so its name tells nothing.

    Raises:
        NotFoundError: the object is one the caller may not see.
        AccessDeniedError: FORBIDDEN, naming the privilege and the object (and audited).
    """
    privilege, kind, object_id = need
    if holds(catalog, who, privilege, kind, object_id):
        return
    name = securable_name(kind, object_id, catalog)
    refused: CatalogError
    if kind in _HIDDEN_AS_MISSING and not sees(catalog, who, kind, object_id):
        refused = NotFoundError(f"{kind} {name} not found", code=_HIDDEN_AS_MISSING[kind])
    else:
        refused = AccessDeniedError(_refusal(request, privilege, kind, object_id, name))
    claims: Claims = request.state.claims
    what = _what(kind, object_id, name)
    record_denial(
        request,
        str(refused.code),
        refused.message,
        claims.subject,
        privilege=privilege,
        object=what,
    )
    refused.position = BatchPosition(number)
    raise refused


_HIDDEN_AS_MISSING = {
    SecurableKind.SCHEMA: ErrorCode.SCHEMA_NOT_FOUND,
    SecurableKind.TABLE: ErrorCode.TABLE_NOT_FOUND,
    SecurableKind.VIEW: ErrorCode.VIEW_NOT_FOUND,
}


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


def sees_event(
    who: Caller,
    before: Catalog,
    after: Catalog,
    event: CatalogEventParameters,
    now: Catalog | None = None,
) -> bool:
    """Return whether ``who`` may see ``event``: whether it sees the event's object.

    The object is judged where it exists: after the change, or before it for a drop; and,
    with ``now`` (the latest catalog), now too if it is still there. An index is its
    table's; zones, system views, principals, roles and grants are the cluster's, which
    only a cluster role sees.
    """
    if role_covers(who.role, Privilege.SELECT):
        return True
    found = _event_object(event, (after, before))
    if found is None or not sees(found[0], who, found[1], found[2]):
        return False
    still = None if now is None else _event_object(event, (now,))
    return still is None or sees(now or after, who, still[1], still[2])


def _event_object(
    event: CatalogEventParameters, catalogs: tuple[Catalog, ...]
) -> tuple[Catalog, SecurableKind, int] | None:
    """Return the first of ``catalogs`` holding the event's object, and the object."""
    subject = event.subject
    for cat in catalogs:
        if subject.type == "index":
            index = cat.find_index_by_id(subject.id)
            if index is not None and object_exists(cat, SecurableKind.TABLE, index.table_id):
                return cat, SecurableKind.TABLE, index.table_id
            continue
        kind = _SUBJECT_KINDS.get(subject.type)
        if kind is not None and object_exists(cat, kind, subject.id):
            return cat, kind, subject.id
    return None


_READING = frozenset({Privilege.USAGE, Privilege.SELECT})


def audit_grants(
    request: Request, batch: Sequence[CommandBase], applied: Sequence[bool], after: Catalog
) -> None:
    """Write to the audit trail the grants of more than reading that ``batch`` made.

    ``applied`` is the batch's result (empty when it was answered from the log: nothing new
    was made); ``after`` the catalog at its version.
    """
    granted = []
    for command, made in zip(batch, applied, strict=False):
        if not made or not isinstance(command, GrantCommand):
            continue
        try:
            keys = command.keys(after)
        except CatalogError:  # its object went later in the same batch
            continue
        for key in keys:
            grant_id = after.access.by_key.get(key)
            if grant_id is None:
                continue
            grant = after.grant_by_id(grant_id)
            if grant.privilege not in _READING or grant.on is SecurableKind.ROLE:
                granted.append(grant_words(grant, after))
    if granted:
        claims: Claims | None = getattr(request.state, "claims", None)
        subject = "" if claims is None else claims.subject
        record_grants(request, subject, after.version, granted)
