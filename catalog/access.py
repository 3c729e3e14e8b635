"""Who may do what: access decisions and "who could", answered on one catalog version.

A caller is a principal (by id) and, for an outside provider's user, the groups its token
names: each group is the role of the same name (ignoring case), when there is one. Its
grantees are itself, those roles, and every role any of them holds, through ``USAGE`` on a
role, transitively.
Privileges flow down (``catalog.descriptors.grants``): one held on the catalog holds on every
schema, table and view; on a schema, on what is in it. ``OWNERSHIP`` holds every privilege.
Reaching a table or view also takes ``USAGE`` on its schema.

A principal's cluster-wide role (``PrincipalRole``) is a floor under its grants: a reader
holds ``USAGE`` and ``SELECT`` everywhere, a writer also ``MODIFY``, ``CREATE``, ``ALTER`` and
``DROP``, an admin everything. Grants add to it; a principal of the role ``none`` holds only
what it is granted.

Every answer reads the one catalog version given, so a decision is exact at the version the
request reads, and "who could at T" is the same question asked of the catalog at T. A
caller's grantees are worked out once per set of grants (``Access.memo``).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass

from catalog.catalog import Catalog
from catalog.descriptors import (
    CATALOG_ID,
    GrantDescriptor,
    GranteeKind,
    PrincipalRole,
    Privilege,
    SecurableKind,
)
from catalog.storage.grants import Access, Grantee, Securable

FLOOR: dict[Privilege, PrincipalRole] = {
    Privilege.USAGE: PrincipalRole.READER,
    Privilege.SELECT: PrincipalRole.READER,
    Privilege.MODIFY: PrincipalRole.WRITER,
    Privilege.CREATE: PrincipalRole.WRITER,
    Privilege.ALTER: PrincipalRole.WRITER,
    Privilege.DROP: PrincipalRole.WRITER,
    Privilege.MANAGE_GRANTS: PrincipalRole.ADMIN,
    Privilege.OWNERSHIP: PrincipalRole.ADMIN,
}
"""The cluster-wide role that holds each privilege on every object without a grant."""

_RANK = {role: rank for rank, role in enumerate(PrincipalRole)}
_MEMO_LIMIT = 4096
"""Callers whose grantees one set of grants remembers; past it, the memo starts afresh."""
ON_TABLES = frozenset(Privilege) - {Privilege.USAGE, Privilege.CREATE}
"""The privileges that, held on a schema or the catalog, make its tables visible."""


@dataclass(frozen=True, slots=True)
class Caller:
    """Who asks: a principal (None for an outside user with no principal) and its groups."""

    principal_id: int | None
    groups: tuple[str, ...] = ()
    role: PrincipalRole = PrincipalRole.NONE


def role_covers(role: PrincipalRole, privilege: Privilege) -> bool:
    """Return whether the cluster-wide ``role`` holds ``privilege`` on every object."""
    return _RANK[role] >= _RANK[FLOOR[privilege]]


def held_roles(access: Access, start: Iterable[Grantee]) -> set[int]:
    """Return the ids of every role ``start`` holds, directly or through other roles."""
    found: set[int] = set()
    queue = deque(start)
    while queue:
        grantee = queue.popleft()
        for grant_id in access.to.get(grantee, ()):
            grant = access.grants[grant_id]
            if grant.on is SecurableKind.ROLE and grant.on_id not in found:
                found.add(grant.on_id)
                queue.append((GranteeKind.ROLE, grant.on_id))
    return found


def grantees(catalog: Catalog, caller: Caller) -> frozenset[Grantee]:
    """Return every grantee whose grants the caller holds: itself and its roles."""
    access = catalog.access
    key = (caller.principal_id, caller.groups)
    found: frozenset[Grantee] | None = access.memo.get(key)
    if found is None:
        start: list[Grantee] = []
        if caller.principal_id is not None:
            start.append((GranteeKind.USER, caller.principal_id))
        if caller.groups:
            wanted = {group.casefold() for group in caller.groups}
            start.extend(
                (GranteeKind.ROLE, role_id)
                for name, role_id in access.role_by_name.items()
                if name.casefold() in wanted
            )
        roles = held_roles(access, start)
        found = frozenset([*start, *((GranteeKind.ROLE, r) for r in roles)])
        if len(access.memo) >= _MEMO_LIMIT:
            access.memo.clear()
        access.memo[key] = found
    return found


def lineage(catalog: Catalog, kind: SecurableKind, object_id: int) -> list[Securable]:
    """Return the object and what holds it, nearest first, up to the catalog."""
    chain: list[Securable] = [(kind, object_id)]
    if kind in (SecurableKind.TABLE, SecurableKind.VIEW):
        found = (
            catalog.find_table_by_id(object_id)
            if kind is SecurableKind.TABLE
            else catalog.find_view_by_id(object_id)
        )
        if found is not None:
            chain.append((SecurableKind.SCHEMA, found.schema_id))
    if kind is not SecurableKind.CATALOG:
        chain.append((SecurableKind.CATALOG, CATALOG_ID))
    return chain


def granted(
    access: Access,
    held: frozenset[Grantee],
    chain: list[Securable],
    privileges: frozenset[Privilege],
) -> bool:
    """Return whether a grant of one of ``privileges`` on ``chain`` is to one of ``held``."""
    for securable in chain:
        for grant_id in access.on.get(securable, ()):
            grant = access.grants[grant_id]
            if grant.privilege in privileges and (grant.to, grant.to_id) in held:
                return True
    return False


def holds(
    catalog: Catalog, caller: Caller, privilege: Privilege, kind: SecurableKind, object_id: int
) -> bool:
    """Return whether ``caller`` holds ``privilege`` on the object (USAGE gate included)."""
    if role_covers(caller.role, privilege):
        return True
    wanted = frozenset({privilege, Privilege.OWNERSHIP})
    return _granted_reaching(catalog, caller, kind, object_id, wanted)


def sees(catalog: Catalog, caller: Caller, kind: SecurableKind, object_id: int) -> bool:
    """Return whether the caller may know the object exists (list it, get a 403 not a 404).

    A schema: ``USAGE`` on it. A table or view: ``USAGE`` on its schema and any privilege on
    it (or on its schema or the catalog, other than ``USAGE`` and ``CREATE``).
    """
    if kind is SecurableKind.SCHEMA:
        return holds(catalog, caller, Privilege.USAGE, kind, object_id)
    if role_covers(caller.role, Privilege.SELECT):
        return True
    return _granted_reaching(catalog, caller, kind, object_id, ON_TABLES)


def _granted_reaching(
    catalog: Catalog,
    caller: Caller,
    kind: SecurableKind,
    object_id: int,
    privileges: frozenset[Privilege],
) -> bool:
    """Return whether the caller is granted one of ``privileges`` on the object or above it.

    A table or view also takes ``USAGE`` on its schema.
    """
    access = catalog.access
    if not access.grants:
        return False
    held = grantees(catalog, caller)
    chain = lineage(catalog, kind, object_id)
    if not granted(access, held, chain, privileges):
        return False
    if len(chain) < 3 or role_covers(caller.role, Privilege.USAGE):
        return True
    schema_usage = frozenset({Privilege.USAGE, Privilege.OWNERSHIP})
    return granted(access, held, chain[1:], schema_usage)


@dataclass(frozen=True, slots=True)
class AccessPath:
    """How a grantee holds a privilege: the grants from the object's down to the grantee.

    ``through`` starts with the grant of the privilege (or ``OWNERSHIP``) and goes on with
    each role grant that hands it on, ending at ``grantee``. ``usage`` is the same for the
    ``USAGE`` a table or view also needs on its schema (empty when none is needed, or when
    the grantee's cluster role covers it). ``cluster_role`` is set when the grantee holds the
    privilege by its cluster-wide role, with no grant.
    """

    grantee: Grantee
    through: tuple[GrantDescriptor, ...]
    usage: tuple[GrantDescriptor, ...] = ()
    cluster_role: PrincipalRole | None = None


def _paths(
    access: Access, chain: list[Securable], privileges: frozenset[Privilege]
) -> dict[Grantee, tuple[GrantDescriptor, ...]]:
    """Return, for every grantee holding one of ``privileges`` on ``chain``, its shortest path."""
    found: dict[Grantee, tuple[GrantDescriptor, ...]] = {}
    queue: deque[Grantee] = deque()
    for securable in chain:
        for grant_id in access.on.get(securable, ()):
            grant = access.grants[grant_id]
            if grant.privilege in privileges and grant.grantee not in found:
                found[grant.grantee] = (grant,)
                queue.append(grant.grantee)
    while queue:  # breadth first: each grantee gets one of its shortest paths
        grantee = queue.popleft()
        if grantee[0] is not GranteeKind.ROLE:
            continue
        for grant_id in access.on.get((SecurableKind.ROLE, grantee[1]), ()):
            member = access.grants[grant_id]
            if member.grantee not in found:
                found[member.grantee] = (*found[grantee], member)
                queue.append(member.grantee)
    return found


def who_can(
    catalog: Catalog, privilege: Privilege, kind: SecurableKind, object_id: int
) -> list[AccessPath]:
    """Return every principal and role that holds ``privilege`` on the object, and how.

    Principals first, then roles, each by id. A role stands for whoever an outside
    provider puts in the group of its name.
    """
    access = catalog.access
    chain = lineage(catalog, kind, object_id)
    granted = _paths(access, chain, frozenset({privilege, Privilege.OWNERSHIP}))
    usage: dict[Grantee, tuple[GrantDescriptor, ...]] | None = None
    if len(chain) == 3:
        usage = _paths(access, chain[1:], frozenset({Privilege.USAGE, Privilege.OWNERSHIP}))
    answer: list[AccessPath] = []
    for principal in catalog.principals():
        grantee = (GranteeKind.USER, principal.id)
        if role_covers(principal.role, privilege):
            answer.append(AccessPath(grantee, (), cluster_role=principal.role))
            continue
        through = granted.get(grantee)
        if through is None:
            continue
        needs = () if usage is None or role_covers(principal.role, Privilege.USAGE) else None
        reach = needs if needs is not None else (usage or {}).get(grantee)
        if reach is not None:
            answer.append(AccessPath(grantee, through, reach))
    for role in catalog.roles():
        grantee = (GranteeKind.ROLE, role.id)
        through = granted.get(grantee)
        reach = () if usage is None else usage.get(grantee)
        if through is not None and reach is not None:
            answer.append(AccessPath(grantee, through, reach))
    return answer
