"""Descriptors kept as bytes in the shared store: lazy decoding, the bounded cache, sealing."""

from __future__ import annotations

import gc
import hashlib
import random
from collections.abc import Iterator

import msgpack
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from catalog import Catalog, CatalogError, ColumnType, VersionedUpdate, prepare
from catalog import commands as c
from catalog.collector import collector_paused, full_collection_ahead
from catalog.descriptors.tables import shared_column
from catalog.snapshots import catalog_digest, decode_snapshot, encode_snapshot, snapshot_pieces
from catalog.storage import relation_store as store_module
from catalog.storage.descriptor_cache import CACHE
from tests.random_ddl import random_batch
from tests.unit.catalog.helpers import apply, col, create_table, key, run
from updatelog.errors import FormatError


def _next_update(head: Catalog, rng: random.Random) -> VersionedUpdate | None:
    """Return the update of a random valid batch on ``head``, or None if it was refused."""
    try:
        prepared = prepare(head, random_batch(rng, head))
    except CatalogError:
        return None
    return VersionedUpdate(
        version=head.version + 1,
        proposal_ts=(head.version + 1) << 16,
        delay_ms=0,
        entries=prepared.entries,
    )


def _tables(count: int) -> Catalog:
    cat = Catalog.initial()
    return run(cat, *(create_table(f"T{i}") for i in range(count))).catalog


@pytest.fixture
def small_cache() -> Iterator[int]:
    """Shrink the shared cache to 16 descriptors for one test, then restore it."""
    capacity = CACHE.capacity
    CACHE.clear()
    CACHE.capacity = 16
    try:
        yield 16
    finally:
        CACHE.capacity = capacity
        CACHE.clear()


def test_lazily_decoded_descriptors_equal_the_originals() -> None:
    direct = _tables(50)
    loaded = decode_snapshot(encode_snapshot(direct))
    CACHE.clear()
    assert loaded.tables() == direct.tables()
    assert loaded.indexes() == direct.indexes()
    for t in direct.tables():
        assert loaded.table("PUBLIC", t.name) == t
        assert loaded.table_by_id(t.id) == t
        assert loaded.table_indexes(t.id) == direct.table_indexes(t.id)
    assert loaded.schema_tables(0) == direct.schema_tables(0)
    assert loaded.zone_tables(2) == direct.zone_tables(2)


def test_a_lookup_decodes_only_the_descriptor_it_returns_or_whose_id_it_needs() -> None:
    loaded = decode_snapshot(encode_snapshot(_tables(200)))
    CACHE.clear()
    before = CACHE.decoded
    table = loaded.table("PUBLIC", "T123")
    assert CACHE.decoded == before + 1
    assert loaded.table_by_id(table.id) is table  # now from the cache: no second decode
    assert loaded.find_index("PUBLIC", "T7_PK") is not None
    assert loaded.find_table("PUBLIC", "NOPE") is None
    assert CACHE.decoded == before + 2
    assert loaded.relation_id(0, "T9") is not None  # the id is in the descriptor's bytes
    assert loaded.table("PUBLIC", "T9").id == loaded.relation_id(0, "T9")
    assert CACHE.decoded == before + 3


def test_the_cache_stays_bounded_and_answers_stay_right(small_cache: int) -> None:
    direct = _tables(300)
    expected = {t.name: t for t in direct.tables()}
    loaded = decode_snapshot(encode_snapshot(direct))
    rng = random.Random(3)
    names = list(expected)
    for _ in range(2000):
        name = rng.choice(names)
        assert loaded.table("PUBLIC", name) == expected[name]
        assert len(CACHE) <= 2 * small_cache
    assert loaded.tables() == direct.tables()
    assert len(CACHE) <= 2 * small_cache


def test_old_versions_read_the_same_after_later_seals() -> None:
    """Sealing version N+1 into the shared store must not change what version N reads."""
    published = [Catalog.initial().sealed()]
    digests = [published[0].digest()]
    rng = random.Random(11)
    for _ in range(80):
        head = published[-1]
        update = _next_update(head, rng)
        if update is None:
            continue
        unsealed = update.apply_to(head)
        sealed = unsealed.sealed()
        digests.append(unsealed.digest())
        published.append(sealed)
        CACHE.clear()  # read from bytes again, not from objects the seal cached
        assert sealed.digest() == digests[-1]
        assert sealed.tables() == unsealed.tables()
    for cat, digest in zip(published, digests, strict=True):
        assert catalog_digest(cat) == digest  # recomputed from the store as it is now


