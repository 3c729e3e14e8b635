"""Causality tokens: every object a version changes carries that version's activation time.

As Ignite's descriptors carry ``updateTimestamp``, each schema, table, index, zone and system
view here has
``update_ts``: the activation timestamp of the version that last changed it, and a schema's
moves too when a table or index in it changes (or goes). A reader holding an object from time T
knows it changed since when its token is greater than T.

The stamps are derived from the update itself, so every node that applies a version stamps the
same objects with the same time. Only updates that say so (``VersionedUpdate.stamps``) stamp:
versions written before tokens existed leave their objects at 0 on every node, whether a node
replays them or loads a snapshot holding their result.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable

from catalog.catalog import Catalog
from catalog.entries import EntryBase
from catalog.errors import NotFoundError


def stamp(previous: Catalog, current: Catalog, entries: Iterable[EntryBase], ts: int) -> Catalog:
    """Return ``current`` with every object ``entries`` touched stamped ``update_ts = ts``.

    ``previous`` is the catalog the entries applied to (it names the schema of what they
    dropped).
    """
    tables: set[int] = set()
    indexes: set[int] = set()
    zones: set[int] = set()
    schemas: set[int] = set()
    views: set[str] = set()
    for entry in entries:
        fields = entry.__dict__
        view = fields.get("system_view")
        if view is not None:
            views.add(view.name)
        for name, ids in (
            ("table", tables),
            ("index", indexes),
            ("zone", zones),
            ("schema", schemas),
        ):
            held = fields.get(name) or fields.get(f"{name}_")  # ``schema_`` for ``schema``
            if held is not None:
                ids.add(held.id)
            named = fields.get(f"{name}_id")
            if type(named) is int:
                ids.add(named)
    for table_id in tables:
        table = current.find_table_by_id(table_id)
        if table is not None:
            current = current.with_table(table.model_copy(update={"update_ts": ts}))
        else:  # dropped: its schema still changed
            table = previous.find_table_by_id(table_id)
        if table is not None:
            schemas.add(table.schema_id)
    for index_id in indexes:
        index = current.find_index_by_id(index_id)
        if index is not None:
            current = current.with_index(index.model_copy(update={"update_ts": ts}))
        else:
            index = previous.find_index_by_id(index_id)
        if index is not None:
            schemas.add(index.schema_id)
    for zone_id in zones:
        with contextlib.suppress(NotFoundError):  # a dropped zone
            zone = current.zone_by_id(zone_id)
            current = current.with_zone(zone.model_copy(update={"update_ts": ts}))
    for name in views:
        found = current.find_system_view(name)
        if found is not None:
            current = current.with_system_view(found.model_copy(update={"update_ts": ts}))
            schemas.add(found.schema_id)
    for schema_id in schemas:
        schema = current.find_schema_by_id(schema_id)
        if schema is not None:
            current = current.with_schema(schema.model_copy(update={"update_ts": ts}))
    return current
