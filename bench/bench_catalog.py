"""Catalog core figures: memory across versions, apply cost vs size, snapshot round trip.

- P4: memory of 10k tables created one per version, all versions kept (sealed, as a node keeps
  them) ÷ the final catalog alone, loaded from its snapshot (goal <= 1.3). Ignite keeps a full
  set of lookup maps per version: O(n²).
- P5: time to apply one entry at 10k tables ÷ at 100 tables (goal <= 1.2).
- P8: msgpack snapshot round trip of 1k tables ÷ a pydantic JSON round trip of the same
  descriptors (goal <= 0.2 for time, <= 0.6 for size).
"""

from __future__ import annotations

import gc
import time
import tracemalloc
from collections.abc import Callable

from api.wire.models import CatalogBody
from bench.harness import Figure, Sample, measure, progress
from bench.tables import create_command
from catalog import Catalog, prepare
from catalog.descriptors import TableDescriptor
from catalog.entries import NewTableEntry
from catalog.snapshots import decode_snapshot, encode_snapshot
from catalog.storage.descriptor_cache import CACHE


def build_versions(tables: int) -> list[Catalog]:
    """Create ``tables`` tables, one catalog version each; return every version.

    Each version is sealed, as a node's service seals every version it publishes.
    """
    versions = [Catalog.initial().sealed()]
    for i in range(tables):
        current = versions[-1]
        prepared = prepare(current, [create_command(f"T{i}")])
        version = prepared.catalog.with_version(current.version + 1, current.version + 1)
        versions.append(version.sealed())
    return versions


def _memory(build: Callable[[], object]) -> int:
    """Return the bytes ``build``'s result holds, without the process's decoded-descriptor cache.

    The cache is bounded (its capacity in descriptors) and shared by every catalog of the
    process, so it is emptied before and after: what remains is what the result itself holds.
    """
    CACHE.clear()
    gc.collect()
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    kept = build()
    CACHE.clear()
    gc.collect()
    used = tracemalloc.get_traced_memory()[0] - before
    tracemalloc.stop()
    del kept
    return used


def p4_memory(tables: int, repeats: int) -> Figure:
    progress(f"P4: {tables} tables, one version each, all versions kept")
    final = build_versions(tables)[-1]
    encoded = encode_snapshot(final)
    all_versions = measure(
        lambda: float(_memory(lambda: build_versions(tables))), repeats=repeats, warmup=0, unit="B"
    )
    alone = measure(
        lambda: float(_memory(lambda: decode_snapshot(encoded))),
        repeats=repeats,
        warmup=0,
        unit="B",
    )
    return Figure(
        "P4",
        f"memory: {tables} tables one per version, all kept ÷ final catalog alone",
        all_versions,
        alone,
        "<= 1.3",
    )


def _apply_seconds(cat: Catalog, rounds: int) -> float:
    entries = [NewTableEntry(table=t) for t in _fresh_tables(cat, rounds)]
    start = time.perf_counter()
    for entry in entries:
        entry.apply(cat)
    return (time.perf_counter() - start) / rounds


def _fresh_tables(cat: Catalog, count: int) -> list[TableDescriptor]:
    template = prepare(cat, [create_command("PROBE")]).entries[0]
    assert isinstance(template, NewTableEntry)
    base = cat.object_id_gen + 10
    return [
        template.table.model_copy(update={"id": base + i, "name": f"PROBE{i}"})
        for i in range(count)
    ]


def p5_apply(repeats: int) -> Figure:
    progress("P5: apply one entry at 100 and at 10k tables")
    small = build_versions(100)[-1]
    large = build_versions(10_000)[-1]
    rounds = 2000
    at_large = measure(lambda: _apply_seconds(large, rounds), repeats=repeats, unit="s")
    at_small = measure(lambda: _apply_seconds(small, rounds), repeats=repeats, unit="s")
    return Figure(
        "P5", "apply one entry at 10k tables ÷ at 100 tables", at_large, at_small, "<= 1.2"
    )


def p8_snapshot(repeats: int) -> list[Figure]:
    progress("P8: snapshot round trip of 1k tables, msgpack vs pydantic JSON")
    cat = build_versions(1000)[-1]
    doc = CatalogBody.of(cat)  # the same content as one pydantic JSON document

    def ours() -> float:
        start = time.perf_counter()
        decode_snapshot(encode_snapshot(cat))
        return time.perf_counter() - start

    def json_round_trip() -> float:
        start = time.perf_counter()
        CatalogBody.model_validate_json(doc.model_dump_json())
        return time.perf_counter() - start

    ours_size = float(len(encode_snapshot(cat)))
    json_size = float(len(doc.model_dump_json()))
    return [
        Figure(
            "P8t",
            "snapshot round trip 1k tables: msgpack ÷ pydantic JSON (time)",
            measure(ours, repeats=repeats, unit="s"),
            measure(json_round_trip, repeats=repeats, unit="s"),
            "<= 0.2",
        ),
        Figure(
            "P8s",
            "snapshot of 1k tables: msgpack ÷ pydantic JSON (size)",
            Sample(ours_size, ours_size, ours_size, "B"),
            Sample(json_size, json_size, json_size, "B"),
            "<= 0.6",
        ),
    ]


def run(quick: bool) -> list[Figure]:
    """Measure P4, P5 and P8."""
    repeats = 3 if quick else 7
    return [p4_memory(10_000, 1 if quick else 3), p5_apply(repeats), *p8_snapshot(repeats)]
