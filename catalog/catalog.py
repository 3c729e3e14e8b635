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

from collections import Counter
from collections.abc import Callable, Iterable
from typing import Any, TypeVar

from immutables import Map

from catalog.descriptors import (
    IndexDescriptor,
    SchemaDescriptor,
    TableDescriptor,
    ZoneDescriptor,
)
from catalog.descriptors.schemas import PUBLIC_SCHEMA, SYSTEM_SCHEMA
from catalog.descriptors.zones import (
    DEFAULT_FILTER,
    DEFAULT_PARTITIONS,
    DEFAULT_STORAGE_PROFILE,
    DEFAULT_ZONE_NAME,
)
from catalog.errors import ErrorCode
from catalog.relations import RelationReads, found_or_raise
from catalog.snapshot_format import catalog_digest
from catalog.store import (
    ALIVE,
    NAME,
    SCHEMA_ID,
    TABLE_ID,
    VALUE,
    ZONE_ID,
    IndexGroup,
    RelationStore,
    TableGroup,
)

_UNSEALED = -1
_Relation = TypeVar("_Relation", TableDescriptor, IndexDescriptor)
"""The stamp slot of an overlay record: not written to any store yet."""


class Catalog(RelationReads):
    """One catalog version: schemas, tables, indexes and zones, with lookups by name and id.

    Instances are immutable; the ``with_*``/``without_*`` methods (used by update entries)
    return a new catalog sharing all untouched structure with this one.
    """

    __slots__ = (
        "_digest",
        "_index_by_name",
        "_index_count",
        "_indexes",
        "_schema_by_name",
        "_schema_counts",
        "_schemas",
        "_stamp",
        "_store",
        "_table_by_name",
        "_table_count",
        "_table_indexes",
        "_tables",
        "_zone_by_name",
        "_zone_counts",
        "_zones",
        "activation_ts",
        "default_zone_id",
        "object_id_gen",
        "version",
    )

    version: int
    activation_ts: int
    object_id_gen: int
    default_zone_id: int | None
    _schemas: Map[int, SchemaDescriptor]
    _schema_by_name: Map[str, int]
    _zones: Map[int, ZoneDescriptor]
    _zone_by_name: Map[str, int]
    _table_count: int
    _index_count: int
    _schema_counts: Map[int, int]
    _zone_counts: Map[int, int]
    _digest: str | None

    def __init__(self, version: int = 0, activation_ts: int = 0, object_id_gen: int = 0) -> None:
        """Create an empty catalog (no schemas, no zones): the state before version 1."""
        self.version = version
        self.activation_ts = activation_ts
        self.object_id_gen = object_id_gen
        self.default_zone_id = None
        self._schemas = Map()
        self._schema_by_name = Map()
        self._zones = Map()
        self._zone_by_name = Map()
        self._store = RelationStore()
        self._stamp = 0
        self._tables = Map()
        self._table_by_name = Map()
        self._indexes = Map()
        self._index_by_name = Map()
        self._table_indexes = Map()
        self._table_count = 0
        self._index_count = 0
        self._schema_counts = Map()
        self._zone_counts = Map()
        self._digest = None

    @classmethod
    def initial(cls, activation_ts: int = 0) -> Catalog:
        """Return version 1's content: schemas PUBLIC and SYSTEM and the default zone."""
        zone = ZoneDescriptor(
            id=2,
            name=DEFAULT_ZONE_NAME,
            partitions=DEFAULT_PARTITIONS,
            replicas=1,
            quorum=1,
            storage_profiles=(DEFAULT_STORAGE_PROFILE,),
            filter=DEFAULT_FILTER,
        )
        return (
            cls()
            .with_schema(SchemaDescriptor(id=0, name=PUBLIC_SCHEMA))
            .with_schema(SchemaDescriptor(id=1, name=SYSTEM_SCHEMA))
            .with_zone(zone)
            .with_default_zone(zone.id)
            .with_object_id_gen(3)
            .with_version(1, activation_ts)
        )

    # -- lookups by name ------------------------------------------------------------------

    def find_schema(self, name: str) -> SchemaDescriptor | None:
        """Return the schema named ``name``, or None."""
        schema_id = self._schema_by_name.get(name)
        return None if schema_id is None else self._schemas[schema_id]

    def schema(self, name: str) -> SchemaDescriptor:
        """Return the schema named ``name``.

        Raises:
            NotFoundError: SCHEMA_NOT_FOUND.
        """
        return found_or_raise(self.find_schema(name), f"schema {name}", ErrorCode.SCHEMA_NOT_FOUND)

    def find_table(self, schema: str, name: str) -> TableDescriptor | None:
        """Return table ``schema.name``, or None."""
        schema_id = self._schema_by_name.get(schema)
        return None if schema_id is None else self._find_table(schema_id, name)

    def table(self, schema: str, name: str) -> TableDescriptor:
        """Return table ``schema.name``.

        Raises:
            NotFoundError: SCHEMA_NOT_FOUND or TABLE_NOT_FOUND.
        """
        schema_id = self._schema_by_name.get(schema)
        found = None if schema_id is None else self._find_table(schema_id, name)
        if found is not None:  # the hot path of every lookup: no further calls
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
        zone_id = self._zone_by_name.get(name)
        return None if zone_id is None else self._zones[zone_id]

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
        schema_id = self._schema_by_name.get(schema)
        relation_id = None if schema_id is None else id_of(schema_id, name)
        return None if relation_id is None else load(relation_id)

    def relation_id(self, schema_id: int, name: str) -> int | None:
        """Return the id of the table or alive index named ``name`` (one namespace), or None."""
        found = self._table_id(schema_id, name)
        return found if found is not None else self._index_id(schema_id, name)

    # -- lookups by id --------------------------------------------------------------------

    def find_schema_by_id(self, schema_id: int) -> SchemaDescriptor | None:
        """Return the schema with id ``schema_id``, or None."""
        return self._schemas.get(schema_id)

    def schema_by_id(self, schema_id: int) -> SchemaDescriptor:
        """Return the schema with id ``schema_id``.

        Raises:
            NotFoundError: SCHEMA_NOT_FOUND.
        """
        found = self._schemas.get(schema_id)
        return found_or_raise(found, f"schema with id {schema_id}", ErrorCode.SCHEMA_NOT_FOUND)

    def zone_by_id(self, zone_id: int) -> ZoneDescriptor:
        """Return the zone with id ``zone_id``.

        Raises:
            NotFoundError: ZONE_NOT_FOUND.
        """
        found = self._zones.get(zone_id)
        return found_or_raise(found, f"zone with id {zone_id}", ErrorCode.ZONE_NOT_FOUND)

    # -- collections (ordered by id, so every node lists them alike) ---------------------

    def schemas(self) -> list[SchemaDescriptor]:
        """Return all schemas ordered by id."""
        return [self._schemas[i] for i in sorted(self._schemas)]

    def zones(self) -> list[ZoneDescriptor]:
        """Return all zones ordered by id."""
        return [self._zones[i] for i in sorted(self._zones)]

    def default_zone(self) -> ZoneDescriptor | None:
        """Return the default zone, if one is set."""
        return None if self.default_zone_id is None else self._zones[self.default_zone_id]

    def zone_has_tables(self, zone_id: int) -> bool:
        """Return True if any table lives in the zone (O(1))."""
        return self._zone_counts.get(zone_id, 0) > 0

    def schema_is_empty(self, schema_id: int) -> bool:
        """Return True if the schema holds no tables (O(1))."""
        return self._schema_counts.get(schema_id, 0) == 0

    def counts(self) -> dict[str, int]:
        """Return how many objects of each kind the catalog holds."""
        return {
            "schemas": len(self._schemas),
            "tables": self._table_count,
            "indexes": self._index_count,
            "zones": len(self._zones),
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
        new = object.__new__(Catalog)
        for name in Catalog.__slots__:
            object.__setattr__(new, name, changes.get(name, getattr(self, name)))
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
        if store.head != self._stamp or not (len(self._tables) or len(self._indexes)):
            return self
        stamp = store.seal(
            ((i, r) for i, r in self._tables.items() if r[VALUE] is not None or i in store.tables),
            (
                (i, r)
                for i, r in self._indexes.items()
                if r[VALUE] is not None or i in store.indexes
            ),
        )
        new = self._replace(
            _stamp=stamp,
            _tables=_EMPTY,
            _table_by_name=_EMPTY,
            _indexes=_EMPTY,
            _index_by_name=_EMPTY,
            _table_indexes=_EMPTY,
        )
        new._digest = self._digest
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
        schemas, by_name = _put_named(self._schemas, self._schema_by_name, schema)
        return self._replace(_schemas=schemas, _schema_by_name=by_name)

    def without_schema(self, schema_id: int) -> Catalog:
        """Return a copy without the (empty) schema ``schema_id``."""
        name = self.schema_by_id(schema_id).name
        schemas, by_name = self._schemas.delete(schema_id), self._schema_by_name.delete(name)
        counts = _discard(self._schema_counts, schema_id)
        return self._replace(_schemas=schemas, _schema_by_name=by_name, _schema_counts=counts)

    def with_table(self, table: TableDescriptor) -> Catalog:
        """Return a copy with ``table`` added or replaced (by id)."""
        by_name = self._table_by_name
        schema_counts, zone_counts = self._schema_counts, self._zone_counts
        count = self._table_count
        table_indexes = self._table_indexes
        old = self._table_record(table.id)
        if old is None:
            count += 1
            table_indexes = table_indexes.set(table.id, ())
        else:
            if old[NAME] != table.name or old[SCHEMA_ID] != table.schema_id:
                by_name = by_name.set((old[SCHEMA_ID], old[NAME]), None)
            schema_counts = _count(schema_counts, old[SCHEMA_ID], -1)
            zone_counts = _count(zone_counts, old[ZONE_ID], -1)
        record = (_UNSEALED, table, table.schema_id, table.zone_id, table.name)
        return self._replace(
            _tables=self._tables.set(table.id, record),
            _table_by_name=by_name.set((table.schema_id, table.name), table.id),
            _schema_counts=_count(schema_counts, table.schema_id, 1),
            _zone_counts=_count(zone_counts, table.zone_id, 1),
            _table_count=count,
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
            _schema_counts=_count(self._schema_counts, old[SCHEMA_ID], -1),
            _zone_counts=_count(self._zone_counts, old[ZONE_ID], -1),
            _table_count=self._table_count - 1,
            _table_indexes=self._table_indexes.set(table_id, ()),
        )

    def with_index(self, index: IndexDescriptor) -> Catalog:
        """Return a copy with ``index`` added or replaced (by id)."""
        by_name = self._index_by_name
        table_indexes = self._table_indexes
        count = self._index_count
        old = self._index_record(index.id)
        if old is None:
            count += 1
            ids = self._index_ids(index.table_id)
            table_indexes = table_indexes.set(index.table_id, tuple(sorted((*ids, index.id))))
        elif old[ALIVE] and (old[NAME] != index.name or not index.is_alive):
            by_name = by_name.set((old[SCHEMA_ID], old[NAME]), None)
        if index.is_alive:
            by_name = by_name.set((index.schema_id, index.name), index.id)
        record = (_UNSEALED, index, index.schema_id, index.table_id, index.name, index.is_alive)
        return self._replace(
            _indexes=self._indexes.set(index.id, record),
            _index_by_name=by_name,
            _table_indexes=table_indexes,
            _index_count=count,
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
            _index_count=self._index_count - 1,
        )

    def with_zone(self, zone: ZoneDescriptor) -> Catalog:
        """Return a copy with ``zone`` added or replaced (by id)."""
        zones, by_name = _put_named(self._zones, self._zone_by_name, zone)
        return self._replace(_zones=zones, _zone_by_name=by_name)

    def without_zone(self, zone_id: int) -> Catalog:
        """Return a copy without zone ``zone_id``."""
        name = self.zone_by_id(zone_id).name
        zones, by_name = self._zones.delete(zone_id), self._zone_by_name.delete(name)
        counts = _discard(self._zone_counts, zone_id)
        return self._replace(_zones=zones, _zone_by_name=by_name, _zone_counts=counts)

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
    ) -> Catalog:
        """Build a catalog from its objects in one pass.

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
    ) -> Catalog:
        """Build a catalog from each schema's table and index keys and (encoded) values.

        The values are not decoded: loading a snapshot of a million tables builds the
        lookup dicts from the keys alone, and each descriptor is decoded on first use.

        Raises:
            ValueError: the objects do not form a consistent catalog (duplicate ids or
                names, references to missing objects).
        """
        schemas, zones = list(schemas), list(zones)
        cat = cls(version, activation_ts, object_id_gen)
        cat._schemas = Map({s.id: s for s in schemas})
        cat._schema_by_name = Map({s.name: s.id for s in schemas})
        cat._zones = Map({z.id: z for z in zones})
        cat._zone_by_name = Map({z.name: z.id for z in zones})
        cat.default_zone_id = default_zone_id
        store = cat._store
        zone_counts: Counter[int] = Counter()
        for table_group in tables:
            store.load_tables(table_group)
            zone_counts.update(table_group.zone_ids)
        for index_group in indexes:
            store.load_indexes(index_group)
        cat._table_count = sum(len(g.ids) for g in tables)
        cat._index_count = sum(len(g.ids) for g in indexes)
        cat._schema_counts = Map({g.schema_id: len(g.ids) for g in tables})
        cat._zone_counts = Map(zone_counts)
        cat._check_consistency(len(schemas), len(zones), tables, indexes)
        return cat

    def _check_consistency(
        self, schemas: int, zones: int, tables: list[TableGroup], indexes: list[IndexGroup]
    ) -> None:
        store = self._store
        table_names = sum(len(names) for names in store.table_names.values())
        sizes = [
            (len(self._schemas), len(self._schema_by_name), schemas, "schema"),
            (len(self._zones), len(self._zone_by_name), zones, "zone"),
            (len(store.tables), table_names, self._table_count, "table"),
        ]
        for by_id, by_name, given, kind in sizes:
            if not by_id == by_name == given:
                raise ValueError(f"duplicate {kind} ids or names")
        if len(store.indexes) != self._index_count:
            raise ValueError("duplicate index ids")
        alive = sum(sum(g.alive) for g in indexes)
        if sum(len(names) for names in store.index_names.values()) != alive:
            raise ValueError("duplicate alive index names")
        schema_ids = [g.schema_id for g in tables] + [g.schema_id for g in indexes]
        if not set(schema_ids) <= set(self._schemas):
            raise ValueError("a table or index refers to a missing schema")
        if len({g.schema_id for g in tables}) != len(tables) or len(
            {g.schema_id for g in indexes}
        ) != len(indexes):
            raise ValueError("a schema's objects are split into several groups")
        if not set(self._zone_counts) <= set(self._zones):
            raise ValueError("a table refers to a missing zone")
        if not all(all(map(store.tables.__contains__, g.table_ids)) for g in indexes):
            raise ValueError("an index refers to a missing table")
        if self.default_zone_id is not None and self.default_zone_id not in self._zones:
            raise ValueError("the default zone is missing")


_EMPTY: Map[Any, Any] = Map()
"""The empty overlay every sealed version shares (maps are immutable)."""


def _count(counts: Map[int, int], key: int, delta: int) -> Map[int, int]:
    return counts.set(key, counts.get(key, 0) + delta)


def _discard(m: Map[int, Any], key: int) -> Map[int, Any]:
    return m.delete(key) if key in m else m


_Named = TypeVar("_Named", SchemaDescriptor, ZoneDescriptor)


def _put_named(
    by_id: Map[int, _Named], by_name: Map[str, int], item: _Named
) -> tuple[Map[int, _Named], Map[str, int]]:
    """Return both maps with ``item`` added or replaced by id (a rename frees its old name)."""
    old = by_id.get(item.id)
    if old is not None and old.name != item.name:
        by_name = by_name.delete(old.name)
    return by_id.set(item.id, item), by_name.set(item.name, item.id)
