"""``/v1/grants``, ``/v1/roles`` and ``/v1/access``: the grants, the roles, and who could, at T.

Grants are made and taken back by commands (``grant``, ``revoke``, ``create_role``,
``drop_role`` on ``/v1/ddl``, or ``GRANT``/``REVOKE`` on ``/v1/sql``); these routes read them,
at the latest version, at ``version=N`` or as of ``at=T``, exactly as they were then.
A reader may read them all; a principal of the role ``none`` only the grants to itself.
"""

from __future__ import annotations

import json
from typing import Annotated

from fastapi import APIRouter, Depends, Query, Request
from fastapi.responses import Response

from api.server.auth import require
from api.server.claims import Claims
from api.server.errors import ApiError, problem_responses
from api.server.execution import node_of
from api.server.responses import json_response
from api.server.routes.params import AT_DOC, VERSION_DOC, resolve_catalog
from api.sql import ShowGrants
from api.wire.codes import Code
from api.wire.grants import (
    AccessDiffBody,
    GrantBody,
    GrantsBody,
    RoleBody,
    RolesBody,
    WhoCanBody,
)
from api.wire.roles import Role
from catalog.access import who_can
from catalog.catalog import Catalog
from catalog.commands.grants import GrantCommand
from catalog.descriptors import (
    CATALOG_ID,
    GrantDescriptor,
    GranteeKind,
    Privilege,
    SecurableKind,
)
from catalog.errors import ValidationError
from catalog.grant_names import grantee_name, securable_name
from catalog.identifiers import DEFAULT_SCHEMA, parse_name

router = APIRouter(
    prefix="/v1",
    tags=["security"],
    responses=problem_responses(400, 401, 403, 404, 410, 422, 503),
)

Version = Annotated[int | None, Query(ge=0, description=VERSION_DOC)]
At = Annotated[str | None, Query(min_length=1, max_length=64, description=AT_DOC)]
ObjectName = Annotated[
    str | None,
    Query(
        alias="object",
        min_length=1,
        max_length=300,
        description="The object as SQL names it: SALES.ORDERS (a table or view), SALES (a "
        "schema), a role's name; left out for the catalog.",
    ),
]
Kind = Annotated[SecurableKind | None, Query(description="What the object is.")]


def _securable(
    cat: Catalog, kind: SecurableKind | None, name: str | None
) -> tuple[SecurableKind, int]:
    """Return the object a query names; a dotted name without ``kind`` is a table or view.

    Raises:
        NotFoundError: the object is missing.
        ValidationError: the kind and name do not fit.
    """
    if name is None:
        if kind not in (None, SecurableKind.CATALOG):
            raise ValidationError(f"object= names the {kind} to ask about")
        return SecurableKind.CATALOG, CATALOG_ID
    if kind is SecurableKind.CATALOG:
        raise ValidationError("the catalog takes no object= name")
    if kind is SecurableKind.ROLE:
        return kind, cat.role(parse_name(name)).id
    schema, _, rest = name.rpartition(".")
    if kind is SecurableKind.SCHEMA or (kind is None and not schema):
        return SecurableKind.SCHEMA, cat.schema(parse_name(name)).id
    schema_name, object_name = parse_name(schema or DEFAULT_SCHEMA), parse_name(rest)
    if kind is SecurableKind.VIEW or (
        kind is None and cat.find_view(schema_name, object_name) is not None
    ):
        return SecurableKind.VIEW, cat.view(schema_name, object_name).id
    return SecurableKind.TABLE, cat.table(schema_name, object_name).id


def _own_grants_only(
    request: Request,
    cat: Catalog,
    to: GranteeKind | None,
    grantee: str | None,
    on: object = None,
) -> None:
    """Refuse a caller with no cluster role reading grants other than those to itself.

    It is the principal its token names (by id, not by name), and names no object.
    """
    claims: Claims | None = getattr(request.state, "claims", None)
    if claims is None or claims.role is not Role.NONE:
        return
    mine = (
        cat.find_principal_by_id(claims.principal_id) if claims.principal_id is not None else None
    )
    if on is None and to is GranteeKind.USER and mine is not None and grantee == mine.name:
        return
    raise ApiError(
        Code.FORBIDDEN,
        f"{claims.subject} has the none role: it may read only the grants to itself "
        f"(to=user&grantee={claims.subject}, and no object)",
    )


@router.get("/grants", response_model=GrantsBody, dependencies=[Depends(require(Role.NONE))])
async def list_grants(
    request: Request,
    kind: Kind = None,
    name: ObjectName = None,
    to: Annotated[GranteeKind | None, Query(description="Only grants to a user or role.")] = None,
    grantee: Annotated[str | None, Query(min_length=1, max_length=300)] = None,
    version: Version = None,
    at: At = None,
) -> Response:
    """The grants (``SHOW GRANTS``): all, on one object (and what holds it), or to one grantee."""
    if (to is None) != (grantee is None):
        raise ValidationError("to= and grantee= go together: to=user&grantee=alice")
    cat = await resolve_catalog(node_of(request), version, at)
    _own_grants_only(request, cat, to, grantee, kind or name)
    holder = None
    if to is not None and grantee is not None:
        holder = to, (grantee if to is GranteeKind.USER else parse_name(grantee))
    on = None if kind is None and name is None else _securable(cat, kind, name)
    return json_response(_grants(cat, on, holder))


