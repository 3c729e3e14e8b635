"""What an Iceberg client may see and do: the caller's grants, in the protocol's answers.

An object the caller may not see is missing, as the protocol's clients expect (404
``NoSuchNamespaceException``, ``NoSuchTableException``, ``NoSuchViewException``, with the
words a missing one gets), and lists leave it out; one it sees but may not act on so is a 403
``ForbiddenException`` naming the privilege. The rules are the catalog's
(``catalog.access``), on the catalog the request reads (``api.server.permits``).

A commit takes ``MODIFY`` for its snapshots, refs and statistics, and ``ALTER`` for anything
else it changes (schema, partition spec, sort order, properties, location, format version).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from fastapi import Request

from api.iceberg.paths import resolve_schema, resolve_table, resolve_view
from api.iceberg.updates import TableUpdate
from api.server.permits import permit, visible
from catalog.catalog import Catalog
from catalog.descriptors import (
    Privilege,
    SchemaDescriptor,
    SecurableKind,
    TableDescriptor,
    ViewDescriptor,
)
from catalog.errors import ErrorCode, NotFoundError

DATA_ACTIONS = frozenset(
    {
        "add-snapshot",
        "set-snapshot-ref",
        "remove-snapshots",
        "remove-snapshot-ref",
        "set-statistics",
        "remove-statistics",
        "set-partition-statistics",
        "remove-partition-statistics",
    }
)
"""The commit updates that change a table's data rather than its definition."""


def seen_schema(request: Request, cat: Catalog, namespace: str) -> SchemaDescriptor:
    """Return the schema a namespace names, if the caller may see it.

    Raises:
        NotFoundError: SCHEMA_NOT_FOUND, for a missing schema or one the caller may not see.
    """
    schema = resolve_schema(cat, namespace)
    if not visible(request, cat, SecurableKind.SCHEMA, schema.id):
        raise NotFoundError(
            f"Namespace does not exist: {schema.name}", code=ErrorCode.SCHEMA_NOT_FOUND
        )
    return schema


def seen_table(
    request: Request,
    cat: Catalog,
    namespace: str,
    table: str,
    privilege: Privilege | None = Privilege.SELECT,
) -> tuple[SchemaDescriptor, TableDescriptor]:
    """Return a table and its schema, if the caller sees it and holds ``privilege`` on it.

    Raises:
        NotFoundError: TABLE_NOT_FOUND, for a missing table or one the caller may not see.
        ApiError: FORBIDDEN, for a table it sees but does not hold ``privilege`` on.
    """
    schema, found = resolve_table(cat, namespace, table)
    if not visible(request, cat, SecurableKind.TABLE, found.id):
        raise NotFoundError(
            f"Table does not exist: {schema.name}.{found.name}", code=ErrorCode.TABLE_NOT_FOUND
        )
    if privilege is not None:
        permit(request, cat, privilege, SecurableKind.TABLE, found.id)
    return schema, found


def seen_view(
    request: Request,
    cat: Catalog,
    namespace: str,
    view: str,
    privilege: Privilege | None = Privilege.SELECT,
) -> tuple[SchemaDescriptor, ViewDescriptor]:
    """Return a view and its schema, as ``seen_table`` does a table.

    Raises:
        NotFoundError: VIEW_NOT_FOUND.
        ApiError: FORBIDDEN.
    """
    schema, found = resolve_view(cat, namespace, view)
    if not visible(request, cat, SecurableKind.VIEW, found.id):
        raise NotFoundError(
            f"View does not exist: {schema.name}.{found.name}", code=ErrorCode.VIEW_NOT_FOUND
        )
    if privilege is not None:
        permit(request, cat, privilege, SecurableKind.VIEW, found.id)
    return schema, found


def seen_names(
    request: Request,
    cat: Catalog,
    kind: SecurableKind,
    objects: Iterable[SchemaDescriptor | TableDescriptor | ViewDescriptor],
) -> list[str]:
    """Return the sorted names of the objects the caller may see."""
    return sorted(o.name for o in objects if visible(request, cat, kind, o.id))


def permit_commit(
    request: Request, cat: Catalog, table: TableDescriptor, updates: Sequence[TableUpdate]
) -> None:
    """Refuse a commit to ``table`` whose updates take a privilege the caller lacks.

    Raises:
        ApiError: FORBIDDEN.
    """
    actions = {update.action for update in updates}
    if actions & DATA_ACTIONS:
        permit(request, cat, Privilege.MODIFY, SecurableKind.TABLE, table.id)
    if actions - DATA_ACTIONS:
        permit(request, cat, Privilege.ALTER, SecurableKind.TABLE, table.id)
