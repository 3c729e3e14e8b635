"""``RelationStore``: the tables and indexes of every sealed version of one catalog lineage.

A million tables kept as persistent hash maps cost about a kilobyte each once every version
is retained: each version that adds a thousand randomly hashed names copies a thousand
paths of the trie. The store holds them instead as *multi-version records* in plain dicts
shared by every version of one lineage (a node's published versions): each object id maps
to its record, or to the list of its records when it changed, each record stamped with the
seal that wrote it. A catalog reads the store "as of" its own stamp, so older versions never
see a later seal, and sealing version N adds N's changes in place, in O(changes).

Records (``catalog.storage.records``) keep the descriptor as its marshalled bytes; the first lookup
decodes it into the ``DescriptorCache`` shared by every version.
"""

from __future__ import annotations

import gc
from array import array
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import compress, repeat
from operator import attrgetter
from typing import Any

from catalog.collector import full_collection_ahead
from catalog.descriptors import IndexDescriptor, TableDescriptor
from catalog.storage.counts import CountKey, StampedCounts
from catalog.storage.descriptor_cache import CACHE, table_descriptor_named, value_id
from catalog.storage.records import (
    ALIVE,
    NAME,
    SCHEMA_ID,
    STAMP,
    TABLE_ID,
    VALUE,
    ZONE_ID,
    History,
    Named,
    Record,
    records_of,
    visible,
)
from catalog.wire import encode_descriptor

UNTRACK_FROM = 50_000
"""Records stored from which sealing keeps the store's dicts out of the collector's sight (see
``RelationStore.seal``); below it a collection that walks them costs less than keeping them out
would on every seal."""


@dataclass(frozen=True, slots=True)
class TableGroup:
    """The tables of one schema as columns, ascending by id (how a snapshot holds them)."""

    schema_id: int
    ids: list[int]
    zone_ids: list[int]
    names: list[str]
    values: list[Any]
    """Each table's marshalled descriptor (or the descriptor itself)."""

    @classmethod
    def of(cls, tables: Sequence[TableDescriptor], values: Sequence[Any]) -> list[TableGroup]:
        """Return the groups (ascending by schema id) of ``tables`` with their ``values``."""
        keys = attrgetter("id"), attrgetter("zone_id"), attrgetter("name")
        return [cls(s, *columns) for s, columns in _grouped(tables, values, keys)]


@dataclass(frozen=True, slots=True)
class IndexGroup:
    """The indexes of one schema as columns, ascending by id (how a snapshot holds them)."""

    schema_id: int
    ids: list[int]
    table_ids: list[int]
    names: list[str]
    alive: list[bool]
    values: list[Any]
    """Each index's marshalled descriptor (or the descriptor itself)."""

    @classmethod
    def of(cls, indexes: Sequence[IndexDescriptor], values: Sequence[Any]) -> list[IndexGroup]:
        """Return the groups (ascending by schema id) of ``indexes`` with their ``values``."""
        keys = attrgetter("id"), attrgetter("table_id"), attrgetter("name"), attrgetter("is_alive")
        return [cls(s, *columns) for s, columns in _grouped(indexes, values, keys)]


def _grouped(
    objects: Sequence[TableDescriptor | IndexDescriptor],
    values: Sequence[Any],
    keys: tuple[Callable[[Any], Any], ...],
) -> list[tuple[int, list[list[Any]]]]:
    """Return, by schema id (ascending), each key's column and then the values' column."""
    grouped: dict[int, list[int]] = {}
    for position, o in enumerate(objects):
        grouped.setdefault(o.schema_id, []).append(position)
    return [
        (
            schema_id,
            [[key(objects[p]) for p in positions] for key in keys]
            + [[values[p] for p in positions]],
        )
        for schema_id, positions in sorted(grouped.items())
    ]


