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

from catalog.descriptors import Descriptor
from catalog.entries.base import EntryBase
from catalog.events import CatalogEvent


@dataclass(frozen=True, slots=True)
class CatalogEventParameters:
    """What a listener is told.

    Attributes:
        event: the kind of event.
        version: the catalog version the change is in; ``catalog(version)`` is readable.
        activation_ts: when that version becomes active.
        descriptor: the object the event is about (the removed one for drops).
        entry: the update entry that fired the event.
        index: the entry's position within the version (events of a version are ordered).
    """

    event: CatalogEvent
    version: int
    activation_ts: int
    descriptor: Descriptor | None
    entry: EntryBase
    index: int


class FeedOverflowError(Exception):
    """The subscriber fell too far behind; it resumes from its last event."""


class EventFeed:
    """The events of every version published after ``first_version - 1``, in order.

    Args:
        first_version: the first version this feed receives.
        limit: how many versions may wait unread before the feed is cut off.
    """

    def __init__(self, first_version: int, limit: int) -> None:
        self.first_version = first_version
        self._queue: asyncio.Queue[tuple[int, list[CatalogEventParameters]]] = asyncio.Queue()
        self._limit = limit
        self.overflowed = False

    def offer(self, version: int, events: list[CatalogEventParameters]) -> None:
        """Queue the events of ``version`` (an empty list for a version without events)."""
        if self._queue.qsize() >= self._limit:
            self.overflowed = True
            return
        self._queue.put_nowait((version, events))

    async def next(self) -> tuple[int, list[CatalogEventParameters]]:
        """Return the next version and its events, waiting for one.

        Raises:
            FeedOverflowError: versions were dropped because the subscriber fell behind.
        """
        if self.overflowed and self._queue.empty():
            raise FeedOverflowError("the subscriber fell behind the catalog")
        return await self._queue.get()
