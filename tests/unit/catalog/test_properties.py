"""Properties over random DDL: replay paths agree, marshalling round-trips, garbage is refused."""

from __future__ import annotations

import contextlib
import random
from collections.abc import Callable

import msgpack
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from catalog import Catalog, CatalogError, VersionedUpdate, prepare
from catalog.descriptors import Descriptor
from catalog.marshalling import (
    decode_commands,
    decode_entries,
    decode_update,
    encode_commands,
    encode_entries,
    encode_update,
)
from catalog.snapshots import decode_snapshot, encode_snapshot
from catalog.wire import FORMAT_VERSION, decode_descriptor, decode_refusal, encode_descriptor
from tests.random_ddl import random_batch
from updatelog.errors import FormatError

DECODERS = [
    decode_update,
    decode_snapshot,
    decode_entries,
    decode_commands,
    decode_descriptor,
    decode_refusal,
]


def build_history(rng: random.Random, steps: int) -> tuple[list[Catalog], list[VersionedUpdate]]:
    """Commit random batches one version at a time, skipping refused ones."""
    versions = [Catalog.initial(activation_ts=1 << 16)]
    updates: list[VersionedUpdate] = []
    for _ in range(steps):
        current = versions[-1]
        try:
            prepared = prepare(current, random_batch(rng, current))
        except CatalogError:
            continue
        if not prepared.entries:
            continue
        update = VersionedUpdate(
            version=current.version + 1,
            proposal_ts=(current.version + 1) << 16,
            delay_ms=rng.choice([0, 500]),
            entries=prepared.entries,
        )
        versions.append(update.apply_to(current))
    return versions, updates


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.randoms(use_true_random=False), st.integers(min_value=1, max_value=60))
def test_two_replay_paths_give_equal_digests(rng: random.Random, steps: int) -> None:
    """Applying entries directly, or after encode→decode, yields identical catalogs."""
    direct = Catalog.initial(activation_ts=1 << 16)
    decoded = direct
    for _ in range(steps):
        try:
            prepared = prepare(direct, random_batch(rng, direct))
        except CatalogError:
            continue
        update = VersionedUpdate(
            version=direct.version + 1,
            proposal_ts=(direct.version + 1) << 16,
            delay_ms=0,
            entries=prepared.entries,
        )
        expected = prepared.catalog.with_version(
            update.version, update.activation_ts(direct.activation_ts)
        )
        direct = update.apply_to(direct)
        decoded = decode_update(encode_update(update)).apply_to(decoded)
        assert direct.digest() == expected.digest()
        assert decoded.digest() == direct.digest()
        assert decode_snapshot(encode_snapshot(direct)).digest() == direct.digest()


@settings(max_examples=40, deadline=None)
@given(st.randoms(use_true_random=False), st.integers(min_value=1, max_value=40))
def test_round_trips(rng: random.Random, steps: int) -> None:
    cat = Catalog.initial()
    for _ in range(steps):
        batch = random_batch(rng, cat)
        assert decode_commands(encode_commands(batch)) == batch
        try:
            prepared = prepare(cat, batch)
        except CatalogError:
            continue
        assert decode_entries(encode_entries(prepared.entries)) == list(prepared.entries)
        cat = prepared.catalog
    restored = decode_snapshot(encode_snapshot(cat))
    assert restored.digest() == cat.digest()
    assert restored.tables() == cat.tables()
    assert restored.indexes() == cat.indexes()
    descriptors: list[Descriptor] = [*cat.schemas(), *cat.zones(), *cat.tables(), *cat.indexes()]
    for d in descriptors:
        assert decode_descriptor(encode_descriptor(d)) == d


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=512), st.sampled_from(DECODERS))
def test_random_bytes_only_raise_format_error(
    data: bytes, decoder: Callable[[bytes], object]
) -> None:
    with contextlib.suppress(FormatError):
        decoder(data)


msgpack_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**63), 2**64 - 1)
    | st.floats()
    | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=6),
    max_leaves=40,
)


@settings(max_examples=300, deadline=None)
@given(st.integers(0, 3), st.integers(1, 5), msgpack_values, st.sampled_from(DECODERS))
def test_well_formed_msgpack_of_wrong_shape_only_raises_format_error(
    version: int, kind: int, body: object, decoder: Callable[[bytes], object]
) -> None:
    """Structurally valid msgpack with a plausible header but a wrong body is still refused."""
    data = msgpack.packb([version, kind, body])
    with contextlib.suppress(FormatError):
        decoder(data)


def test_newer_format_is_refused_with_a_clear_error() -> None:
    data = encode_snapshot(Catalog.initial())
    _, kind, body = msgpack.unpackb(data)
    newer = msgpack.packb([FORMAT_VERSION + 1, kind, body])
    with pytest.raises(FormatError, match="newer"):
        decode_snapshot(newer)


def test_digest_is_content_based() -> None:
    rng = random.Random(7)
    versions, _ = build_history(rng, 30)
    last = versions[-1]
    assert decode_snapshot(encode_snapshot(last)) == last
    assert len({v.digest() for v in versions}) == len(versions)
