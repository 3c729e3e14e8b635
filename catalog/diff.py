"""What changed between two catalog versions: objects added, dropped or altered, by id."""

from __future__ import annotations

import enum
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from catalog.catalog import Catalog
from catalog.descriptors import Descriptor


class ChangeKind(enum.StrEnum):
    """How an object differs between the two versions."""

    ADDED = "added"
    DROPPED = "dropped"
    ALTERED = "altered"


@dataclass(frozen=True, slots=True)
class Change:
    """One object that differs: ``before`` is None when added, ``after`` None when dropped."""

    object_type: str
    id: int
    name: str
    change: ChangeKind
    before: Descriptor | None
    after: Descriptor | None


_KINDS: list[tuple[str, Callable[[Catalog], Sequence[Descriptor]]]] = [
    ("schema", Catalog.schemas),
    ("zone", Catalog.zones),
    ("table", Catalog.tables),
    ("index", Catalog.indexes),
]


def diff(before: Catalog, after: Catalog) -> list[Change]:
    """Return every schema, zone, table and index that differs between two catalogs.

    Objects are matched by id, so a rename is an alteration, and a table dropped and created
    again under the same name is one drop and one addition. Unchanged objects are shared
    between versions, so most comparisons are an identity check.
    """
    changes: list[Change] = []
    for object_type, listing in _KINDS:
        old = {d.id: d for d in listing(before)}
        new = {d.id: d for d in listing(after)}
        for object_id in sorted(old.keys() | new.keys()):
            a, b = old.get(object_id), new.get(object_id)
            if a is b or a == b:
                continue
            kind = (
                ChangeKind.ADDED
                if a is None
                else ChangeKind.DROPPED
                if b is None
                else ChangeKind.ALTERED
            )
            name = (b or a).name  # type: ignore[union-attr]
            changes.append(Change(object_type, object_id, name, kind, a, b))
    return changes