def test_only_the_newest_catalog_of_a_lineage_seals() -> None:
    head = Catalog.initial().sealed()
    first = run(head, create_table("A")).catalog
    second = run(head, create_table("B")).catalog
    sealed_first = first.sealed()
    assert sealed_first is not first
    assert second.sealed() is second  # the store moved on: stays an overlay, still right
    assert second.find_table("PUBLIC", "A") is None
    assert second.table("PUBLIC", "B").name == "B"
    assert head.find_table("PUBLIC", "A") is None
    assert sealed_first.table("PUBLIC", "A") == first.table("PUBLIC", "A")


def test_renames_and_drops_across_seals() -> None:
    v1 = run(Catalog.initial(), create_table("A"), create_table("B")).catalog.sealed()
    v2 = run(v1, c.RenameTable(schema="PUBLIC", name="A", new_name="C")).catalog.sealed()
    v3 = run(v2, c.DropTable(schema="PUBLIC", name="B")).catalog.sealed()
    v4 = run(v3, create_table("A")).catalog.sealed()
    assert v1.find_table("PUBLIC", "A") is not None and v1.find_table("PUBLIC", "C") is None
    assert v2.find_table("PUBLIC", "A") is None
    assert v2.table("PUBLIC", "C").id == v1.table("PUBLIC", "A").id
    assert v3.find_table("PUBLIC", "B") is None and v2.find_table("PUBLIC", "B") is not None
    assert v4.table("PUBLIC", "A").id != v1.table("PUBLIC", "A").id
    assert v1.table("PUBLIC", "A").id == v2.table("PUBLIC", "C").id
    assert [t.name for t in v4.tables()] == ["C", "A"]
    assert v3.schema_is_empty(0) is False
    for cat in (v1, v2, v3, v4):
        assert decode_snapshot(encode_snapshot(cat)) == cat


@settings(max_examples=30, deadline=None)
@given(st.randoms(use_true_random=False))
def test_every_version_finds_by_name_the_table_its_walk_holds(rng: random.Random) -> None:
    """Names taken, given up, renamed to and reused, one batch per sealed version: at every
    version a lookup by name finds the table (by id) that version's walk of all tables holds
    under that name, and nothing under a name no table there has."""
    pool = ["A", "B", "C", "D"]
    published = [Catalog.initial().sealed()]
    for _ in range(30):
        head, batch = published[-1], list[c.CommandBase]()
        for _ in range(rng.randint(1, 3)):  # swaps, drop and re-create within one batch
            taken = {t.name for t in (apply(head, *batch) if batch else head).tables()}
            free = [n for n in pool if n not in taken]
            options: list[c.CommandBase] = [create_table(n) for n in free]
            for name in sorted(taken):
                options.append(c.DropTable(schema="PUBLIC", name=name))
                options += [c.RenameTable(schema="PUBLIC", name=name, new_name=n) for n in free]
            batch.append(rng.choice(options))
        published.append(run(head, *batch).catalog.sealed())
    for cat in published:
        walked = {t.name: t.id for t in cat.tables()}
        CACHE.clear()  # found by name from the bytes, not from what the walk cached
        for name in pool:
            found = cat.find_table("PUBLIC", name)
            assert (None if found is None else found.id) == walked.get(name), (cat.version, name)
            assert cat.relation_id(0, name) == walked.get(name)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.randoms(use_true_random=False), st.integers(1, 40), st.integers(0, 40))
def test_node_applying_versions_and_node_loading_a_snapshot_agree(
    rng: random.Random, steps: int, snapshot_at: int
) -> None:
    """One node applies every version (sealing each, as the service does); another loads a
    snapshot of some version and applies the rest: every version has the same digest."""
    applied = [Catalog.initial(activation_ts=1 << 16).sealed()]
    updates: list[VersionedUpdate] = []
    for _ in range(steps):
        head = applied[-1]
        update = _next_update(head, rng)
        if update is None:
            continue
        updates.append(update)
        applied.append(update.apply_to(head).sealed())
    cut = min(snapshot_at, len(applied) - 1)
    loaded = [decode_snapshot(encode_snapshot(applied[cut]))]
    for update in updates[cut:]:
        loaded.append(update.apply_to(loaded[-1]).sealed())
    for mine, theirs in zip(applied[cut:], loaded, strict=True):
        assert mine.digest() == theirs.digest()
        assert mine.counts() == theirs.counts()
        assert encode_snapshot(theirs) == encode_snapshot(mine)


def _judged(head: Catalog, batch: list[c.CommandBase]) -> Catalog | str:
    try:
        return prepare(head, batch).catalog
    except CatalogError as e:
        return str(e.code)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.randoms(use_true_random=False), st.integers(1, 30))
