"""``Catalog``: one immutable catalog version, structurally shared with its neighbours.

Schemas and zones (few) live in persistent hash maps (``immutables.Map``). Tables and
indexes (up to millions) live in the lineage's shared ``RelationStore`` as marshalled bytes,
read as of the catalog's seal stamp, plus small persistent *overlay* maps holding the changes
made since that seal. Applying an entry sets a few overlay entries (O(log n)); publishing a
version seals its overlay into the store (O(changes)). Neither copies any map, where Ignite 3
rebuilds all lookup maps per version (O(n) time, O(n²) memory over n versions), and no
version pays the path copies a million-entry persistent map would need for every change.
"""

from __future__ import annotations

import operator
from collections import Counter
from collections.abc import Callable, Iterable
from typing import Any, TypeVar

from immutables import Map, MapMutation

from catalog.descriptors import (
    IndexDescriptor,
    SchemaDescriptor,
    TableDescriptor,
    ZoneDescriptor,
)
from catalog.descriptors.schemas import PUBLIC_SCHEMA, SYSTEM_SCHEMA
from catalog.errors import ErrorCode
from catalog.snapshot_format import catalog_digest
from catalog.storage.counts import INDEXES, CountKey, schema_key, zone_key
from catalog.storage.grant_reads import GrantReads
from catalog.storage.namespaces import EMPTY, Namespaces, put_named
from catalog.storage.principal_reads import PrincipalReads
from catalog.storage.records import ALIVE, NAME, SCHEMA_ID, TABLE_ID, VALUE, ZONE_ID
from catalog.storage.relation_store import IndexGroup, RelationStore, TableGroup
from catalog.storage.relations import RelationReads, found_or_raise
from catalog.storage.views import ViewReads

_UNSEALED = -1
"""The stamp slot of an overlay record: not written to any store yet."""
_Relation = TypeVar("_Relation", TableDescriptor, IndexDescriptor)
_Named = TypeVar("_Named", SchemaDescriptor, ZoneDescriptor)


def _named(ids: Map[str, int], objects: Map[int, _Named], name: str) -> _Named | None:
    """Return the object whose id ``ids`` has under ``name``, or None."""
    object_id = ids.get(name)
    return None if object_id is None else objects[object_id]


_OVERLAYS = (
    "_counts",
    "_index_by_name",
    "_indexes",
    "_table_by_name",
    "_table_indexes",
    "_tables",
)
"""What changed since the catalog's seal: slots of unsealed catalogs only."""


