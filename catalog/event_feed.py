"""What a catalog event tells, and ``EventFeed``: the events a node fires, for one subscriber.

A version's events come out of the one application of its entries (``VersionedUpdate.apply_to``)
on the node that publishes it; listeners are called with them, and feeds receive them, version
by version, to forward (the REST event stream is one). A feed is bounded: a subscriber that
falls ``limit`` versions behind is cut off, and resumes from its last event through the
retained history.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

from catalog.catalog import Catalog
from catalog.descriptors import (
    Descriptor,
    GrantDescriptor,
    IndexDescriptor,
    PrincipalDescriptor,
    RoleDescriptor,
    SchemaDescriptor,
    SecurableKind,
    TableDescriptor,
    ViewDescriptor,
    ZoneDescriptor,
)
from catalog.descriptors.schemas import SYSTEM_SCHEMA
from catalog.descriptors.system_views import SystemViewDescriptor
from catalog.entries.base import EntryBase
from catalog.events import CatalogEvent, EventSubject
from catalog.grant_names import grant_words, securable_name
from catalog.origin import UpdateOrigin


@dataclass(frozen=True, slots=True)
class CatalogEventParameters:
    """What a listener is told.

    Attributes:
        event: the kind of event.
        version: the catalog version the change is in; ``catalog(version)`` is readable.
        activation_ts: when that version becomes active.
        subject: the object the event is about, by id and name (the change itself is in
            ``entry``; the whole object is in ``catalog(version)``, or ``version - 1`` for drops).
        entry: the update entry that fired the event: what changed, nothing more.
        index: the entry's position within the version (events of a version are ordered).
        origin: who asked for the change, from what, and why (None where not recorded).
    """

    event: CatalogEvent
    version: int
    activation_ts: int
    subject: EventSubject
    entry: EntryBase
    index: int
    origin: UpdateOrigin | None = None

    def to_json(self) -> dict[str, object]:
        """Return what the event says on the wire: the change and the object's name.

        Not the object: a subscriber that wants it reads it at ``version`` (``version - 1``
        for drops), e.g. ``GET /v1/schemas/{schema}/tables/{table}?version=...``.
        """
        data: dict[str, object] = {
            "event": str(self.event),
            "version": self.version,
            "index": self.index,
            "activation_ts": self.activation_ts,
            "subject": self.subject.model_dump(mode="json", exclude_none=True),
            "entry": self.entry.model_dump(mode="json"),
        }
        if self.origin is not None:  # who asked for the change and why
            data["origin"] = self.origin.model_dump(mode="json", exclude_none=True)
        return data


def event_subject(descriptor: Descriptor | None, before: Catalog, after: Catalog) -> EventSubject:
    """Name the object an entry changed: ``descriptor`` as of ``after`` (``before`` for drops).

    Raises:
        ValueError: an entry that fires an event named no object.
    """
    if descriptor is None:
        raise ValueError("an entry that fires an event must name its subject")
    if isinstance(descriptor, ZoneDescriptor):
        return EventSubject(type="zone", id=descriptor.id, name=descriptor.name)
    if isinstance(descriptor, PrincipalDescriptor):
        return EventSubject(type="principal", id=descriptor.id, name=descriptor.name)
    if isinstance(descriptor, RoleDescriptor):
        return EventSubject(type="role", id=descriptor.id, name=descriptor.name)
    if isinstance(descriptor, GrantDescriptor):
        return _grant_subject(descriptor, before, after)
    if isinstance(descriptor, SchemaDescriptor):
        return EventSubject(
            type="schema", id=descriptor.id, name=descriptor.name, schema=descriptor.name
        )
    if isinstance(descriptor, SystemViewDescriptor):
        return EventSubject(
            type="system_view", id=descriptor.id, name=descriptor.name, schema=SYSTEM_SCHEMA
        )
    home = after.find_schema_by_id(descriptor.schema_id)
    schema = (home or before.schema_by_id(descriptor.schema_id)).name
    if isinstance(descriptor, ViewDescriptor):
        return _view_subject(descriptor, before, schema)
    if isinstance(descriptor, TableDescriptor):
        earlier: TableDescriptor | IndexDescriptor | None = before.find_table_by_id(descriptor.id)
        kind, table = "table", None
    else:
        earlier = before.find_index_by_id(descriptor.id)
        owner = after.find_table_by_id(descriptor.table_id)
        owner = owner or before.find_table_by_id(descriptor.table_id)
        kind, table = "index", (owner.name if owner is not None else None)
    renamed = earlier is not None and earlier.name != descriptor.name
    return EventSubject(
        type=kind,
        id=descriptor.id,
        name=descriptor.name,
        schema=schema,
        table=table,
        previous_name=earlier.name if earlier is not None and renamed else None,
    )


def _grant_subject(grant: GrantDescriptor, before: Catalog, after: Catalog) -> EventSubject:
    """Name a grant in words; ``schema`` is its object's schema, when it has one."""
    schema = None
    if grant.on in (SecurableKind.TABLE, SecurableKind.VIEW, SecurableKind.SCHEMA):
        named = securable_name(grant.on, grant.on_id, after, before)
        schema = None if named is None else named.partition(".")[0]
    return EventSubject(
        type="grant", id=grant.id, name=grant_words(grant, after, before), schema=schema
    )