def test_batches_judged_on_sealed_versions_agree_with_never_sealed_ones(
    rng: random.Random, steps: int
) -> None:
    """A batch of several commands, judged on a sealed version (whose overlay holds only the
    batch's own changes) and on the same version never sealed, is refused alike or gives the
    same catalog, and every table and alive index it holds is found by name as by id."""
    sealed = never_sealed = Catalog.initial(activation_ts=1 << 16)
    for step in range(steps):
        batch = random_batch(rng, sealed, max_size=4)
        mine, theirs = _judged(sealed.sealed(), batch), _judged(never_sealed, batch)
        if isinstance(mine, str) or isinstance(theirs, str):
            assert mine == theirs
            continue
        assert mine.digest() == theirs.digest()
        for table in mine.tables():
            schema = mine.schema_by_id(table.schema_id).name
            assert mine.table(schema, table.name) == table
        for index in mine.indexes():
            if index.is_alive:
                schema = mine.schema_by_id(index.schema_id).name
                assert mine.index(schema, index.name) == index
        ts = (step + 2) << 16
        sealed = mine.with_version(sealed.version + 1, ts).sealed()
        never_sealed = theirs.with_version(never_sealed.version + 1, ts)


def test_bytes_that_do_not_hold_the_named_table_are_refused_when_read() -> None:
    data = encode_snapshot(_tables(3))
    header, kind, body = msgpack.unpackb(data)
    values = body[6][0][4]
    values[0], values[1] = values[1], values[0]
    loaded = decode_snapshot(msgpack.packb([header, kind, body], use_bin_type=True))
    CACHE.clear()
    with pytest.raises(FormatError, match="holds"):
        loaded.table("PUBLIC", "T0")
    assert loaded.table("PUBLIC", "T2").name == "T2"


def test_bytes_of_a_namesake_in_another_schema_are_refused_when_read_by_name() -> None:
    """The bytes name the right table name and kind, only their id is another table's."""
    cat = run(Catalog.initial(), c.CreateSchema(name="S2")).catalog
    cat = run(cat, create_table("T"), create_table("T", schema="S2")).catalog.sealed()
    header, kind, body = msgpack.unpackb(encode_snapshot(cat))
    first, second = body[6][0][4], body[6][1][4]
    first[0], second[0] = second[0], first[0]
    loaded = decode_snapshot(msgpack.packb([header, kind, body], use_bin_type=True))
    CACHE.clear()
    with pytest.raises(FormatError, match="another table"):
        loaded.table("PUBLIC", "T")


