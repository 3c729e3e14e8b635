"""``prepare``: validate a batch of commands against a catalog and collect its entries."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from catalog.catalog import Catalog
from catalog.commands import CommandBase, UpdateContext
from catalog.entries import EntryBase
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
            current = apply_entries(current, produced)
        except CatalogError as e:
            e.position = BatchPosition(number)
            raise
        entries.extend(produced)
        applied.append(bool(produced))
    return Prepared(tuple(entries), tuple(applied), current)


def apply_entries(catalog: Catalog, entries: Iterable[EntryBase]) -> Catalog:
    """Return ``catalog`` with ``entries`` applied in order."""
    for entry in entries:
        catalog = entry.apply(catalog)
    return catalog
