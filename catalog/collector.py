"""``collector_paused``: the cyclic garbage collector held off while a large heap is built.

Building (or encoding) a million tables allocates objects faster than they die; left running,
the cyclic collector walks the growing heap again and again, each full pass holding every
thread of the process, the event loop's commits included. The catalog's objects hold no
cycles, so reference counting frees what they drop and the pause loses nothing.
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator

_collections_ahead = 0
"""How many paused blocks will end with a full collection (``collect_after``)."""


def full_collection_ahead() -> bool:
    """Return whether the collector is paused by a block that ends with a full collection.

    Such a block (a recovery) untracks at its end whatever it built, so work meant to keep
    new objects out of the collector's sight (``RelationStore.seal``) can leave it to that
    collection. Any other pause (a snapshot encoded in a worker thread while commits go on)
    ends with no collection: what such work skipped, the next collection walks in full.
    """
    return _collections_ahead > 0


@contextlib.contextmanager
def collector_paused(*, collect_after: bool = False) -> Iterator[None]:
    """Pause the cyclic collector for the block; resume it after, unless it was paused before.

    Args:
        collect_after: the block builds a heap that stays (recovery): collect once at the end,
            which moves it all to the oldest generation in one pass. That collection walks
            only what the block built: what the process held before is frozen for it
            (``gc.freeze``), so a node started in a process with a large heap of its own does
            not pay for walking it (0.55 s for 6 million objects); unless something else
            froze objects already, whose freeze is then left alone.
    """
    if not gc.isenabled():
        yield
        return
    global _collections_ahead
    freeze = collect_after and gc.get_freeze_count() == 0
    if freeze:
        gc.freeze()
    gc.disable()
    _collections_ahead += collect_after
    try:
        yield
    finally:
        _collections_ahead -= collect_after
        gc.enable()
        if collect_after:
            gc.collect()
        if freeze:
            gc.unfreeze()
