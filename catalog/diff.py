"""What changed between two catalog versions, object by object and down to columns.

Objects are matched by id, so a rename is an alteration whose ``name`` field says from what to
what, and a table dropped and created again under the same name is one drop and one addition.
An added object carries what was created and a dropped one what was dropped; an altered one
carries only what changed: its properties with their values before and after and, for a table,
each column added, dropped or altered. So one column added to a 5,000-column table is a diff of
one column, whatever the table's size and history.
"""

from __future__ import annotations

import enum
import operator
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from pydantic_core import to_jsonable_python

from catalog.catalog import Catalog
from catalog.descriptors import (
    ColumnDescriptor,
    Descriptor,
    GrantDescriptor,
    TableDescriptor,
    ViewColumn,
    ViewDescriptor,
)
from catalog.grant_names import grant_words
from catalog.model import Model

_D = TypeVar("_D", Descriptor, ColumnDescriptor, ViewColumn)
_Column = TypeVar("_Column", ColumnDescriptor, ViewColumn)


@dataclass(frozen=True, slots=True)
class FieldChange:
    """One property that changed, with its values as plain JSON values (enums as strings)."""

    field: str
    before: Any
    after: Any


class ChangeKind(enum.StrEnum):
    """How an object or a column differs between the two versions."""

    ADDED = "added"
    DROPPED = "dropped"
    ALTERED = "altered"


@dataclass(frozen=True, slots=True)
class Difference(Generic[_D]):
    """What an object or a column that differs carries.

    Attributes:
        before: the dropped object or column (None otherwise).
        after: the added one (None otherwise).
        fields: for an altered one, its properties that changed (a rename is a change of
            ``name``).
    """

    id: int
    name: str
    change: ChangeKind
    before: _D | None = None
    after: _D | None = None
    fields: tuple[FieldChange, ...] = ()


@dataclass(frozen=True, slots=True)
class ColumnChange(Difference[ColumnDescriptor]):
    """One column of a table that differs."""


@dataclass(frozen=True, slots=True)
class ViewColumnChange(Difference[ViewColumn]):
    """One column of a view that differs."""


@dataclass(frozen=True, slots=True)
class Change(Difference[Descriptor]):
    """One object that differs.

    Attributes:
        object_type: ``schema``, ``zone``, ``table``, ``index``, ``system_view``, ``view``,
            ``principal``, ``role`` or ``grant`` (named in words: ``SELECT ON TABLE S.T TO
            USER u``).
        columns: for an altered table or view, the columns added, dropped or altered; its
            ``fields`` leave them out, and a table's ``schema_version`` moves when they change.
    """

    object_type: str = field(kw_only=True)
    columns: tuple[ColumnChange | ViewColumnChange, ...] = ()


_KINDS: list[tuple[str, Callable[[Catalog], Sequence[Descriptor]]]] = [
    ("schema", Catalog.schemas),
    ("zone", Catalog.zones),
    ("table", Catalog.tables),
    ("index", Catalog.indexes),
    ("system_view", Catalog.system_views),
    ("view", Catalog.views),
    ("principal", Catalog.principals),
    ("role", Catalog.roles),
    ("grant", Catalog.grants),
]
# Not compared as properties: the id matches the two sides; a table's columns are compared one
# by one and its history is summed up by ``schema_version``; the next column id only follows
# the columns.
_NOT_PROPERTIES = frozenset(
    {"id", "versions", "next_column_id", "update_ts", "schemas", "log", "secret_hash"}
)
"""Fields that are not what a person changed (or must never be shown: a principal's secret
hash, whose change shows as its ``credential_version``): ids, a table's or view's history, the
causality token (it moves with every change, and on a schema with every change of its
tables). A view's current columns are compared one by one, as a table's are."""


def diff(before: Catalog, after: Catalog) -> list[Change]:
    """Return every schema, zone, table, index and view that differs between two catalogs.

    Unchanged objects are shared between versions, so most comparisons are an identity check.
    """
    changes: list[Change] = []
    for object_type, listing in _KINDS:
        for object_id, a, b in _differing(listing(before), listing(after)):
            if a is None:
                assert b is not None
                name = _name(b, after, before)
                changes.append(
                    Change(object_id, name, ChangeKind.ADDED, after=b, object_type=object_type)
                )
            elif b is None:
                name = _name(a, before, after)
                changes.append(
                    Change(object_id, name, ChangeKind.DROPPED, before=a, object_type=object_type)
                )
            else:
                change = _altered(object_type, a, b)
                if change.fields or change.columns:  # not only its causality token
                    changes.append(change)
    return changes


def _name(found: Descriptor, *catalogs: Catalog) -> str:
    """Return an object's name; a grant, which has none, is named in words."""
    return grant_words(found, *catalogs) if isinstance(found, GrantDescriptor) else found.name