def test_sealing_leaves_the_store_to_the_collector_untouched(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Creates, index creations, renames and drops sealed into a store whose big maps the
    collector stopped tracking keep them untracked: no collection walks every record again.
    (A store this small is left to the collector's pace; the bar is lowered to check how.)"""
    monkeypatch.setattr(store_module, "UNTRACK_FROM", 0)
    head = _tables(100).sealed()
    store = head._store
    gc.collect()  # a full collection stops tracking maps of plain records
    big = {
        "tables": store.tables,
        "indexes": store.indexes,
        "table_index_members": store.table_index_members,
        "names": store.table_names[0],
        "index names": store.index_names[0],
    }
    assert not any(gc.is_tracked(m) for m in big.values())
    batches: list[list[c.CommandBase]] = [
        [create_table(f"N{i}") for i in range(20)],
        [
            c.CreateIndex(schema="PUBLIC", name=f"I{i}", table=f"T{i}", columns=["A"])
            for i in range(5)
        ],
        [
            c.RenameTable(schema="PUBLIC", name="T1", new_name="R1"),
            c.DropTable(schema="PUBLIC", name="T2"),
        ],
        [create_table("T2"), c.AddColumns(schema="PUBLIC", table="T3", columns=[col("C")])],
    ]
    for batch in batches:
        head = run(head, *batch).catalog.sealed()
        assert [name for name, m in big.items() if gc.is_tracked(m)] == [], batch
    assert head.table("PUBLIC", "T2").id != _tables(100).table("PUBLIC", "T2").id
    assert {i.name for i in head.indexes() if i.table_id == head.table("PUBLIC", "T0").id} == {
        "T0_PK",
        "I0",
    }


def test_a_small_store_seals_without_forcing_a_collection(monkeypatch: pytest.MonkeyPatch) -> None:
    collections: list[int] = []

    def collect(generation: int = 2) -> int:
        collections.append(generation)
        return 0

    monkeypatch.setattr(gc, "collect", collect)
    head = _tables(20).sealed()
    head = run(head, create_table("N")).catalog.sealed()
    assert collections == [] and head.table("PUBLIC", "N").name == "N"
    monkeypatch.setattr(store_module, "UNTRACK_FROM", len(head._store.tables))
    run(head, c.RenameTable(schema="PUBLIC", name="N", new_name="M")).catalog.sealed()
    assert collections == [0, 0]  # the records, then the histories that hold them


def test_equal_columns_are_one_object_and_unequal_ones_are_not() -> None:
    cat = run(Catalog.initial(), create_table("A"), create_table("B")).catalog
    a, b = cat.table("PUBLIC", "A"), cat.table("PUBLIC", "B")
    assert all(x is y for x, y in zip(a.columns, b.columns, strict=True))
    loaded = decode_snapshot(encode_snapshot(cat.sealed()))
    CACHE.clear()
    assert loaded.table("PUBLIC", "A").columns[1] is a.columns[1]

    def shared(ctype: ColumnType, default: object) -> object:
        return shared_column(
            id=1,
            name="X",
            type=ctype,
            nullable=True,
            precision=None,
            scale=None,
            length=None,
            default=default,  # type: ignore[arg-type]
        )

    assert shared(ColumnType.FLOAT64, -0.0) is not shared(ColumnType.FLOAT64, 0.0)
    assert str(shared(ColumnType.FLOAT64, -0.0).default) == "-0.0"  # type: ignore[attr-defined]
    assert shared(ColumnType.INT64, 1) is not shared(ColumnType.INT64, True)
    assert shared(ColumnType.INT64, 1).default is not True  # type: ignore[attr-defined]
    assert key("ID").to_descriptor(0) is key("ID").to_descriptor(0)
    assert key("ID").to_descriptor(0) is not key("ID").to_descriptor(1)


@pytest.mark.parametrize("count", [0, 15, 16, 4097])
def test_a_snapshot_packed_in_slices_is_one_msgpack_value(count: int) -> None:
    """Long lists are packed a slice at a time; the bytes are those of one ``packb``.

    A large catalog stays in those slices, never joined, up to the store's chunks.
    """
    catalog = _tables(count)
    data = encode_snapshot(catalog)
    value = msgpack.unpackb(data, raw=False, strict_map_key=False)
    assert msgpack.packb(value, use_bin_type=True) == data
    assert sum(len(group[1]) for group in value[2][6]) == count
    pieces = snapshot_pieces(catalog)
    assert b"".join(pieces) == data
    assert count <= 4096 or max(len(piece) for piece in pieces) < 0.6 * len(data)
    assert catalog_digest(catalog) == hashlib.sha256(data).hexdigest()


def test_a_descriptor_read_often_stays_cached_while_others_pass(small_cache: int) -> None:
    loaded = decode_snapshot(encode_snapshot(_tables(300)))
    CACHE.clear()
    loaded.table("PUBLIC", "T0")
    before = CACHE.decoded
    for i in range(1, 300):
        loaded.table("PUBLIC", f"T{i}")
        loaded.table("PUBLIC", "T0")
        assert len(CACHE) <= 2 * small_cache
    assert CACHE.decoded == before + 299  # each cold table once, the hot one never again


def test_a_working_set_as_large_as_the_cache_is_decoded_once(small_cache: int) -> None:
    loaded = decode_snapshot(encode_snapshot(_tables(small_cache)))
    names = [t.name for t in loaded.tables()]
    CACHE.clear()
    before = CACHE.decoded
    rng = random.Random(5)
    for _ in range(2000):
        loaded.table("PUBLIC", rng.choice(names))
    assert CACHE.decoded == before + small_cache


def test_sealing_while_another_thread_pauses_the_collector_keeps_the_maps_untracked(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A snapshot encoded in a worker thread pauses the collector, and commits go on: their
    seals still untrack what they write, or the first collection after the pause would walk
    the store's big maps whole. A recovery's pause, which ends in a full collection, need not."""
    monkeypatch.setattr(store_module, "UNTRACK_FROM", 0)
    head = _tables(100).sealed()
    store = head._store
    gc.collect()
    assert not gc.is_tracked(store.tables)
    with collector_paused():
        head = run(head, create_table("DURING")).catalog.sealed()
        head = run(head, c.RenameTable(schema="PUBLIC", name="T1", new_name="R1")).catalog.sealed()
        assert not gc.is_tracked(store.tables) and not gc.is_tracked(store.table_names[0])
    with collector_paused(collect_after=True):
        assert full_collection_ahead()
        head = run(head, create_table("RECOVERED")).catalog.sealed()
    assert not full_collection_ahead()
    assert not gc.is_tracked(store.tables)  # the full collection that ended the pause
    assert {"DURING", "R1", "RECOVERED"} <= {t.name for t in head.tables()}
