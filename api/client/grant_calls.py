"""The grant calls both clients share: grants and roles, and who could do what, at any moment.

``grant``, ``revoke``, ``create_role`` and ``drop_role`` are catalog commands sent as one
batch through ``POST /v1/ddl`` (as ``execute`` sends them), so they answer an ``ApplyResult``
and carry a request id that every retry reuses. Like every command they carry exact names:
``SALES``, ``ORDERS``, a principal's name as it was created (``catalog.identifiers.parse_name``
reads a name typed as in SQL).

The reads (``/v1/grants``, ``/v1/roles``, ``/v1/access``, ``/v1/access/diff``) answer at the
latest version, at ``version=N`` or as of ``at=T``, exactly as the grants were then; their
object and role names are read as SQL reads them (unquoted, they fold to upper case).
"""

from __future__ import annotations

from collections.abc import Sequence

from api.client.calls import (
    Call,
    Timestamp,
    execute_call,
    json_of,
    read_params,
    timestamp_param,
)
from api.wire.grants import AccessDiffBody, GrantsBody, RolesBody, WhoCanBody
from catalog.apply_result import ApplyResult
from catalog.commands.grants import GrantCommand, RevokeCommand
from catalog.commands.roles import CreateRoleCommand, DropRoleCommand
from catalog.descriptors import GranteeKind, Privilege, SecurableKind

Privileges = Privilege | str | Sequence[Privilege | str]
"""One privilege (``"SELECT"``) or several (``["USAGE", "SELECT"]``)."""


def _privileges(privileges: Privileges) -> tuple[str, ...]:
    return (privileges,) if isinstance(privileges, str) else tuple(privileges)


def _query(
    version: int | None, at: Timestamp | None, **given: SecurableKind | GranteeKind | str | None
) -> dict[str, str]:
    """Return a read's query: ``version=`` or ``at=``, and each of ``given`` that is not None."""
    params = read_params(version, at)
    params.update({key: str(value) for key, value in given.items() if value is not None})
    return params


def grant_call(
    privileges: Privileges,
    on: SecurableKind | str,
    name: str | None = None,
    schema: str | None = None,
    *,
    to: GranteeKind | str,
    grantee: str,
    request_id: str | None = None,
    message: str | None = None,
) -> Call[ApplyResult]:
    """Grant privileges on an object to a principal (``to="user"``) or a role.

    A role is granted as ``USAGE`` on it: ``grant("USAGE", "role", "ANALYSTS", to="user",
    grantee="ann")``. Granting what is already held changes nothing.

    Args:
        privileges: ``USAGE``, ``SELECT``, ``MODIFY``, ``CREATE``, ``ALTER``, ``DROP``,
            ``MANAGE_GRANTS`` or ``OWNERSHIP``, one or several.
        on: what the object is: ``catalog``, ``schema``, ``table``, ``view`` or ``role``.
        name: the object's exact name; none for the catalog.
        schema: the schema of a table or view.
        to: ``user`` (a principal) or ``role``.
        grantee: the principal's or role's exact name.
        request_id: makes retries safe (see ``execute``).
        message: why, in your words; the new version records it.

    Raises:
        ValidationError: a privilege the object cannot be granted, or a name it lacks.
        CatalogApiError: the server refused (e.g. ``NotFoundError`` ROLE_NOT_FOUND).
    """
    command = GrantCommand(
        privileges=_privileges(privileges), on=on, schema=schema, name=name, to=to, grantee=grantee
    )
    return execute_call(command, request_id, message=message)


def revoke_call(
    privileges: Privileges,
    on: SecurableKind | str,
    name: str | None = None,
    schema: str | None = None,
    *,
    to: GranteeKind | str,
    grantee: str,
    request_id: str | None = None,
    message: str | None = None,
) -> Call[ApplyResult]:
    """Take privileges back (the arguments of ``grant``); revoking what is not held is a no-op.

    Raises:
        ValidationError: a privilege the object cannot be granted, or a name it lacks.
        CatalogApiError: the server refused (e.g. LAST_CATALOG_OWNER).
    """
    command = RevokeCommand(
        privileges=_privileges(privileges), on=on, schema=schema, name=name, to=to, grantee=grantee
    )
    return execute_call(command, request_id, message=message)