class RelationStore:
    """The sealed tables and indexes of one lineage of catalog versions.

    Attributes:
        head: the newest seal's stamp; only a catalog at ``head`` may seal on top of it.
        tables: table id to its history.
        indexes: index id to its history.
        table_names: schema id, then name, to what the tables that ever had that name there
            are (a ``Named``); a reader checks their records as of its stamp, so the map needs
            no stamps of its own.
        index_names: the same for indexes (alive ones own their name).
        schema_members: schema id to every table id ever in it (may repeat).
        zone_members: zone id to every table id ever in it (may repeat).
        table_index_members: table id to every index id ever on it (an int, or a tuple,
            ascending, when there are more).
        counts: tables per schema and per zone, tables and indexes in all, at each stamp.
    """

    __slots__ = (
        "counts",
        "head",
        "index_names",
        "indexes",
        "schema_members",
        "table_index_members",
        "table_names",
        "tables",
        "zone_members",
    )

    def __init__(self) -> None:
        """Create an empty store at stamp 0."""
        self.head = 0
        self.tables: dict[int, History] = {}
        self.indexes: dict[int, History] = {}
        self.table_names: dict[int, dict[str, Named]] = {}
        self.index_names: dict[int, dict[str, int | tuple[int, ...]]] = {}
        self.schema_members: dict[int, array[int]] = {}
        self.zone_members: dict[int, array[int]] = {}
        self.table_index_members: dict[int, int | tuple[int, ...]] = {}
        self.counts = StampedCounts()

    # -- bulk loading (stamp 0) -----------------------------------------------------------

    def load_tables(self, group: TableGroup) -> None:
        """Add one schema's tables at stamp 0, without decoding their descriptors.

        A million tables load in well under a second: every dict is built by C loops over
        the columns (``zip``), not by a Python loop per table.
        """
        schema_id, ids = group.schema_id, group.ids
        # Groups come with columns of equal length (checked by whoever built them); ``zip``
        # with ``repeat`` cannot be strict, and every zip here stays a C loop.
        records = list(zip(repeat(0), group.values, repeat(schema_id), group.zone_ids, group.names))
        self.tables.update(zip(ids, records, strict=True))
        self.table_names.setdefault(schema_id, {}).update(zip(group.names, records, strict=True))
        self.schema_members.setdefault(schema_id, array("q")).extend(ids)
        zone_ids = group.zone_ids
        zones = set(zone_ids)
        if len(zones) == 1:
            self.zone_members.setdefault(zones.pop(), array("q")).extend(ids)
            return
        for zone_id in sorted(zones):
            members = compress(ids, [z == zone_id for z in zone_ids])
            self.zone_members.setdefault(zone_id, array("q")).extend(members)

    def load_indexes(self, group: IndexGroup) -> None:
        """Add one schema's indexes at stamp 0, without decoding their descriptors."""
        schema_id, ids, table_ids, alive = group.schema_id, group.ids, group.table_ids, group.alive
        records = zip(repeat(0), group.values, repeat(schema_id), table_ids, group.names, alive)
        self.indexes.update(zip(ids, records, strict=False))
        names = self.index_names.setdefault(schema_id, {})
        names.update(compress(zip(group.names, ids, strict=True), alive))
        members = self.table_index_members
        # Most tables have one index (their primary key): one C-level update covers them
        # unless a table has more (then a loop merges them).
        single = dict(zip(table_ids, ids, strict=True))
        if len(single) == len(ids) and members.keys().isdisjoint(single):
            members.update(single)
            return
        for table_id, index_id in zip(table_ids, ids, strict=True):
            members[table_id] = _index_members({*index_ids(members.get(table_id, ())), index_id})

    # -- reading as of a stamp ------------------------------------------------------------

    def table_record_named(self, stamp: int, schema_id: int, name: str) -> Record | None:
        """Return the live record of the table named ``name`` in ``schema_id`` at ``stamp``.

        The hot path of every lookup by name: when one table ever had the name (the common
        case), the name map holds its history, so no id is read on the way.
        """
        by_name = self.table_names.get(schema_id)
        found = None if by_name is None else by_name.get(name)
        if found is None:
            return None
        first = found[STAMP]
        if type(first) is int:  # that table's one record: ``visible`` inline
            record = found if first <= stamp and found[VALUE] is not None else None
        elif first is not None:
            record = visible(found, stamp)
        else:
            for object_id in found[1:]:
                record = visible(self.tables.get(object_id), stamp)
                if record is not None and record[NAME] == name and record[SCHEMA_ID] == schema_id:
                    return record
            return None
        if record is not None and record[NAME] == name and record[SCHEMA_ID] == schema_id:
            return record
        return None

    def table_named(self, stamp: int, schema_id: int, name: str) -> tuple[int, Record] | None:
        """Return the id and record of the table named ``name`` in ``schema_id`` at ``stamp``.

        Raises:
            FormatError: the stored bytes do not hold the table the record names.
        """
        record = self.table_record_named(stamp, schema_id, name)
        if record is None:
            return None
        return table_descriptor_named(record, self.tables).id, record

    def index_id(self, stamp: int, schema_id: int, name: str) -> int | None:
        """Return the id of the alive index named ``name`` in ``schema_id`` as of ``stamp``."""
        by_name = self.index_names.get(schema_id)
        found = None if by_name is None else by_name.get(name)
        if found is None:
            return None
        for object_id in (found,) if isinstance(found, int) else found:
            record = visible(self.indexes.get(object_id), stamp)
            if (
                record is not None
                and record[ALIVE]
                and record[NAME] == name
                and record[SCHEMA_ID] == schema_id
            ):
                return object_id
        return None

    # -- sealing --------------------------------------------------------------------------

    def _named(
        self,
        staged: dict[tuple[int, str], Named],
        key: tuple[int, str],
        object_id: int,
        old: History | None,
        history: History,
    ) -> Named:
        """Return what the name ``key`` (schema id, name) maps to after this seal.

        ``history`` is table ``object_id``'s history after it, ``old`` before it.
        """
        found = staged.get(key)
        if found is None:
            found = self.table_names.get(key[0], {}).get(key[1])
        if found is None or found is old:
            return history
        if found[STAMP] is None:
            return found if object_id in found[1:] else (*found, object_id)
        live = next(r for r in records_of(found) if r[VALUE] is not None)
        return (None, value_id(live), object_id)

    def seal(
        self,
        tables: Iterable[tuple[int, Record]],
        indexes: Iterable[tuple[int, Record]],
        counts: Iterable[tuple[CountKey, int]],
    ) -> int:
        """Write one version's changed records under a new stamp and return that stamp.

        Readers at older stamps keep seeing what they saw: every write is either a new key
        or a record appended under the new stamp, and the head moves last.

        Everything written is built first and then handed to the young-generation collector,
        which stops tracking tuples that hold only strings, bytes, numbers and such tuples.
        Stored so, the million-entry dicts stay untracked too, and no collection walks them
        again: otherwise each seal would make every later collection visit every record.
        """
        stamp = self.head + 1
        table_writes = _staged(self.tables, tables, stamp)
        index_writes = _staged(self.indexes, indexes, stamp)
        index_names: dict[tuple[int, str], int | tuple[int, ...]] = {}
        members: dict[int, int | tuple[int, ...]] = {}
        for object_id, record, _ in index_writes:
            if record[VALUE] is None:
                continue
            if record[ALIVE]:
                key = (record[SCHEMA_ID], record[NAME])
                index_names[key] = _candidates(self.index_names, index_names, key, object_id)
            table_id = record[TABLE_ID]
            ever = index_ids(members.get(table_id, self.table_index_members.get(table_id, ())))
            if object_id not in ever:
                members[table_id] = _index_members({*ever, object_id})
        # During a recovery, the full collection that ends its pause of the collector untracks
        # all of it at once: collecting here would only add up. Any other pause (a snapshot
        # encoded meanwhile) ends with no collection: a record left tracked would make the
        # million-entry dicts tracked and young, and the first collection after the pause
        # would walk them whole (120 ms at a million tables, every thread held). A small
        # store is left to the collector's own pace: a dict a record made tracked is untracked
        # by the next full collection, which walks so few records at little cost.
        collecting = (
            not full_collection_ahead() and len(self.tables) + len(self.indexes) >= UNTRACK_FROM
        )
        if collecting:
            gc.collect(0)
        # A history holds records, so it can be untracked only after them: a second pass.
        table_histories = [_appended(old, record) for _, record, old in table_writes]
        index_histories = [_appended(old, record) for _, record, old in index_writes]
        # Every name a changed table ever had maps to its new history (or, shared, to ids).
        names: dict[tuple[int, str], Named] = {}
        for (object_id, _, old), history in zip(table_writes, table_histories, strict=True):
            for key in _names_in(history):
                names[key] = self._named(names, key, object_id, old, history)
        if collecting and (
            any(old is not None for _, _, old in (*table_writes, *index_writes))
            or any(found[STAMP] is None for found in names.values())
        ):
            gc.collect(0)
        for (object_id, record, old), history in zip(table_writes, table_histories, strict=True):
            self.tables[object_id] = history
            if old is None and record[VALUE] is not None:
                self.schema_members.setdefault(record[SCHEMA_ID], array("q")).append(object_id)
                self.zone_members.setdefault(record[ZONE_ID], array("q")).append(object_id)
        for (object_id, _, _), history in zip(index_writes, index_histories, strict=True):
            self.indexes[object_id] = history
        for (schema_id, name), named in names.items():
            self.table_names.setdefault(schema_id, {})[name] = named
        for (schema_id, name), ids in index_names.items():
            self.index_names.setdefault(schema_id, {})[name] = ids
        self.table_index_members.update(members)
        self.counts.write(stamp, counts)
        self.head = stamp
        return stamp


