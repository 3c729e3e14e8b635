"""Causality tokens: every object a version changes carries that version's activation time.

As Ignite's descriptors carry ``updateTimestamp``, each schema, table, index, zone, system view,
view, principal, role and grant here has ``update_ts``: the activation timestamp of the version
that last changed it, and a schema's moves too when a table, index or view in it changes (or
goes). A reader holding an object from time T knows it changed since when its token is greater
than T.

The stamps are derived from the update itself, so every node that applies a version stamps the
same objects with the same time. Only updates that say so (``VersionedUpdate.stamps``) stamp:
an update of the stored format without stamps (``update_v1.bin`` among the golden files) leaves
its objects at 0 on every node, whether a node replays it or loads a snapshot holding its
result.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable
from typing import Any, TypeVar

from catalog.catalog import Catalog
from catalog.entries import EntryBase
from catalog.errors import NotFoundError
from catalog.model import Model

_D = TypeVar("_D", bound=Model)


def _stamped(descriptor: _D, ts: int) -> _D:
    """Return a copy of ``descriptor`` with ``update_ts = ts``.

    What ``model_copy(update=...)`` does for a frozen descriptor, without its generic work:
    every applied version copies each object it changed, so this runs on every node for
    every change.
    """
    new = object.__new__(type(descriptor))
    object.__setattr__(new, "__dict__", {**descriptor.__dict__, "update_ts": ts})
    object.__setattr__(new, "__pydantic_fields_set__", descriptor.__pydantic_fields_set__)
    object.__setattr__(new, "__pydantic_extra__", None)
    object.__setattr__(new, "__pydantic_private__", None)
    return new


_KINDS = ("table", "index", "zone", "schema", "system_view", "view", "principal", "role", "grant")
_FIELDS = {"system_view": ("system_view",)}
"""The entry fields that hold an object of each kind (else the kind, ``kind_`` or ``kind_id``)."""
_HOLDERS: dict[type[EntryBase], tuple[tuple[str, str, bool], ...]] = {}


def _holders(cls: type[EntryBase]) -> tuple[tuple[str, str, bool], ...]:
    """Return the fields of entry class ``cls`` naming an object: (field, kind, holds an id)."""
    found = _HOLDERS.get(cls)
    if found is None:
        found = tuple(
            (field, kind, field.endswith("_id"))
            for kind in _KINDS
            for field in _FIELDS.get(kind, (kind, f"{kind}_", f"{kind}_id"))
            if field in cls.model_fields
        )
        _HOLDERS[cls] = found
    return found


def stamp(previous: Catalog, current: Catalog, entries: Iterable[EntryBase], ts: int) -> Catalog:
    """Return ``current`` with every object ``entries`` touched stamped ``update_ts = ts``.

    ``previous`` is the catalog the entries applied to (it names the schema of what they
    dropped).
    """
    touched: dict[str, set[Any]] = {kind: set() for kind in _KINDS}
    for entry in entries:
        fields = entry.__dict__
        for field, kind, by_id in _holders(type(entry)):
            value = fields[field]
            if value is not None:
                named = kind == "system_view"
                touched[kind].add(value if by_id else value.name if named else value.id)
    tables, indexes, zones = touched["table"], touched["index"], touched["zone"]
    schemas, system_views = touched["schema"], touched["system_view"]
    for table_id in tables:
        table = current.find_table_by_id(table_id)
        if table is not None:
            current = current.with_table(_stamped(table, ts))
        else:  # dropped: its schema still changed
            table = previous.find_table_by_id(table_id)
        if table is not None:
            schemas.add(table.schema_id)
    for index_id in indexes:
        index = current.find_index_by_id(index_id)
        if index is not None:
            current = current.with_index(_stamped(index, ts))
        else:
            index = previous.find_index_by_id(index_id)
        if index is not None:
            schemas.add(index.schema_id)
    for zone_id in zones:
        with contextlib.suppress(NotFoundError):  # a dropped zone
            zone = current.zone_by_id(zone_id)
            current = current.with_zone(_stamped(zone, ts))
    for name in system_views:
        found = current.find_system_view(name)
        if found is not None:
            current = current.with_system_view(_stamped(found, ts))
            schemas.add(found.schema_id)
    for view_id in touched["view"]:
        view, earlier = current.find_view_by_id(view_id), previous.find_view_by_id(view_id)
        if view is not None:
            current = current.with_view(_stamped(view, ts))
        # a view moved to another schema changes both schemas
        schemas.update(v.schema_id for v in (view, earlier) if v is not None)
    for principal_id in touched["principal"]:
        principal = current.find_principal_by_id(principal_id)
        if principal is not None:
            current = current.with_principal(_stamped(principal, ts))
    access = current.access
    for role_id in touched["role"]:
        if role_id in access.roles:
            current = current.with_role(_stamped(access.roles[role_id], ts))
    for grant_id in touched["grant"]:
        if grant_id in access.grants:
            current = current.with_grant(_stamped(access.grants[grant_id], ts))
    for schema_id in schemas:
        schema = current.find_schema_by_id(schema_id)
        if schema is not None:
            current = current.with_schema(_stamped(schema, ts))
    return current
