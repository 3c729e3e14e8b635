"""``DescriptorCache``: decoded descriptors shared by every catalog version of the process.

Records keep a descriptor as its marshalled bytes; the first lookup decodes it into this
bounded cache, keyed by the bytes themselves (equal bytes decode to equal descriptors, so no
version can ever read another's object). Only descriptors checked against their record are
cached, so a hit is returned as it is.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import Any, TypeVar

from catalog.descriptors import Descriptor, IndexDescriptor, TableDescriptor
from catalog.storage.records import NAME, VALUE, History, Record, records_of
from catalog.wire import decode_descriptor, encode_descriptor
from updatelog.errors import FormatError

DEFAULT_CACHE_SIZE = 4096
"""Decoded descriptors kept; a decoded 6-column table costs about 5 KB, 1000x its bytes."""

D = TypeVar("D", TableDescriptor, IndexDescriptor)


class DescriptorCache:
    """Decoded descriptors keyed by their marshalled bytes.

    Two generations. A hit in the young one is one dict read: no lock, no reordering, so a
    lookup of a cached table costs what a dict lookup costs. A hit in the old one moves the
    entry to the young one; when the young one holds ``capacity`` entries it becomes the old
    one and the previous old one is dropped. So the ``capacity`` descriptors read most
    recently are always kept (a working set that size is never decoded again), and up to as
    many again read before the last turn: at most twice ``capacity`` in all.

    Args:
        capacity: how many recently read descriptors to keep at least.
    """

    def __init__(self, capacity: int = DEFAULT_CACHE_SIZE) -> None:
        self.capacity = capacity
        self._young: dict[bytes, Descriptor] = {}
        self._old: dict[bytes, Descriptor] = {}
        self._lock = threading.Lock()
        self.decoded = 0
        """How many times bytes were decoded (misses): what the tests count."""

    def __len__(self) -> int:
        return len(self._young.keys() | self._old.keys())

    def known(self, data: bytes) -> Descriptor | None:
        """Return the descriptor cached for ``data``, or None; no decoding."""
        found = self._young.get(data)
        return found if found is not None else self.promoted(data)

    def promoted(self, data: bytes) -> Descriptor | None:
        """Return what the old generation holds for ``data``, moving it to the young one.

        None when it holds nothing: what ``known`` does once the young generation missed.
        """
        found = self._old.get(data)
        if found is not None:
            self.put(data, found)
        return found

    def decode(self, data: bytes) -> Descriptor:
        """Decode ``data`` (a miss), without caching it.

        Raises:
            FormatError: ``data`` is not a marshalled descriptor.
        """
        self.decoded += 1
        return decode_descriptor(data)

    def reserve(self, capacity: int) -> None:
        """Keep at least ``capacity`` recent descriptors from now on (a larger one stays)."""
        with self._lock:
            self.capacity = max(self.capacity, capacity)

    def put(self, data: bytes, descriptor: Descriptor) -> None:
        """Remember that ``data`` decodes to ``descriptor`` (in the young generation)."""
        with self._lock:
            young = self._young
            young[data] = descriptor
            if len(young) >= self.capacity:
                self._old, self._young = young, {}

    def clear(self) -> None:
        """Forget every decoded descriptor."""
        with self._lock:
            self._young, self._old = {}, {}


CACHE = DescriptorCache()
"""The cache every catalog of the process shares."""


def checked_descriptor(record: Record, kind: type[D], object_id: int) -> D:
    """Return the ``kind`` descriptor a live record holds, decoding its bytes through the cache.

    Only descriptors that passed ``check_descriptor`` against their record are cached (the
    seal caches what it wrote, a miss checks before it caches), and the bytes that key an entry
    hold the descriptor's id and name: so a hit is returned without looking at them again,
    which on a catalog too large for the processor's caches is a fifth of a lookup by name.

    Raises:
        FormatError: the stored bytes do not hold the object the record names.
    """
    value = record[VALUE]
    if type(value) is not bytes:
        return check_descriptor(value, kind, object_id, record[NAME])
    found = CACHE._young.get(value)  # ``known`` inline: a young hit is one dict read
    if found is None:
        found = CACHE.promoted(value)
    if type(found) is kind:
        return found
    if found is None:
        found = check_descriptor(CACHE.decode(value), kind, object_id, record[NAME])
        CACHE.put(value, found)
        return found
    return check_descriptor(found, kind, object_id, record[NAME])


def table_descriptor_named(record: Record, tables: Mapping[int, History]) -> TableDescriptor:
    """Return the descriptor a live table record found by its name holds.

    As ``checked_descriptor``, but the id is the one the bytes give, and ``tables`` must hold
    the record under it.

    Raises:
        FormatError: the stored bytes do not hold the table the record names.
    """
    value = record[VALUE]
    if type(value) is bytes:
        found = CACHE._young.get(value)  # a young hit is one dict read, as in checked_descriptor
        if found is None:
            found = CACHE.promoted(value)
        if type(found) is TableDescriptor:
            return found
    descriptor, object_id = _identified(record)
    if not _holds(tables.get(object_id), record):
        raise FormatError(
            f"stored catalog value of table {record[NAME]} holds the descriptor of object "
            f"{object_id}, which is another table or none"
        )
    checked = check_descriptor(descriptor, TableDescriptor, object_id, record[NAME])
    if type(value) is bytes:
        CACHE.put(value, checked)
    return checked


def value_id(record: Record) -> int:
    """Return the id of the object a live record's descriptor (or its bytes) names.

    Raises:
        FormatError: the stored bytes hold no object.
    """
    return _identified(record)[1]


def _identified(record: Record) -> tuple[Any, int]:
    """Return the descriptor a live record holds and the id it gives.

    Bytes not in the cache are decoded, and not cached here.

    Raises:
        FormatError: the stored bytes hold no object.
    """
    value = record[VALUE]
    if type(value) is bytes:
        known = CACHE.known(value)
        value = known if known is not None else CACHE.decode(value)
    object_id = getattr(value, "id", None)
    if type(object_id) is not int:
        raise FormatError(f"stored catalog value of {record[NAME]} holds no object id")
    return value, object_id


def _holds(history: History | None, record: Record) -> bool:
    """Return whether ``record`` is one of ``history``'s records (the very object)."""
    return history is not None and any(r is record for r in records_of(history))


def bytes_of(record: Record) -> bytes:
    """Return the marshalled descriptor a (live) record holds."""
    value = record[VALUE]
    if type(value) is bytes:
        return value
    return encode_descriptor(value)


def check_descriptor(descriptor: Any, kind: type[D], object_id: int, name: str) -> D:
    """Return ``descriptor`` if it is the ``kind`` with that id and name, else raise.

    Raises:
        FormatError: the stored bytes do not hold the object the record names.
    """
    if not isinstance(descriptor, kind) or descriptor.id != object_id or descriptor.name != name:
        raise FormatError(
            f"cannot decode catalog value: stored {kind.__name__} {object_id} ({name}) "
            f"holds {type(descriptor).__name__} {getattr(descriptor, 'id', None)}"
        )
    return descriptor