Staged = tuple[int, Record, History | None]
"""An object id, its new record and its history before the seal."""


def _staged(
    histories: dict[int, History], changes: Iterable[tuple[int, Record]], stamp: int
) -> list[Staged]:
    """Return each change as its record under ``stamp`` (descriptors encoded)."""
    staged = []
    for object_id, change in changes:
        value = change[VALUE]
        if value is not None and type(value) is not bytes:
            data = encode_descriptor(value)
            CACHE.put(data, value)  # just written: likely read soon (listeners, the next batch)
            value = data
        record = (stamp, value, *change[2:])
        staged.append((object_id, record, histories.get(object_id)))
    return staged


def _candidates(
    sealed: dict[int, dict[str, int | tuple[int, ...]]],
    staged: dict[tuple[int, str], int | tuple[int, ...]],
    key: tuple[int, str],
    object_id: int,
) -> int | tuple[int, ...]:
    """Return the ids that ever had the name ``key`` (schema id, name), ``object_id`` added."""
    found = staged.get(key)
    if found is None:
        found = sealed.get(key[0], {}).get(key[1])
    if found is None or found == object_id:
        return object_id
    ids = (found,) if isinstance(found, int) else found
    return ids if object_id in ids else (*ids, object_id)


def live_records(
    sealed: dict[int, History], overlay: Mapping[int, Record], stamp: int
) -> tuple[list[int], list[Record]]:
    """Return the ids and live records of every object, ordered by id, as of ``stamp``.

    ``overlay`` (changes not sealed yet) wins over ``sealed``. This is how a snapshot or
    digest walks a million objects, so the common case (one record, old enough) is inline.
    Two parallel lists rather than a pair per object: a million new pairs would be young
    objects every collection walks while a snapshot is encoded.
    """
    ids = sorted(sealed.keys() | overlay.keys()) if len(overlay) else sorted(sealed)
    found: list[int] = []
    records: list[Record] = []
    keep, append = found.append, records.append
    changed = overlay.get
    for object_id in ids:
        record = changed(object_id)
        if record is None:
            history = sealed[object_id]
            if type(history[STAMP]) is int:
                record = history if history[STAMP] <= stamp else None
            else:
                record = visible(history, stamp)
        if record is not None and record[VALUE] is not None:
            keep(object_id)
            append(record)
    return found, records


def _index_members(ids: set[int]) -> int | tuple[int, ...]:
    # A lone index id is kept as the int itself: a 1-tuple per table costs 48 bytes more.
    ordered = tuple(sorted(ids))
    return ordered[0] if len(ordered) == 1 else ordered


def index_ids(members: int | tuple[int, ...]) -> tuple[int, ...]:
    """Return a ``table_index_members`` value as a tuple."""
    return (members,) if isinstance(members, int) else members


def _names_in(history: History) -> set[tuple[int, str]]:
    """Return every (schema id, name) a live record of ``history`` holds."""
    return {(r[SCHEMA_ID], r[NAME]) for r in records_of(history) if r[VALUE] is not None}


def _appended(old: History | None, new: Record) -> History:
    if old is None:
        return new
    if type(old[STAMP]) is int:
        return (old, new)
    return (*old, new)
