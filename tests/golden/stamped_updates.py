"""The one way the golden files of a kind of object make their update: version 1 (the initial
catalog with its default zone, activated at ``t0``) and update 2 of a batch of commands,
stamping what it changes (``catalog_values`` says how golden files are made)."""

from __future__ import annotations

from collections.abc import Sequence

from catalog import Catalog, VersionedUpdate, prepare
from catalog.commands.base import CommandBase
from tests.unit.catalog.helpers import catalog_with_default_zone


def stamped_update(t0: int, commands: Sequence[CommandBase]) -> tuple[Catalog, VersionedUpdate]:
    """Return version 1, activated at ``t0`` (ms), and update 2: the entries of ``commands``
    proposed one second later, with a 500 ms delay."""
    v1 = catalog_with_default_zone(activation_ts=t0 << 16)
    prepared = prepare(v1, list(commands))
    update = VersionedUpdate(
        version=2,
        proposal_ts=((t0 + 1_000) << 16) + 1,
        delay_ms=500,
        entries=list(prepared.entries),
        stamps=True,
    )
    return v1, update