def _grants(
    cat: Catalog, on: tuple[SecurableKind, int] | None, holder: tuple[GranteeKind, str] | None
) -> GrantsBody:
    """Return the grants on ``on`` or to ``holder`` (by exact name), or all of them."""
    access = cat.access
    found: list[GrantDescriptor]
    if holder is not None:
        to, name = holder
        found = access.grants_to(
            (to, cat.principal(name).id if to is GranteeKind.USER else cat.role(name).id)
        )
    elif on is not None:
        found = access.grants_on(on)
    else:
        found = cat.grants()
    return GrantsBody(
        version=cat.version,
        activation_ts=cat.activation_ts,
        grants=[GrantBody.of(g, cat) for g in sorted(found, key=lambda g: g.id)],
    )


def shown_grants(request: Request, cat: Catalog, shown: ShowGrants) -> GrantsBody:
    """Answer SQL's ``SHOW GRANTS`` (exact names, as the SQL parser gives them) on ``cat``.

    Raises:
        ApiError: FORBIDDEN for a caller of the role ``none`` asking about others.
        NotFoundError: the object or grantee is missing.
    """
    _own_grants_only(request, cat, shown.to, shown.grantee, shown.on)
    if shown.to is not None and shown.grantee is not None:
        return _grants(cat, None, (shown.to, shown.grantee))
    if shown.on is None:
        return _grants(cat, None, None)
    probe = GrantCommand(
        privileges=(Privilege.USAGE if shown.on is SecurableKind.ROLE else Privilege.OWNERSHIP,),
        on=shown.on,
        schema=shown.schema,
        name=shown.name,
        to=GranteeKind.ROLE,
        grantee="-",
    )
    return _grants(cat, (shown.on, probe.securable_id(cat)), None)


@router.get("/roles", response_model=RolesBody, dependencies=[Depends(require(Role.READER))])
async def list_roles(request: Request, version: Version = None, at: At = None) -> Response:
    """Every role, the roles it holds, and whom it is granted to."""
    cat = await resolve_catalog(node_of(request), version, at)
    access = cat.access
    roles = []
    for role in cat.roles():
        holds = [
            grantee_name(GranteeKind.ROLE, g.on_id, cat) or f"#{g.on_id}"
            for g in access.grants_to((GranteeKind.ROLE, role.id))
            if g.on is SecurableKind.ROLE
        ]
        members = [
            f"{g.to.upper()} {grantee_name(g.to, g.to_id, cat) or g.to_id}"
            for g in access.grants_on((SecurableKind.ROLE, role.id))
        ]
        roles.append(RoleBody(name=role.name, holds=sorted(holds), members=sorted(members)))
    return json_response(RolesBody(version=cat.version, roles=roles))


@router.get("/access", response_model=WhoCanBody, dependencies=[Depends(require(Role.READER))])
async def who_could(
    request: Request,
    privilege: Annotated[Privilege, Query(description="The privilege asked about.")],
    kind: Kind = None,
    name: ObjectName = None,
    principal: Annotated[
        str | None, Query(min_length=1, max_length=300, description="Only this principal.")
    ] = None,
    version: Version = None,
    at: At = None,
) -> Response:
    """Who could do ``privilege`` on the object at that version, and through which grants."""
    cat = await resolve_catalog(node_of(request), version, at)
    on, object_id = _securable(cat, kind, name)
    holders = who_can(cat, privilege, on, object_id)
    if principal is not None:
        wanted = (GranteeKind.USER, cat.principal(principal).id)
        holders = [h for h in holders if h.grantee == wanted]
    named = securable_name(on, object_id, cat) or ""
    document = WhoCanBody.document(cat, privilege, on, named, holders)
    return Response(json.dumps(document, separators=(",", ":")), media_type="application/json")


@router.get(
    "/access/diff", response_model=AccessDiffBody, dependencies=[Depends(require(Role.READER))]
)
async def access_diff(
    request: Request,
    from_version: Annotated[int | None, Query(alias="from_version", ge=0)] = None,
    to_version: Annotated[int | None, Query(alias="to_version", ge=0)] = None,
    from_at: Annotated[str | None, Query(alias="from", min_length=1, max_length=64)] = None,
    to_at: Annotated[str | None, Query(alias="to", min_length=1, max_length=64)] = None,
) -> Response:
    """The grants made and taken back between two moments (``from``/``to``, or versions)."""
    node = node_of(request)
    before = await resolve_catalog(node, from_version, from_at)
    after = await resolve_catalog(node, to_version, to_at)
    old, new = set(before.access.grants.keys()), set(after.access.grants.keys())
    granted = [after.grant_by_id(i) for i in sorted(new - old)]
    revoked = [before.grant_by_id(i) for i in sorted(old - new)]
    body = AccessDiffBody(
        from_version=before.version,
        to_version=after.version,
        granted=[GrantBody.of(g, after, before) for g in granted],
        revoked=[GrantBody.of(g, before, after) for g in revoked],
    )
    return json_response(body)
