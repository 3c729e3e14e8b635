"""A live node encodes its snapshots with the cyclic collector paused, and resumes it after."""

from __future__ import annotations

import gc

import pytest

from catalog import Catalog
from catalog import manager as manager_module
from catalog.snapshots import decode_snapshot, snapshot_pieces


def test_the_collector_is_paused_while_a_snapshot_is_encoded(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    seen: list[bool] = []

    def encode(catalog: Catalog) -> list[bytes]:
        seen.append(gc.isenabled())
        return snapshot_pieces(catalog)

    monkeypatch.setattr(manager_module, "snapshot_pieces", encode)
    cat = Catalog.initial()
    assert decode_snapshot(b"".join(manager_module._encoded(cat))) == cat
    assert seen == [False]
    assert gc.isenabled()


def test_a_failed_encoding_resumes_the_collector(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(catalog: Catalog) -> list[bytes]:
        raise MemoryError("no room")

    monkeypatch.setattr(manager_module, "snapshot_pieces", broken)
    with pytest.raises(MemoryError):
        manager_module._encoded(Catalog.initial())
    assert gc.isenabled()
