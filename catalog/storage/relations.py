"""``RelationReads``: how a catalog version reads its tables and indexes.

Tables and indexes are read first from the version's overlay (changes since its seal), then
from the lineage's shared ``RelationStore`` as of the seal. Lookups by id or name touch one
record and decode only the descriptor they return, except where a sealed table is found by
name only to learn its id (an overlay that may have changed it, ``relation_id``): the id is in
its descriptor's bytes, so that descriptor is decoded (and cached) instead.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, TypeVar

from immutables import Map

from catalog.descriptors import IndexDescriptor, TableDescriptor
from catalog.errors import ErrorCode, NotFoundError
from catalog.storage.descriptor_cache import checked_descriptor, table_descriptor_named
from catalog.storage.records import SCHEMA_ID, VALUE, ZONE_ID, Record, visible
from catalog.storage.relation_store import RelationStore, index_ids, live_records

_MISSING: Any = object()

_T = TypeVar("_T")


class RelationReads:
    """The table and index reads of ``Catalog`` (which holds the slots named here)."""

    __slots__ = ()

    _store: RelationStore
    _stamp: int
    """The store's seal this catalog reads; the overlays below hold what changed since."""
    _tables: Map[int, Record]
    """Overlay: changed table records (a removed table's record holds None)."""
    _table_by_name: Map[tuple[int, str], int | None]
    """Overlay: names changed since the seal (None: the name is free now)."""
    _indexes: Map[int, Record]
    _index_by_name: Map[tuple[int, str], int | None]
    """Alive indexes only: a STOPPING index gives up its name."""
    _table_indexes: Map[int, tuple[int, ...]]
    """Overlay: the index ids of tables whose indexes changed since the seal."""

    # -- records (overlay first, then the store as of the seal) --------------------------

    def _table_record(self, table_id: int) -> Record | None:
        record = self._tables.get(table_id)
        if record is not None:
            return record if record[VALUE] is not None else None
        return visible(self._store.tables.get(table_id), self._stamp)

    def _index_record(self, index_id: int) -> Record | None:
        record = self._indexes.get(index_id)
        if record is not None:
            return record if record[VALUE] is not None else None
        return visible(self._store.indexes.get(index_id), self._stamp)

    def _table_named(self, schema_id: int, name: str) -> tuple[int, Record] | None:
        """Return the id and (live) record of the table named ``name``, or None: one pass.

        The overlay names only tables whose place or name changed in it; a table replaced
        under the same name is found by the store's name and read from the overlay.
        """
        found: int | None = self._table_by_name.get((schema_id, name), _MISSING)
        if found is _MISSING:
            stored = self._store.table_named(self._stamp, schema_id, name)
            if stored is None or stored[0] not in self._tables:
                return stored
            found = stored[0]
        if found is None:
            return None
        record = self._table_record(found)
        return None if record is None else (found, record)

    def _table_id(self, schema_id: int, name: str) -> int | None:
        found = self._table_named(schema_id, name)
        return None if found is None else found[0]

    def _find_table(self, schema_id: int, name: str) -> TableDescriptor | None:
        # The hot path of every lookup by name: a sealed version (no overlay) asks the store
        # directly, without building the overlay's key.
        if self._table_by_name or self._tables:
            found = self._table_named(schema_id, name)
            return (
                None if found is None else checked_descriptor(found[1], TableDescriptor, found[0])
            )
        record = self._store.table_record_named(self._stamp, schema_id, name)
        return None if record is None else table_descriptor_named(record, self._store.tables)

    def _index_id(self, schema_id: int, name: str) -> int | None:
        found = self._index_by_name.get((schema_id, name), _MISSING)
        if found is not _MISSING:
            return found
        return self._store.index_id(self._stamp, schema_id, name)

    def _table(self, table_id: int) -> TableDescriptor | None:
        record = self._table_record(table_id)
        if record is None:
            return None
        return checked_descriptor(record, TableDescriptor, table_id)

    def _index(self, index_id: int) -> IndexDescriptor | None:
        record = self._index_record(index_id)
        if record is None:
            return None
        return checked_descriptor(record, IndexDescriptor, index_id)

    def _index_ids(self, table_id: int) -> tuple[int, ...]:
        changed = self._table_indexes.get(table_id)
        if changed is not None:
            return changed
        store, stamp = self._store, self._stamp
        ever = index_ids(store.table_index_members.get(table_id, ()))
        return tuple(i for i in ever if visible(store.indexes.get(i), stamp) is not None)

    def table_records(self) -> tuple[list[int], list[Record]]:
        """Return every table's id and live record, ordered by id (what snapshots write)."""
        return live_records(self._store.tables, self._tables, self._stamp)

    def index_records(self) -> tuple[list[int], list[Record]]:
        """Return every index's id and live record, ordered by id (what snapshots write)."""
        return live_records(self._store.indexes, self._indexes, self._stamp)

    def _members(self, sealed: Iterable[int], slot: int, key: int) -> list[TableDescriptor]:
        ids = set(sealed)
        ids.update(i for i, r in self._tables.items() if r[slot] == key)
        found = []
        for table_id in sorted(ids):
            record = self._table_record(table_id)
            if record is not None and record[slot] == key:
                found.append(table_id)
        return [self.table_by_id(i) for i in found]

    def table_by_id(self, table_id: int) -> TableDescriptor:
        """Return the table with id ``table_id``.

        Raises:
            NotFoundError: TABLE_NOT_FOUND.
        """
        found = self._table(table_id)
        return found_or_raise(found, f"table with id {table_id}", ErrorCode.TABLE_NOT_FOUND)

    def index_by_id(self, index_id: int) -> IndexDescriptor:
        """Return the index with id ``index_id`` (any status).

        Raises:
            NotFoundError: INDEX_NOT_FOUND.
        """
        found = self._index(index_id)
        return found_or_raise(found, f"index with id {index_id}", ErrorCode.INDEX_NOT_FOUND)

    def find_table_by_id(self, table_id: int) -> TableDescriptor | None:
        """Return the table with id ``table_id``, or None."""
        return self._table(table_id)

    def find_index_by_id(self, index_id: int) -> IndexDescriptor | None:
        """Return the index with id ``index_id`` (any status), or None."""
        return self._index(index_id)

    def has_table(self, table_id: int) -> bool:
        """Return True if a table with id ``table_id`` exists."""
        return self._table_record(table_id) is not None

    def tables(self) -> list[TableDescriptor]:
        """Return all tables ordered by id (decoding every one: this is O(tables))."""
        return [self.table_by_id(i) for i in self.table_records()[0]]

    def indexes(self) -> list[IndexDescriptor]:
        """Return all indexes (any status) ordered by id."""
        return [self.index_by_id(i) for i in self.index_records()[0]]

    def table_indexes(self, table_id: int) -> list[IndexDescriptor]:
        """Return the indexes of a table (any status) ordered by id."""
        return [self.index_by_id(i) for i in self._index_ids(table_id)]

    def schema_tables(self, schema_id: int) -> list[TableDescriptor]:
        """Return the tables of a schema ordered by id."""
        return self._members(self._store.schema_members.get(schema_id, []), SCHEMA_ID, schema_id)

    def zone_tables(self, zone_id: int) -> list[TableDescriptor]:
        """Return the tables in a zone ordered by id."""
        return self._members(self._store.zone_members.get(zone_id, []), ZONE_ID, zone_id)


def found_or_raise(found: _T | None, what: str, code: ErrorCode) -> _T:
    """Return ``found``; if it is None, raise NOT_FOUND ``code`` saying ``what`` is not found."""
    if found is None:
        raise NotFoundError(f"{what} not found", code=code)
    return found