def create_role_call(
    name: str,
    if_not_exists: bool = False,
    *,
    request_id: str | None = None,
    message: str | None = None,
) -> Call[ApplyResult]:
    """Create a role (its exact name), holding nothing until it is granted privileges.

    Raises:
        AlreadyExistsError: ROLE_EXISTS, unless ``if_not_exists``.
    """
    command = CreateRoleCommand(name=name, if_not_exists=if_not_exists)
    return execute_call(command, request_id, message=message)


def drop_role_call(
    name: str,
    if_exists: bool = False,
    *,
    request_id: str | None = None,
    message: str | None = None,
) -> Call[ApplyResult]:
    """Drop a role: the grants to it and its grants to others go in the same version.

    Raises:
        NotFoundError: ROLE_NOT_FOUND, unless ``if_exists``.
    """
    command = DropRoleCommand(name=name, if_exists=if_exists)
    return execute_call(command, request_id, message=message)


def grants_call(
    on: SecurableKind | str | None = None,
    object: str | None = None,
    to: GranteeKind | str | None = None,
    grantee: str | None = None,
    version: int | None = None,
    at: Timestamp | None = None,
) -> Call[GrantsBody]:
    """Return the grants: all, on one object (``on``, ``object``), or to one grantee.

    ``GET /v1/grants``. ``object`` is named as in SQL (``SALES.ORDERS``, a schema, a role);
    a dotted name without ``on`` is a table or view. ``to`` and ``grantee`` go together: a
    principal's name is exact, a role's is read as in SQL.
    """
    params = _query(version, at, kind=on, object=object, to=to, grantee=grantee)
    return Call("GET", "/v1/grants", json_of(GrantsBody), params=params)


def roles_call(version: int | None = None, at: Timestamp | None = None) -> Call[RolesBody]:
    """Return every role, the roles it holds and whom it is granted to (``GET /v1/roles``)."""
    return Call("GET", "/v1/roles", json_of(RolesBody), params=read_params(version, at))


def who_can_call(
    privilege: Privilege | str,
    object: str | None = None,
    kind: SecurableKind | str | None = None,
    principal: str | None = None,
    version: int | None = None,
    at: Timestamp | None = None,
) -> Call[WhoCanBody]:
    """Return who could do ``privilege`` on an object, each through its chain of grants.

    ``GET /v1/access``. ``object`` is named as in ``grants`` (none: the catalog); with
    ``principal``, only that principal (by its exact name) if it could.
    """
    params = _query(version, at, privilege=privilege, object=object, kind=kind, principal=principal)
    return Call("GET", "/v1/access", json_of(WhoCanBody), params=params)


def access_diff_call(
    from_: Timestamp | None = None,
    to: Timestamp | None = None,
    *,
    from_version: int | None = None,
    to_version: int | None = None,
) -> Call[AccessDiffBody]:
    """Return the grants made and taken back between two moments, or two versions.

    ``GET /v1/access/diff``. Each end is a moment (``from_``, ``to``: a hybrid timestamp,
    an aware datetime or RFC 3339 text) or a version; a missing end is the latest version.

    Raises:
        ValueError: an end given both as a moment and as a version.
    """
    params: dict[str, str] = {}
    for end, moment, version in (("from", from_, from_version), ("to", to, to_version)):
        if moment is not None and version is not None:
            raise ValueError(f"give either {end}= or {end}_version=, not both")
        if version is not None:
            params[f"{end}_version"] = str(version)
        elif moment is not None:
            params[end] = timestamp_param(moment)
    return Call("GET", "/v1/access/diff", json_of(AccessDiffBody), params=params)