def _view_subject(view: ViewDescriptor, before: Catalog, schema: str) -> EventSubject:
    """Name a view; a rename (or a move to another schema) names where it was."""
    earlier = before.find_view_by_id(view.id)
    moved = earlier is not None and (earlier.name, earlier.schema_id) != (view.name, view.schema_id)
    previous = None
    if earlier is not None and moved:
        home = before.schema_by_id(earlier.schema_id).name
        previous = earlier.name if earlier.schema_id == view.schema_id else f"{home}.{earlier.name}"
    return EventSubject(
        type="view", id=view.id, name=view.name, schema=schema, previous_name=previous
    )


@dataclass(frozen=True, slots=True)
class EventFilter:
    """Which events a subscriber wants; every given condition must hold (none: all events).

    Attributes:
        schema: only events about this schema and the objects in it (so never zone events).
        table: only events about tables of this name (before or after a rename) and their
            indexes.
        kinds: only these kinds of events.
    """

    schema: str | None = None
    table: str | None = None
    kinds: frozenset[CatalogEvent] | None = None

    @property
    def is_everything(self) -> bool:
        """Return True if every event passes."""
        return self.schema is None and self.table is None and self.kinds is None

    def matches(self, event: CatalogEventParameters) -> bool:
        """Return True if ``event`` passes the filter."""
        if self.kinds is not None and event.event not in self.kinds:
            return False
        subject = event.subject
        if self.schema is not None and subject.schema_ != self.schema:
            return False
        if self.table is None:
            return True
        if subject.type == "index":
            return subject.table == self.table
        return subject.type == "table" and self.table in (subject.name, subject.previous_name)

    def select(self, events: list[CatalogEventParameters]) -> list[CatalogEventParameters]:
        """Return the events of ``events`` that pass, in order."""
        return events if self.is_everything else [e for e in events if self.matches(e)]


class FeedOverflowError(Exception):
    """The subscriber fell too far behind; it resumes from its last event."""


class EventFeed:
    """The events of every version published after ``first_version - 1``, in order.

    Args:
        first_version: the first version this feed receives.
        limit: how many versions may wait unread before the feed is cut off.
        only: the events it receives (every version still arrives, maybe with none, so the
            subscriber always knows how far it has read).
    """

    def __init__(self, first_version: int, limit: int, only: EventFilter | None = None) -> None:
        self.first_version = first_version
        self.only = only or EventFilter()
        self._queue: asyncio.Queue[tuple[int, list[CatalogEventParameters]]] = asyncio.Queue()
        self._limit = limit
        self.overflowed = False

    def offer(self, version: int, events: list[CatalogEventParameters]) -> None:
        """Queue the events of ``version`` (an empty list for a version without events)."""
        if self._queue.qsize() >= self._limit:
            self.overflowed = True
            return
        self._queue.put_nowait((version, self.only.select(events)))

    async def next(self) -> tuple[int, list[CatalogEventParameters]]:
        """Return the next version and its events, waiting for one.

        Raises:
            FeedOverflowError: versions were dropped because the subscriber fell behind.
        """
        if self.overflowed and self._queue.empty():
            raise FeedOverflowError("the subscriber fell behind the catalog")
        return await self._queue.get()
