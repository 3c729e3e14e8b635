"""Counts as each version sees them: kept once per change, read at any stamp."""

from __future__ import annotations

from catalog import Catalog
from catalog.storage.counts import INDEXES, StampedCounts, schema_key, zone_key
from tests.unit.catalog.helpers import create_table, run


def test_a_count_reads_as_of_its_stamp() -> None:
    counts = StampedCounts()
    counts.write(0, [(schema_key(0), 5)])
    counts.write(3, [(schema_key(0), 6), (zone_key(2), 1)])
    counts.write(7, [(schema_key(0), 4)])
    assert [counts.at(s, schema_key(0)) for s in range(9)] == [5, 5, 5, 6, 6, 6, 6, 4, 4]
    assert [counts.at(s, zone_key(2)) for s in (0, 2, 3, 9)] == [0, 0, 1, 1]
    assert counts.at(9, INDEXES) == 0  # never written


def test_every_kept_version_keeps_its_counts_after_later_seals() -> None:
    versions = [Catalog.initial().sealed()]
    for i in range(5):
        changed = run(versions[-1], create_table(f"T{i}")).catalog
        versions.append(changed.with_version(i + 2, i + 2).sealed())
    last = run(versions[-1], create_table("UNSEALED")).catalog  # an overlay on top
    assert [v.counts()["tables"] for v in versions] == [0, 1, 2, 3, 4, 5]
    assert [v.counts()["indexes"] for v in versions] == [0, 1, 2, 3, 4, 5]
    assert last.counts()["tables"] == 6 and versions[-1].counts()["tables"] == 5
    public = versions[0].schema("PUBLIC").id
    assert versions[0].schema_is_empty(public) and not versions[1].schema_is_empty(public)
