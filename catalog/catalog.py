"""``Catalog``: one immutable catalog version, structurally shared with its neighbours.

Every lookup map is a persistent hash map (``immutables.Map``). Applying an entry replaces a
handful of map entries, costing O(log n) and sharing everything else with the previous
version, where Ignite 3 rebuilds all lookup maps per version (O(n) time, O(n²) memory over n
versions).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

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
from catalog.errors import ErrorCode, NotFoundError

_EMPTY_IDS: Map[int, None] = Map()


class Catalog:
    """One catalog version: schemas, tables, indexes and zones, with lookups by name and id.

    Instances are immutable; the ``with_*``/``without_*`` methods (used by update entries)
    return a new catalog sharing all untouched structure with this one.
    """

    __slots__ = (
        "_digest",
        "_index_by_name",
        "_indexes",
        "_schema_by_name",
        "_schema_tables",
        "_schemas",
        "_table_by_name",
        "_table_indexes",
        "_tables",
        "_zone_by_name",
        "_zone_tables",
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
    _tables: Map[int, TableDescriptor]
    _table_by_name: Map[tuple[int, str], int]
    _indexes: Map[int, IndexDescriptor]
    _index_by_name: Map[tuple[int, str], int]
    """Alive indexes only: a STOPPING index gives up its name."""
    _zones: Map[int, ZoneDescriptor]
    _zone_by_name: Map[str, int]
    _table_indexes: Map[int, tuple[int, ...]]
    _schema_tables: Map[int, Map[int, None]]
    _zone_tables: Map[int, Map[int, None]]
    _digest: str | None

    def __init__(self, version: int = 0, activation_ts: int = 0, object_id_gen: int = 0) -> None:
        """Create an empty catalog (no schemas, no zones): the state before version 1."""
        self.version = version
        self.activation_ts = activation_ts
        self.object_id_gen = object_id_gen
        self.default_zone_id = None
        self._schemas = Map()
        self._schema_by_name = Map()
        self._tables = Map()
        self._table_by_name = Map()
        self._indexes = Map()
        self._index_by_name = Map()
        self._zones = Map()
        self._zone_by_name = Map()
        self._table_indexes = Map()
        self._schema_tables = Map()
        self._zone_tables = Map()
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
        found = self.find_schema(name)
        if found is None:
            raise NotFoundError(f"schema {name} not found", code=ErrorCode.SCHEMA_NOT_FOUND)
        return found

    def find_table(self, schema: str, name: str) -> TableDescriptor | None:
        """Return table ``schema.name``, or None."""
        schema_id = self._schema_by_name.get(schema)
        if schema_id is None:
            return None
        table_id = self._table_by_name.get((schema_id, name))
        return None if table_id is None else self._tables[table_id]

    def table(self, schema: str, name: str) -> TableDescriptor:
        """Return table ``schema.name``.

        Raises:
            NotFoundError: SCHEMA_NOT_FOUND or TABLE_NOT_FOUND.
        """
        found = self.find_table(self.schema(schema).name, name)
        if found is None:
            raise NotFoundError(f"table {schema}.{name} not found", code=ErrorCode.TABLE_NOT_FOUND)
        return found

    def find_index(self, schema: str, name: str) -> IndexDescriptor | None:
        """Return the alive (not STOPPING) index ``schema.name``, or None."""
        schema_id = self._schema_by_name.get(schema)
        if schema_id is None:
            return None
        index_id = self._index_by_name.get((schema_id, name))
        return None if index_id is None else self._indexes[index_id]

    def index(self, schema: str, name: str) -> IndexDescriptor:
        """Return the alive index ``schema.name``.

        Raises:
            NotFoundError: SCHEMA_NOT_FOUND or INDEX_NOT_FOUND.
        """
        found = self.find_index(self.schema(schema).name, name)
        if found is None:
            raise NotFoundError(f"index {schema}.{name} not found", code=ErrorCode.INDEX_NOT_FOUND)
        return found

    def find_zone(self, name: str) -> ZoneDescriptor | None:
        """Return the zone named ``name``, or None."""
        zone_id = self._zone_by_name.get(name)
        return None if zone_id is None else self._zones[zone_id]

    def zone(self, name: str) -> ZoneDescriptor:
        """Return the zone named ``name``.

        Raises:
            NotFoundError: ZONE_NOT_FOUND.
        """
        found = self.find_zone(name)
        if found is None:
            raise NotFoundError(f"zone {name} not found", code=ErrorCode.ZONE_NOT_FOUND)
        return found

    def relation_id(self, schema_id: int, name: str) -> int | None:
        """Return the id of the table or alive index named ``name`` (one namespace), or None."""
        found = self._table_by_name.get((schema_id, name))
        return found if found is not None else self._index_by_name.get((schema_id, name))

    # -- lookups by id --------------------------------------------------------------------

    def schema_by_id(self, schema_id: int) -> SchemaDescriptor:
        """Return the schema with id ``schema_id``.

        Raises:
            NotFoundError: SCHEMA_NOT_FOUND.
        """
        found = self._schemas.get(schema_id)
        if found is None:
            raise _missing("schema", schema_id, ErrorCode.SCHEMA_NOT_FOUND)
        return found

    def table_by_id(self, table_id: int) -> TableDescriptor:
        """Return the table with id ``table_id``.

        Raises:
            NotFoundError: TABLE_NOT_FOUND.
        """
        found = self._tables.get(table_id)
        if found is None:
            raise _missing("table", table_id, ErrorCode.TABLE_NOT_FOUND)
        return found

    def index_by_id(self, index_id: int) -> IndexDescriptor:
        """Return the index with id ``index_id`` (any status).

        Raises:
            NotFoundError: INDEX_NOT_FOUND.
        """
        found = self._indexes.get(index_id)
        if found is None:
            raise _missing("index", index_id, ErrorCode.INDEX_NOT_FOUND)
        return found

    def zone_by_id(self, zone_id: int) -> ZoneDescriptor:
        """Return the zone with id ``zone_id``.

        Raises:
            NotFoundError: ZONE_NOT_FOUND.
        """
        found = self._zones.get(zone_id)
        if found is None:
            raise _missing("zone", zone_id, ErrorCode.ZONE_NOT_FOUND)
        return found

    def has_table(self, table_id: int) -> bool:
        """Return True if a table with id ``table_id`` exists."""
        return table_id in self._tables

    # -- collections (ordered by id, so every node lists them alike) ---------------------

    def schemas(self) -> list[SchemaDescriptor]:
        """Return all schemas ordered by id."""
        return [self._schemas[i] for i in sorted(self._schemas)]

    def tables(self) -> list[TableDescriptor]:
        """Return all tables ordered by id."""
        return [self._tables[i] for i in sorted(self._tables)]

    def indexes(self) -> list[IndexDescriptor]:
        """Return all indexes (any status) ordered by id."""
        return [self._indexes[i] for i in sorted(self._indexes)]

    def zones(self) -> list[ZoneDescriptor]:
        """Return all zones ordered by id."""
        return [self._zones[i] for i in sorted(self._zones)]

    def default_zone(self) -> ZoneDescriptor | None:
        """Return the default zone, if one is set."""
        return None if self.default_zone_id is None else self._zones[self.default_zone_id]

    def table_indexes(self, table_id: int) -> list[IndexDescriptor]:
        """Return the indexes of a table (any status) ordered by id."""
        return [self._indexes[i] for i in self._table_indexes.get(table_id, ())]

    def schema_tables(self, schema_id: int) -> list[TableDescriptor]:
        """Return the tables of a schema ordered by id."""
        return [self._tables[i] for i in sorted(self._schema_tables.get(schema_id, _EMPTY_IDS))]

    def zone_tables(self, zone_id: int) -> list[TableDescriptor]:
        """Return the tables in a zone ordered by id."""
        return [self._tables[i] for i in sorted(self._zone_tables.get(zone_id, _EMPTY_IDS))]

    def zone_has_tables(self, zone_id: int) -> bool:
        """Return True if any table lives in the zone (O(1))."""
        return len(self._zone_tables.get(zone_id, _EMPTY_IDS)) > 0

    def schema_is_empty(self, schema_id: int) -> bool:
        """Return True if the schema holds no tables (O(1))."""
        return len(self._schema_tables.get(schema_id, _EMPTY_IDS)) == 0

    def counts(self) -> dict[str, int]:
        """Return how many objects of each kind the catalog holds."""
        return {
            "schemas": len(self._schemas),
            "tables": len(self._tables),
            "indexes": len(self._indexes),
            "zones": len(self._zones),
        }

    # -- identity -------------------------------------------------------------------------

    def digest(self) -> str:
        """Return the SHA-256 of the canonical encoding: equal content, equal digest, anywhere."""
        if self._digest is None:
            # Deferred import: the marshalling module encodes catalogs, so it imports this one.
            from catalog.marshalling import catalog_digest

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
        by_name = self._schema_by_name
        old = self._schemas.get(schema.id)
        if old is not None and old.name != schema.name:
            by_name = by_name.delete(old.name)
        return self._replace(
            _schemas=self._schemas.set(schema.id, schema),
            _schema_by_name=by_name.set(schema.name, schema.id),
        )

    def without_schema(self, schema_id: int) -> Catalog:
        """Return a copy without the (empty) schema ``schema_id``."""
        old = self.schema_by_id(schema_id)
        return self._replace(
            _schemas=self._schemas.delete(schema_id),
            _schema_by_name=self._schema_by_name.delete(old.name),
            _schema_tables=_discard(self._schema_tables, schema_id),
        )

    def with_table(self, table: TableDescriptor) -> Catalog:
        """Return a copy with ``table`` added or replaced (by id)."""
        by_name = self._table_by_name
        schema_tables = self._schema_tables
        zone_tables = self._zone_tables
        table_indexes = self._table_indexes
        old = self._tables.get(table.id)
        if old is None:
            schema_tables = _add_member(schema_tables, table.schema_id, table.id)
            zone_tables = _add_member(zone_tables, table.zone_id, table.id)
            table_indexes = table_indexes.set(table.id, ())
        elif old.name != table.name:
            by_name = by_name.delete((old.schema_id, old.name))
        return self._replace(
            _tables=self._tables.set(table.id, table),
            _table_by_name=by_name.set((table.schema_id, table.name), table.id),
            _schema_tables=schema_tables,
            _zone_tables=zone_tables,
            _table_indexes=table_indexes,
        )

    def without_table(self, table_id: int) -> Catalog:
        """Return a copy without table ``table_id`` (its indexes must be removed first)."""
        old = self.table_by_id(table_id)
        return self._replace(
            _tables=self._tables.delete(table_id),
            _table_by_name=self._table_by_name.delete((old.schema_id, old.name)),
            _schema_tables=_remove_member(self._schema_tables, old.schema_id, table_id),
            _zone_tables=_remove_member(self._zone_tables, old.zone_id, table_id),
            _table_indexes=_discard(self._table_indexes, table_id),
        )

    def with_index(self, index: IndexDescriptor) -> Catalog:
        """Return a copy with ``index`` added or replaced (by id)."""
        by_name = self._index_by_name
        table_indexes = self._table_indexes
        old = self._indexes.get(index.id)
        if old is None:
            ids = table_indexes.get(index.table_id, ())
            table_indexes = table_indexes.set(index.table_id, tuple(sorted((*ids, index.id))))
        elif old.is_alive and (old.name != index.name or not index.is_alive):
            by_name = by_name.delete((old.schema_id, old.name))
        if index.is_alive:
            by_name = by_name.set((index.schema_id, index.name), index.id)
        return self._replace(
            _indexes=self._indexes.set(index.id, index),
            _index_by_name=by_name,
            _table_indexes=table_indexes,
        )

    def without_index(self, index_id: int) -> Catalog:
        """Return a copy without index ``index_id``."""
        old = self.index_by_id(index_id)
        by_name = self._index_by_name
        if old.is_alive:
            by_name = by_name.delete((old.schema_id, old.name))
        table_indexes = self._table_indexes
        ids = table_indexes.get(old.table_id)
        if ids is not None:
            table_indexes = table_indexes.set(old.table_id, tuple(i for i in ids if i != index_id))
        return self._replace(
            _indexes=self._indexes.delete(index_id),
            _index_by_name=by_name,
            _table_indexes=table_indexes,
        )

    def with_zone(self, zone: ZoneDescriptor) -> Catalog:
        """Return a copy with ``zone`` added or replaced (by id)."""
        by_name = self._zone_by_name
        old = self._zones.get(zone.id)
        if old is not None and old.name != zone.name:
            by_name = by_name.delete(old.name)
        return self._replace(
            _zones=self._zones.set(zone.id, zone),
            _zone_by_name=by_name.set(zone.name, zone.id),
        )

    def without_zone(self, zone_id: int) -> Catalog:
        """Return a copy without zone ``zone_id``."""
        old = self.zone_by_id(zone_id)
        return self._replace(
            _zones=self._zones.delete(zone_id),
            _zone_by_name=self._zone_by_name.delete(old.name),
            _zone_tables=_discard(self._zone_tables, zone_id),
        )

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
        """Build a catalog from its objects in one pass (how a snapshot is loaded).

        Raises:
            ValueError: the objects do not form a consistent catalog (duplicate ids or
                names, references to missing objects).
        """
        schemas, zones, tables, indexes = list(schemas), list(zones), list(tables), list(indexes)
        schema_by_name = {s.name: s.id for s in schemas}
        zone_by_name = {z.name: z.id for z in zones}
        table_by_name = {(t.schema_id, t.name): t.id for t in tables}
        index_by_name = {(i.schema_id, i.name): i.id for i in indexes if i.is_alive}
        schema_tables: dict[int, dict[int, None]] = {}
        zone_tables: dict[int, dict[int, None]] = {}
        for t in tables:
            schema_tables.setdefault(t.schema_id, {})[t.id] = None
            zone_tables.setdefault(t.zone_id, {})[t.id] = None
        table_indexes: dict[int, list[int]] = {t.id: [] for t in tables}
        for i in indexes:
            table_indexes.setdefault(i.table_id, []).append(i.id)

        cat = cls(version, activation_ts, object_id_gen)
        cat._schemas = Map({s.id: s for s in schemas})
        cat._schema_by_name = Map(schema_by_name)
        cat._zones = Map({z.id: z for z in zones})
        cat._zone_by_name = Map(zone_by_name)
        cat._tables = Map({t.id: t for t in tables})
        cat._table_by_name = Map(table_by_name)
        cat._indexes = Map({i.id: i for i in indexes})
        cat._index_by_name = Map(index_by_name)
        cat._schema_tables = Map({k: Map(v) for k, v in schema_tables.items()})
        cat._zone_tables = Map({k: Map(v) for k, v in zone_tables.items()})
        cat._table_indexes = Map({k: tuple(sorted(v)) for k, v in table_indexes.items()})
        cat.default_zone_id = default_zone_id
        cat._check_consistency(len(schemas), len(zones), len(tables), len(indexes))
        return cat

    def _check_consistency(self, schemas: int, zones: int, tables: int, indexes: int) -> None:
        sizes = [
            (len(self._schemas), len(self._schema_by_name), schemas, "schema"),
            (len(self._zones), len(self._zone_by_name), zones, "zone"),
            (len(self._tables), len(self._table_by_name), tables, "table"),
        ]
        for by_id, by_name, given, kind in sizes:
            if not by_id == by_name == given:
                raise ValueError(f"duplicate {kind} ids or names")
        if len(self._indexes) != indexes:
            raise ValueError("duplicate index ids")
        if any(t.schema_id not in self._schemas for t in self._tables.values()):
            raise ValueError("a table refers to a missing schema")
        if any(t.zone_id not in self._zones for t in self._tables.values()):
            raise ValueError("a table refers to a missing zone")
        if any(i.table_id not in self._tables for i in self._indexes.values()):
            raise ValueError("an index refers to a missing table")
        if self.default_zone_id is not None and self.default_zone_id not in self._zones:
            raise ValueError("the default zone is missing")


def _missing(kind: str, object_id: int, code: ErrorCode) -> NotFoundError:
    return NotFoundError(f"{kind} with id {object_id} not found", code=code)


def _add_member(
    groups: Map[int, Map[int, None]], key: int, member: int
) -> Map[int, Map[int, None]]:
    return groups.set(key, groups.get(key, _EMPTY_IDS).set(member, None))


def _remove_member(
    groups: Map[int, Map[int, None]], key: int, member: int
) -> Map[int, Map[int, None]]:
    members = groups.get(key)
    if members is None or member not in members:
        return groups
    return groups.set(key, members.delete(member))


def _discard(m: Map[int, Any], key: int) -> Map[int, Any]:
    return m.delete(key) if key in m else m
