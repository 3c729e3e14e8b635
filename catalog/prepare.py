"""``prepare``: validate a batch of commands against a catalog and collect its entries."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from catalog.catalog import Catalog
from catalog.commands import CommandBase, UpdateContext
from catalog.commands.grants import object_exists, refuse_last_catalog_owner
from catalog.descriptors import GrantDescriptor, GranteeKind, SecurableKind
from catalog.entries import DropGrantEntry, EntryBase
from catalog.entries.base import RemoveEntry
from catalog.errors import BatchPosition, CatalogError


@dataclass(frozen=True, slots=True)
class Prepared:
    """A validated batch.

    Attributes:
        entries: every entry of every command, in order.
        applied: per command, False where IF [NOT] EXISTS (or an unchanged value) made it a
            no-op.
        catalog: the catalog with all entries applied (same version number as the input).
    """

    entries: tuple[EntryBase, ...]
    applied: tuple[bool, ...]
    catalog: Catalog


def prepare(
    catalog: Catalog, commands: Sequence[CommandBase], *, warehouse: str | None = None
) -> Prepared:
    """Validate ``commands`` in order, each seeing the effects of the ones before it.

    New tables record their folder in ``warehouse`` (the cluster's) as their location.

    All or nothing: the first error aborts the whole batch, and since catalogs are immutable
    nothing has changed.

    Raises:
        CatalogError: the first command that does not fit, with its stable code and its
            1-based number in ``position``.
    """
    current = catalog
    entries: list[EntryBase] = []
    applied: list[bool] = []
    for number, command in enumerate(commands, start=1):
        try:
            produced = command.entries(UpdateContext(catalog, current, warehouse))
            after = apply_entries(current, produced)
            if after.access.grants and any(_removes_holder(e) for e in produced):
                # The grants a drop takes go first, so each is named while its object exists.
                orphans = orphaned_grants(after, produced)
                if orphans:
                    produced = [*orphans, *produced]
                    after = apply_entries(current, produced)
            current = after
        except CatalogError as e:
            e.position = BatchPosition(number)
            raise
        entries.extend(produced)
        applied.append(bool(produced))
    return Prepared(tuple(entries), tuple(applied), current)


_NAMED_BY: dict[str, tuple[tuple[SecurableKind | None, GranteeKind | None], ...]] = {
    "table_id": ((SecurableKind.TABLE, None),),
    "view_id": ((SecurableKind.VIEW, None),),
    "schema_id": ((SecurableKind.SCHEMA, None),),
    "principal_id": ((None, GranteeKind.USER),),
    "role_id": ((SecurableKind.ROLE, GranteeKind.ROLE),),
}
"""What a removed object's id names in grants: the object they are on, whom they are to."""


def orphaned_grants(catalog: Catalog, removals: Iterable[EntryBase] = ()) -> list[EntryBase]:
    """Return the entries taking back every grant whose object or grantee is gone.

    A drop takes its object's grants with it (a schema dropped with its tables, theirs too),
    in the same version, so no grant outlives what it names. ``catalog`` is the catalog after
    the drop, ``removals`` its entries (only the grants on or to what they remove are looked
    at); the entries returned go before the drop's own.

    Raises:
        ValidationError: LAST_CATALOG_OWNER, when they would take the catalog's last owner.
    """
    access = catalog.access
    candidates: set[int] = set()
    for entry in removals:
        if not isinstance(entry, RemoveEntry):
            continue
        object_id = getattr(entry, entry.kind.id_field)
        for on, to in _NAMED_BY.get(entry.kind.id_field, ()):
            if on is not None:
                candidates.update(access.on.get((on, object_id), ()))
            if to is not None:
                candidates.update(access.to.get((to, object_id), ()))
    gone = [
        grant
        for grant in (access.grants[i] for i in sorted(candidates))
        if not object_exists(catalog, grant.on, grant.on_id) or not _holder_exists(catalog, grant)
    ]
    removed = {grant.id for grant in gone}
    for grant in gone:
        refuse_last_catalog_owner(catalog, grant, removed)
    return [DropGrantEntry(grant_id=grant.id) for grant in gone]


def _removes_holder(entry: EntryBase) -> bool:
    """Return whether ``entry`` removes something other than a grant (what grants may name)."""
    return isinstance(entry, RemoveEntry) and not isinstance(entry, DropGrantEntry)


def _holder_exists(catalog: Catalog, grant: GrantDescriptor) -> bool:
    if grant.to is GranteeKind.USER:
        return catalog.find_principal_by_id(grant.to_id) is not None
    return grant.to_id in catalog.access.roles


def apply_entries(catalog: Catalog, entries: Iterable[EntryBase]) -> Catalog:
    """Return ``catalog`` with ``entries`` applied in order."""
    for entry in entries:
        catalog = entry.apply(catalog)
    return catalog
