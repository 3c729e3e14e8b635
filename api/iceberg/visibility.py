"""What an Iceberg client may see and do: the caller's grants, in the protocol's answers.

An object the caller may not see is missing, as the protocol's clients expect (404
``NoSuchNamespaceException``, ``NoSuchTableException``, ``NoSuchViewException``, with the
words a missing one gets), names resolve (ignoring case) only among what it may see, and lists
leave it out; one it sees but may not act on so is a 403
``ForbiddenException`` naming the privilege. The rules are the catalog's
(``catalog.access``), on the catalog the request reads (``api.server.permits``).

Loading a table takes ``SELECT`` or ``MODIFY`` (an engine that writes reads the metadata it
commits against); a view, ``SELECT``. A commit takes ``MODIFY`` for its snapshots, refs and
statistics, and ``ALTER`` for anything else it changes (schema, partition spec, sort order,
properties, location, format version).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from fastapi import Request

from api.iceberg.paths import Keep, resolve_schema, resolve_table, resolve_view
from api.iceberg.updates import TableUpdate
from api.server.permits import may, permit, visible
from catalog.catalog import Catalog
from catalog.descriptors import (
    Privilege,
    SchemaDescriptor,
    SecurableKind,
    TableDescriptor,
    ViewDescriptor,
)

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


def _keep(request: Request, cat: Catalog) -> Keep:
    """Return whether the caller may see an object: what names resolve among."""
    return lambda kind, object_id: visible(request, cat, kind, object_id)


def seen_schema(request: Request, cat: Catalog, namespace: str) -> SchemaDescriptor:
    """Return the schema a namespace names, among those the caller may see.

    Raises:
        NotFoundError: SCHEMA_NOT_FOUND, for a missing schema or one the caller may not see.
    """
    return resolve_schema(cat, namespace, _keep(request, cat))


def seen_table(
    request: Request,
    cat: Catalog,
    namespace: str,
    table: str,
    privileges: tuple[Privilege, ...] = (),
) -> tuple[SchemaDescriptor, TableDescriptor]:
    """Return a table and its schema, among those the caller may see.

    With ``privileges``, the caller must hold one of them on it; without, seeing it is enough.

    Raises:
        NotFoundError: TABLE_NOT_FOUND, for a missing table or one the caller may not see.
        ApiError: FORBIDDEN, for a table it sees but holds none of ``privileges`` on.
    """
    schema, found = resolve_table(cat, namespace, table, _keep(request, cat))
    _permit_one(request, cat, privileges, SecurableKind.TABLE, found.id)
    return schema, found


def seen_view(
    request: Request,
    cat: Catalog,
    namespace: str,
    view: str,
    privileges: tuple[Privilege, ...] = (),
) -> tuple[SchemaDescriptor, ViewDescriptor]:
    """Return a view and its schema, as ``seen_table`` does a table.

    Raises:
        NotFoundError: VIEW_NOT_FOUND.
        ApiError: FORBIDDEN.
    """
    schema, found = resolve_view(cat, namespace, view, _keep(request, cat))
    _permit_one(request, cat, privileges, SecurableKind.VIEW, found.id)
    return schema, found


def _permit_one(
    request: Request,
    cat: Catalog,
    privileges: tuple[Privilege, ...],
    kind: SecurableKind,
    object_id: int,
) -> None:
    """Refuse unless the caller holds one of ``privileges`` on the object (the first named)."""
    if privileges and not any(may(request, cat, p, kind, object_id) for p in privileges):
        permit(request, cat, privileges[0], kind, object_id)


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
    # Every commit answers the table's metadata, and checks requirements against it.
    _permit_one(request, cat, (Privilege.SELECT, Privilege.MODIFY), SecurableKind.TABLE, table.id)
    if actions & DATA_ACTIONS:
        permit(request, cat, Privilege.MODIFY, SecurableKind.TABLE, table.id)
    if actions - DATA_ACTIONS:
        permit(request, cat, Privilege.ALTER, SecurableKind.TABLE, table.id)