class Catalog(RelationReads, ViewReads, PrincipalReads, GrantReads):
    """One catalog version: schemas, tables, indexes, views, zones, principals, grants.

    Instances are immutable; the ``with_*``/``without_*`` methods (used by update entries)
    return a new catalog sharing all untouched structure with this one.
    """

    __slots__ = (
        "_digest",
        "_names",
        "_stamp",
        "_store",
        "activation_ts",
        "default_zone_id",
        "object_id_gen",
        "version",
    )

    version: int
    activation_ts: int
    object_id_gen: int
    default_zone_id: int | None
    _names: Namespaces
    _digest: str | None

    # A sealed catalog has no overlays: every one of them reads the shared empty map, and
    # each kept version costs its slots alone. ``_UnsealedCatalog`` holds real overlays.
    _counts: Map[CountKey, int] = EMPTY
    _tables = EMPTY
    _table_by_name = EMPTY
    _indexes = EMPTY
    _index_by_name = EMPTY
    _table_indexes = EMPTY

    def __init__(self, version: int = 0, activation_ts: int = 0, object_id_gen: int = 0) -> None:
        """Create an empty catalog (no schemas, no zones): the state before version 1."""
        self.version = version
        self.activation_ts = activation_ts
        self.object_id_gen = object_id_gen
        self.default_zone_id = None
        self._names = Namespaces(EMPTY, EMPTY, EMPTY, EMPTY)
        self._store = RelationStore()
        self._stamp = 0
        self._digest = None

    @classmethod
    def initial(cls, activation_ts: int = 0) -> Catalog:
        """Return version 1's content: schemas PUBLIC and SYSTEM, no zone yet.

        The first table created without a zone creates the ``Default`` zone and makes it the
        default (``created_default_zone``).
        """
        return (
            cls()
            .with_schema(SchemaDescriptor(id=0, name=PUBLIC_SCHEMA))
            .with_schema(SchemaDescriptor(id=1, name=SYSTEM_SCHEMA))
            .with_object_id_gen(2)
            .with_version(1, activation_ts)
        )

    # -- lookups by name ------------------------------------------------------------------

    def find_schema(self, name: str) -> SchemaDescriptor | None:
        """Return the schema named ``name``, or None."""
        return _named(self._names.schema_by_name, self._names.schemas, name)

    def schema(self, name: str) -> SchemaDescriptor:
        """Return the schema named ``name``.

        Raises:
            NotFoundError: SCHEMA_NOT_FOUND.
        """
        return found_or_raise(self.find_schema(name), f"schema {name}", ErrorCode.SCHEMA_NOT_FOUND)

    def find_table(self, schema: str, name: str) -> TableDescriptor | None:
        """Return table ``schema.name``, or None."""
        schema_id = self._names.schema_by_name.get(schema)
        return None if schema_id is None else self._find_table(schema_id, name)

    def table(self, schema: str, name: str) -> TableDescriptor:
        """Return table ``schema.name``.

        Raises:
            NotFoundError: SCHEMA_NOT_FOUND or TABLE_NOT_FOUND.
        """
        # ``find_table`` inline: the hot path of every lookup (the call is ~15% of one).
        schema_id = self._names.schema_by_name.get(schema)
        found = None if schema_id is None else self._find_table(schema_id, name)
        if found is not None:
            return found
        self.schema(schema)  # SCHEMA_NOT_FOUND first
        return found_or_raise(found, f"table {schema}.{name}", ErrorCode.TABLE_NOT_FOUND)

    def find_index(self, schema: str, name: str) -> IndexDescriptor | None:
        """Return the alive (not STOPPING) index ``schema.name``, or None."""
        return self._find_relation(schema, name, self._index_id, self._index)

    def index(self, schema: str, name: str) -> IndexDescriptor:
        """Return the alive index ``schema.name``.

        Raises:
            NotFoundError: SCHEMA_NOT_FOUND or INDEX_NOT_FOUND.
        """
        found = self.find_index(self.schema(schema).name, name)
        return found_or_raise(found, f"index {schema}.{name}", ErrorCode.INDEX_NOT_FOUND)

    def find_zone(self, name: str) -> ZoneDescriptor | None:
        """Return the zone named ``name``, or None."""
        return _named(self._names.zone_by_name, self._names.zones, name)

    def zone(self, name: str) -> ZoneDescriptor:
        """Return the zone named ``name``.

        Raises:
            NotFoundError: ZONE_NOT_FOUND.
        """
        return found_or_raise(self.find_zone(name), f"zone {name}", ErrorCode.ZONE_NOT_FOUND)

    def _find_relation(
        self,
        schema: str,
        name: str,
        id_of: Callable[[int, str], int | None],
        load: Callable[[int], _Relation | None],
    ) -> _Relation | None:
        schema_id = self._names.schema_by_name.get(schema)
        relation_id = None if schema_id is None else id_of(schema_id, name)
        return None if relation_id is None else load(relation_id)

    def relation_id(self, schema_id: int, name: str) -> int | None:
        """Return the id of the table or alive index named ``name`` (one namespace), or None."""
        found = self._table_id(schema_id, name)
        return found if found is not None else self._index_id(schema_id, name)

    # -- lookups by id --------------------------------------------------------------------

    def find_schema_by_id(self, schema_id: int) -> SchemaDescriptor | None:
        """Return the schema with id ``schema_id``, or None."""
        return self._names.schemas.get(schema_id)

    def schema_by_id(self, schema_id: int) -> SchemaDescriptor:
        """Return the schema with id ``schema_id``.

        Raises:
            NotFoundError: SCHEMA_NOT_FOUND.
        """
        found = self._names.schemas.get(schema_id)
        return found_or_raise(found, f"schema with id {schema_id}", ErrorCode.SCHEMA_NOT_FOUND)

    def zone_by_id(self, zone_id: int) -> ZoneDescriptor:
        """Return the zone with id ``zone_id``.

        Raises:
            NotFoundError: ZONE_NOT_FOUND.
        """
        found = self._names.zones.get(zone_id)
        return found_or_raise(found, f"zone with id {zone_id}", ErrorCode.ZONE_NOT_FOUND)

    # -- collections (ordered by id, so every node lists them alike) ---------------------

    def schemas(self) -> list[SchemaDescriptor]:
        """Return all schemas ordered by id."""
        return [self._names.schemas[i] for i in sorted(self._names.schemas)]

    def zones(self) -> list[ZoneDescriptor]:
        """Return all zones ordered by id."""
        return [self._names.zones[i] for i in sorted(self._names.zones)]

    def default_zone(self) -> ZoneDescriptor | None:
        """Return the default zone, if one is set."""
        return None if self.default_zone_id is None else self._names.zones[self.default_zone_id]

    def zone_has_tables(self, zone_id: int) -> bool:
        """Return True if any table lives in the zone (O(1))."""
        return self._count(zone_key(zone_id)) > 0

    def schema_is_empty(self, schema_id: int) -> bool:
        """Return True if the schema holds no tables (O(1))."""
        return self._count(schema_key(schema_id)) == 0

    def _count(
        self, key: CountKey, overlay: Map[CountKey, int] | MapMutation[CountKey, int] | None = None
    ) -> int:
        """Return count ``key``: from ``overlay`` (the catalog's own by default), else sealed."""
        found = (self._counts if overlay is None else overlay).get(key)
        return found if found is not None else self._store.counts.at(self._stamp, key)

    def _table_total(self) -> int:
        """Return how many tables the catalog holds: the sum over its (few) schemas."""
        return sum(self._count(schema_key(schema_id)) for schema_id in self._names.schemas)

    def _counted(self, *changes: tuple[CountKey, int]) -> Map[CountKey, int]:
        """Return the counts overlay with each ``(key, delta)`` of ``changes`` applied."""
        counts = self._counts.mutate()
        for key, delta in changes:
            counts[key] = self._count(key, counts) + delta
        return counts.finish()

    def counts(self) -> dict[str, int]:
        """Return how many objects of each kind the catalog holds."""
        return {
            "schemas": len(self._names.schemas),
            "tables": self._table_total(),
            "indexes": self._count(INDEXES),
            "zones": len(self._names.zones),
        }

    # -- identity -------------------------------------------------------------------------

    def digest(self) -> str:
        """Return the SHA-256 of the canonical encoding: equal content, equal digest, anywhere."""
        if self._digest is None:
            self._digest = catalog_digest(self)
        return self._digest

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Catalog):
            return NotImplemented
        return self is other or self.digest() == other.digest()

    def __hash__(self) -> int:
        return hash(self.digest())

    def __repr__(self) -> str:
        counts = ", ".join(f"{k}={v}" for k, v in self.counts().items())
        return f"Catalog(version={self.version}, activation_ts={self.activation_ts}, {counts})"

    # -- structural updates (used by update entries) -------------------------------------

    def _replace(self, **changes: Any) -> Catalog:
        # Every apply of every entry (and every stamp) makes one: read all slots in one C call.
        new = object.__new__(_UnsealedCatalog)
        for name, value in zip(_ALL_SLOTS, _read_all_slots(self), strict=True):
            setattr(new, name, value)
        for name, value in changes.items():
            setattr(new, name, value)
        new._digest = None
        return new

    def sealed(self) -> Catalog:
        """Return an equal catalog whose changes were moved into the shared store.

        Only the newest state of a lineage can be sealed (a node's service seals each
        version it publishes); any other catalog is returned as it is, which is always
        correct, only larger. Sealing keeps the overlays small, so versions share the
        store's records instead of paying persistent-map path copies for each change.
        """
        store = self._store
        if type(self) is Catalog or store.head != self._stamp:
            return self
        if not (len(self._tables) or len(self._indexes)):
            return self._as_sealed(self._stamp)
        stamp = store.seal(
            ((i, r) for i, r in self._tables.items() if r[VALUE] is not None or i in store.tables),
            (
                (i, r)
                for i, r in self._indexes.items()
                if r[VALUE] is not None or i in store.indexes
            ),
            self._counts.items(),
        )
        return self._as_sealed(stamp)

    def _as_sealed(self, stamp: int) -> Catalog:
        new = object.__new__(Catalog)
        for name in Catalog.__slots__:
            object.__setattr__(new, name, getattr(self, name))
        new._stamp = stamp
        return new

    def with_version(self, version: int, activation_ts: int) -> Catalog:
        """Return this content as catalog version ``version`` active from ``activation_ts``."""
        return self._replace(version=version, activation_ts=activation_ts)

    def with_object_id_gen(self, object_id_gen: int) -> Catalog:
        """Return a copy whose next object id is ``object_id_gen``."""
        return self._replace(object_id_gen=object_id_gen)

    def with_default_zone(self, zone_id: int) -> Catalog:
        """Return a copy whose default zone is ``zone_id``."""
        self.zone_by_id(zone_id)
        return self._replace(default_zone_id=zone_id)

    def with_schema(self, schema: SchemaDescriptor) -> Catalog:
        """Return a copy with ``schema`` added or replaced (by id)."""
        schemas, by_name = put_named(self._names.schemas, self._names.schema_by_name, schema)
        return self._replace(_names=self._names.with_schemas(schemas, by_name))

    def without_schema(self, schema_id: int) -> Catalog:
        """Return a copy without the (empty) schema ``schema_id``."""
        name = self.schema_by_id(schema_id).name
        schemas, by_name = (
            self._names.schemas.delete(schema_id),
            self._names.schema_by_name.delete(name),
        )
        return self._replace(_names=self._names.with_schemas(schemas, by_name))

    def with_table(self, table: TableDescriptor) -> Catalog:
        """Return a copy with ``table`` added or replaced (by id)."""
        by_name = self._table_by_name
        table_indexes = self._table_indexes
        old = self._table_record(table.id)
        record = (_UNSEALED, table, table.schema_id, table.zone_id, table.name)
        if old is not None and old[2:] == record[2:]:  # same place and name: no count moves
            return self._replace(_tables=self._tables.set(table.id, record))
        if old is None:
            changes: list[tuple[CountKey, int]] = []
            table_indexes = table_indexes.set(table.id, ())
        else:
            if old[NAME] != table.name or old[SCHEMA_ID] != table.schema_id:
                by_name = by_name.set((old[SCHEMA_ID], old[NAME]), None)
            changes = [(schema_key(old[SCHEMA_ID]), -1), (zone_key(old[ZONE_ID]), -1)]
        return self._replace(
            _tables=self._tables.set(table.id, record),
            _table_by_name=by_name.set((table.schema_id, table.name), table.id),
            _counts=self._counted(
                *changes, (schema_key(table.schema_id), 1), (zone_key(table.zone_id), 1)
            ),
            _table_indexes=table_indexes,
        )

    def without_table(self, table_id: int) -> Catalog:
        """Return a copy without table ``table_id`` (its indexes must be removed first)."""
        self.table_by_id(table_id)
        old = self._table_record(table_id)
        assert old is not None
        return self._replace(
            _tables=self._tables.set(table_id, (_UNSEALED, None, *old[2:])),
            _table_by_name=self._table_by_name.set((old[SCHEMA_ID], old[NAME]), None),
            _counts=self._counted((schema_key(old[SCHEMA_ID]), -1), (zone_key(old[ZONE_ID]), -1)),
            _table_indexes=self._table_indexes.set(table_id, ()),
        )

    def with_index(self, index: IndexDescriptor) -> Catalog:
        """Return a copy with ``index`` added or replaced (by id)."""
        by_name = self._index_by_name
        table_indexes = self._table_indexes
        counts = self._counts
        old = self._index_record(index.id)
        record = (_UNSEALED, index, index.schema_id, index.table_id, index.name, index.is_alive)
        if old is not None and old[2:] == record[2:]:  # same place, name and liveness
            return self._replace(_indexes=self._indexes.set(index.id, record))
        if old is None:
            counts = self._counted((INDEXES, 1))
            ids = self._index_ids(index.table_id)
            table_indexes = table_indexes.set(index.table_id, tuple(sorted((*ids, index.id))))
        elif old[ALIVE] and (old[NAME] != index.name or not index.is_alive):
            by_name = by_name.set((old[SCHEMA_ID], old[NAME]), None)
        if index.is_alive:
            by_name = by_name.set((index.schema_id, index.name), index.id)
        return self._replace(
            _indexes=self._indexes.set(index.id, record),
            _index_by_name=by_name,
            _table_indexes=table_indexes,
            _counts=counts,
        )

    def without_index(self, index_id: int) -> Catalog:
        """Return a copy without index ``index_id``."""
        self.index_by_id(index_id)
        old = self._index_record(index_id)
        assert old is not None
        by_name = self._index_by_name
        if old[ALIVE]:
            by_name = by_name.set((old[SCHEMA_ID], old[NAME]), None)
        table_id = old[TABLE_ID]
        ids = tuple(i for i in self._index_ids(table_id) if i != index_id)
        return self._replace(
            _indexes=self._indexes.set(index_id, (_UNSEALED, None, *old[2:])),
            _index_by_name=by_name,
            _table_indexes=self._table_indexes.set(table_id, ids),
            _counts=self._counted((INDEXES, -1)),
        )

    def with_zone(self, zone: ZoneDescriptor) -> Catalog:
        """Return a copy with ``zone`` added or replaced (by id)."""
        zones, by_name = put_named(self._names.zones, self._names.zone_by_name, zone)
        return self._replace(_names=self._names.with_zones(zones, by_name))

    def without_zone(self, zone_id: int) -> Catalog:
        """Return a copy without zone ``zone_id``."""
        name = self.zone_by_id(zone_id).name
        zones, by_name = self._names.zones.delete(zone_id), self._names.zone_by_name.delete(name)
        return self._replace(_names=self._names.with_zones(zones, by_name))

    # -- building a whole version at once (snapshots) ------------------------------------

    @classmethod
    def from_parts(
        cls,
        *,
        version: int,
        activation_ts: int,
        object_id_gen: int,
        default_zone_id: int | None,
        schemas: Iterable[SchemaDescriptor],
        zones: Iterable[ZoneDescriptor],
        tables: Iterable[TableDescriptor],
        indexes: Iterable[IndexDescriptor],
        **named: Iterable[Any],
    ) -> Catalog:
        """Build a catalog from its objects in one pass.

        ``named`` holds the objects other than schemas, zones, tables and indexes, by kind
        (``Namespaces.of``: system views, views, principals, roles, grants).

        Raises:
            ValueError: the objects do not form a consistent catalog (duplicate ids or
                names, references to missing objects).
        """
        tables = sorted(tables, key=lambda t: t.id)
        indexes = sorted(indexes, key=lambda i: i.id)
        return cls.from_groups(
            version=version,
            activation_ts=activation_ts,
            object_id_gen=object_id_gen,
            default_zone_id=default_zone_id,
            schemas=schemas,
            zones=zones,
            tables=TableGroup.of(tables, tables),
            indexes=IndexGroup.of(indexes, indexes),
            **named,
        )

    @classmethod
    def from_groups(
        cls,
        *,
        version: int,
        activation_ts: int,
        object_id_gen: int,
        default_zone_id: int | None,
        schemas: Iterable[SchemaDescriptor],
        zones: Iterable[ZoneDescriptor],
        tables: list[TableGroup],
        indexes: list[IndexGroup],
        **named: Iterable[Any],
    ) -> Catalog:
        """Build a catalog from each schema's table and index keys and (encoded) values.

        The values are not decoded: loading a snapshot of a million tables builds the
        lookup dicts from the keys alone, and each descriptor is decoded on first use.

        Raises:
            ValueError: the objects do not form a consistent catalog (duplicate ids or
                names, references to missing objects).
        """
        cat = cls(version, activation_ts, object_id_gen)
        cat._names = Namespaces.of(schemas, zones, **named)
        cat.default_zone_id = default_zone_id
        store = cat._store
        zone_counts: Counter[int] = Counter()
        for table_group in tables:
            store.load_tables(table_group)
            zone_counts.update(table_group.zone_ids)
        for index_group in indexes:
            store.load_indexes(index_group)
        store.counts.write(
            0,
            [
                (INDEXES, sum(len(g.ids) for g in indexes)),
                *((schema_key(g.schema_id), len(g.ids)) for g in tables),
                *((zone_key(zone_id), count) for zone_id, count in zone_counts.items()),
            ],
        )
        cat._check_consistency(tables, indexes)
        if not set(zone_counts) <= set(cat._names.zones):
            raise ValueError("a table refers to a missing zone")
        return cat

    def _check_consistency(self, tables: list[TableGroup], indexes: list[IndexGroup]) -> None:
        store = self._store
        table_names = sum(len(names) for names in store.table_names.values())
        if not len(store.tables) == table_names == self._table_total():
            raise ValueError("duplicate table ids or names")
        if len(store.indexes) != self._count(INDEXES):
            raise ValueError("duplicate index ids")
        alive = sum(sum(g.alive) for g in indexes)
        if sum(len(names) for names in store.index_names.values()) != alive:
            raise ValueError("duplicate alive index names")
        schema_ids = [g.schema_id for g in tables] + [g.schema_id for g in indexes]
        schema_ids += [v.schema_id for v in self._names.views.values()]
        if not set(schema_ids) <= set(self._names.schemas):
            raise ValueError("a table, index or view refers to a missing schema")
        split = len({g.schema_id for g in tables}) != len(tables)
        if split or len({g.schema_id for g in indexes}) != len(indexes):
            raise ValueError("a schema's objects are split into several groups")
        if not all(all(map(store.tables.__contains__, g.table_ids)) for g in indexes):
            raise ValueError("an index refers to a missing table")
        if self.default_zone_id is not None and self.default_zone_id not in self._names.zones:
            raise ValueError("the default zone is missing")


class _UnsealedCatalog(Catalog):
    """A catalog with changes not sealed into the store yet (what ``_replace`` returns)."""

    __slots__ = _OVERLAYS
    ALL_SLOTS = (*Catalog.__slots__, *_OVERLAYS)


_ALL_SLOTS = _UnsealedCatalog.ALL_SLOTS
_read_all_slots = operator.attrgetter(*_ALL_SLOTS)
"""Every slot of a catalog at once (a sealed one reads its class's empty overlays)."""
