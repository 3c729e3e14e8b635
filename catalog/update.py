"""``VersionedUpdate``: one catalog version's worth of entries, as stored in the log."""

from __future__ import annotations

from collections.abc import Generator, Iterator
from typing import ClassVar

from catalog.catalog import Catalog
from catalog.causality import stamp
from catalog.entries import (
    EntryBase,
    NewSchemaEntry,
    ObjectIdGenUpdateEntry,
    UpdateEntry,
)
from catalog.event_feed import CatalogEventParameters, event_subject
from catalog.model import Model
from catalog.origin import UpdateOrigin
from schemasync.service import ms_to_hlc


class RequestOutcome(Model):
    """Which commands of one client request applied, so a retried request can be answered."""

    request_id: str
    applied: tuple[bool, ...]


class VersionedUpdate(Model):
    """The entries that turn catalog ``version - 1`` into ``version``.

    Activation is computed from the update itself and the previous version, so every node
    derives the same timestamp: ``max(previous activation + 1, proposal_ts + delay)``.
    """

    version: int
    proposal_ts: int
    delay_ms: int
    entries: tuple[UpdateEntry, ...]
    requests: tuple[RequestOutcome, ...] = ()
    origins: tuple[UpdateOrigin, ...] = ()
    """Who asked for this version and why: one per request it holds, in the order of their
    entries (none for version 1, nor for versions written before origins were recorded)."""
    stamps: bool = False
    """Whether applying it stamps the objects it changes with its activation time (every
    version written now; see ``catalog.causality``)."""

    WIRE_APPENDED: ClassVar[tuple[str, ...]] = ("origins", "stamps")
    """Fields appended to the stored form after its first format (``origins`` in format 3,
    ``stamps`` since); older payloads lack them."""

    def origin_of(self, index: int) -> UpdateOrigin | None:
        """Return the origin of the request that produced entry ``index``, if recorded."""
        end = 0
        for origin in self.origins:
            end += origin.entries
            if index < end:
                return origin
        return None

    def activation_ts(self, previous_activation_ts: int) -> int:
        """Return this version's activation timestamp given the previous version's."""
        return max(previous_activation_ts + 1, self.proposal_ts + ms_to_hlc(self.delay_ms))

    def apply_to(
        self, previous: Catalog, events: list[CatalogEventParameters] | None = None
    ) -> Catalog:
        """Return catalog ``version``, built from ``previous`` (which must be ``version - 1``).

        With ``events``, the event of each entry that fires one is appended to it as the entry
        applies, naming the object it is about: the one application its events come from.

        Raises:
            ValueError: ``previous`` is not the version this update follows.
        """
        applying = self._applying(previous, with_events=events is not None)
        try:
            while True:  # yields only when events are asked for
                event = next(applying)
                assert events is not None
                events.append(event)
        except StopIteration as done:
            catalog: Catalog = done.value
            return catalog

    def events_from(self, previous: Catalog) -> Iterator[CatalogEventParameters]:
        """Yield this update's events one at a time, as its entries apply to ``previous``.

        Nothing is kept beyond the entry being applied, so a replay of a version with many
        entries holds one event at a time.

        Raises:
            ValueError: ``previous`` is not the version this update follows.
        """
        yield from self._applying(previous, with_events=True)

    def _applying(
        self, previous: Catalog, *, with_events: bool
    ) -> Generator[CatalogEventParameters, None, Catalog]:
        if previous.version != self.version - 1:
            raise ValueError(
                f"update {self.version} cannot follow catalog version {previous.version}"
            )
        activation_ts = self.activation_ts(previous.activation_ts)
        current = previous
        for index, entry in enumerate(self.entries):
            after = entry.apply(current)
            if with_events and entry.event is not None:
                subject = event_subject(entry.subject(current, after), current, after)
                yield CatalogEventParameters(
                    entry.event,
                    self.version,
                    activation_ts,
                    subject,
                    entry,
                    index,
                    self.origin_of(index),
                )
            current = after
        return self.completed(previous, current)

    def completed(self, previous: Catalog, applied: Catalog) -> Catalog:
        """Return ``applied`` (these entries applied to ``previous``) as catalog ``version``.

        Active from this update's activation time, and with what it changed stamped with that
        time when the update stamps (``catalog.causality``).
        """
        activation_ts = self.activation_ts(previous.activation_ts)
        if self.stamps:
            applied = stamp(previous, applied, self.entries, activation_ts)
        return applied.with_version(self.version, activation_ts)


def initial_update(proposal_ts: int) -> VersionedUpdate:
    """Return version 1: the entries that build ``Catalog.initial()`` from nothing, delay 0."""
    initial = Catalog.initial()
    entries: list[EntryBase] = [NewSchemaEntry(schema=s) for s in initial.schemas()]
    entries.append(ObjectIdGenUpdateEntry(delta=initial.object_id_gen))
    return VersionedUpdate(
        version=1, proposal_ts=proposal_ts, delay_ms=0, entries=tuple(entries), stamps=True
    )
