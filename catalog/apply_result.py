"""``ApplyResult``: what running a batch of commands returned (here, and to REST clients)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class ApplyResult:
    """What ``CatalogManager.execute`` returns.

    Attributes:
        version: the catalog version holding the change (the current one if nothing changed).
        applied: per command, False where it was a no-op (IF [NOT] EXISTS, unchanged value).
            Empty when the request was answered from a version compacted since.
        activation_ts: when ``version`` becomes active (hybrid timestamp).
        nodes_synced: with ``wait_for_nodes``, the registered nodes that reported ``version``.
        nodes_lagging: with ``wait_for_nodes``, the live registered nodes that had not
            reported it when the wait ended (empty when every node did).
    """

    version: int
    applied: tuple[bool, ...]
    activation_ts: int
    nodes_synced: tuple[str, ...] | None = None
    nodes_lagging: tuple[str, ...] | None = None