def _differing(
    before: Iterable[_D], after: Iterable[_D], key: Callable[[_D], Any] = operator.attrgetter("id")
) -> Iterator[tuple[Any, _D | None, _D | None]]:
    """Match two versions' objects (or columns) by ``key``; yield each key whose sides differ.

    Objects and a table's columns are matched by id; a view's columns by name, for each
    version of a view numbers its schema's fields afresh. An added object comes as
    ``(key, None, new)``, a dropped one as ``(key, old, None)``.
    """
    old = {key(d): d for d in before}
    new = {key(d): d for d in after}
    for found in sorted(old.keys() | new.keys()):
        a, b = old.get(found), new.get(found)
        if a is not b and a != b:
            yield found, a, b


def _altered(object_type: str, a: Descriptor, b: Descriptor) -> Change:
    fields = _fields(a, b)
    columns: tuple[ColumnChange | ViewColumnChange, ...] = ()
    if isinstance(a, TableDescriptor) and isinstance(b, TableDescriptor):
        if a.schema_version != b.schema_version:
            fields += (FieldChange("schema_version", a.schema_version, b.schema_version),)
        columns = tuple(_table_columns(a.columns, b.columns))
    if isinstance(a, ViewDescriptor) and isinstance(b, ViewDescriptor):
        if a.current != b.current:
            fields += (_query_change(a, b),)
        columns = tuple(_columns(a.columns, b.columns, ViewColumnChange, "name"))
    # A grant is made and taken back, never changed: only its stamp may differ, which is no
    # change (a version replayed with stamps and without).
    name = f"grant {b.id}" if isinstance(b, GrantDescriptor) else b.name
    return Change(
        b.id, name, ChangeKind.ALTERED, fields=fields, columns=columns, object_type=object_type
    )


def _fields(
    a: Model, b: Model, left_out: frozenset[str] = _NOT_PROPERTIES
) -> tuple[FieldChange, ...]:
    """The properties of two versions of one object (or column) that differ."""
    return tuple(
        FieldChange(info.alias or name, to_jsonable_python(old), to_jsonable_python(new))
        for name, info in type(b).model_fields.items()
        if name not in left_out
        and (old := getattr(a, name, None)) != (new := getattr(b, name, None))
    )


_NOT_COLUMN_PROPERTIES = _NOT_PROPERTIES | {"fields"}
"""A column's nested fields are compared one by one, as columns are."""


def _by_id(
    columns: Iterable[ColumnDescriptor], parent: int | None = None, prefix: tuple[str, ...] = ()
) -> Iterator[tuple[int, tuple[tuple[str, ...], ColumnDescriptor, int | None]]]:
    for c in columns:
        path = (*prefix, c.name)
        yield c.id, (path, c, parent)
        yield from _by_id(c.fields, c.id, path)


def _table_columns(
    before: tuple[ColumnDescriptor, ...], after: tuple[ColumnDescriptor, ...]
) -> Iterator[ColumnChange]:
    """A table's columns and nested fields that differ, each named by its path.

    A column or field added or dropped carries its own fields, which are not listed again;
    a column whose nested fields changed is not altered itself unless its own properties did.
    """
    if before is after:
        return
    old, new = dict(_by_id(before)), dict(_by_id(after))
    for found in sorted(old.keys() | new.keys()):
        a, b = old.get(found), new.get(found)
        if a is None:
            assert b is not None
            path, column, parent = b
            if parent is None or parent in old:
                yield ColumnChange(found, ".".join(path), ChangeKind.ADDED, after=column)
        elif b is None:
            path, column, parent = a
            if parent is None or parent in new:
                yield ColumnChange(found, ".".join(path), ChangeKind.DROPPED, before=column)
        elif a[1] is not b[1] and (fields := _fields(a[1], b[1], _NOT_COLUMN_PROPERTIES)):
            yield ColumnChange(found, ".".join(b[0]), ChangeKind.ALTERED, fields=fields)


def _query_change(a: ViewDescriptor, b: ViewDescriptor) -> FieldChange:
    """The current version's queries of a view, by dialect, before and after."""
    return FieldChange(
        "queries",
        {r.dialect: r.sql for r in a.current.representations},
        {r.dialect: r.sql for r in b.current.representations},
    )


def _columns(
    before: Iterable[_Column],
    after: Iterable[_Column],
    kind: Callable[..., Difference[_Column]],
    matched_by: str,
) -> Iterable[Any]:
    for _, a, b in _differing(before, after, operator.attrgetter(matched_by)):
        if a is None:
            assert b is not None
            yield kind(b.id, b.name, ChangeKind.ADDED, after=b)
        elif b is None:
            yield kind(a.id, a.name, ChangeKind.DROPPED, before=a)
        elif fields := _fields(a, b):  # a view's column renumbered, and nothing else: unchanged
            yield kind(b.id, b.name, ChangeKind.ALTERED, fields=fields)
