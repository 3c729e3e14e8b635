"""``VersionedUpdate``: one catalog version's worth of entries, as stored in the log."""

from __future__ import annotations

from catalog.catalog import Catalog
from catalog.entries import UpdateEntry
from catalog.model import Model
from catalog.prepare import apply_entries

LOGICAL_BITS = 16
"""Hybrid timestamps keep physical milliseconds above a 16-bit logical counter."""


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

    def activation_ts(self, previous_activation_ts: int) -> int:
        """Return this version's activation timestamp given the previous version's."""
        return max(previous_activation_ts + 1, self.proposal_ts + (self.delay_ms << LOGICAL_BITS))

    def apply_to(self, previous: Catalog) -> Catalog:
        """Return catalog ``version``, built from ``previous`` (which must be ``version - 1``).

        Raises:
            ValueError: ``previous`` is not the version this update follows.
        """
        if previous.version != self.version - 1:
            raise ValueError(
                f"update {self.version} cannot follow catalog version {previous.version}"
            )
        return apply_entries(previous, self.entries).with_version(
            self.version, self.activation_ts(previous.activation_ts)
        )
