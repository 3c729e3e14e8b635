"""Large values as chunks: written first under their own keys, made visible by one manifest.

A value (an enveloped update or snapshot) that does not fit in one store request is cut into
chunks of at most ``chunk_bytes``, each written by its own transaction to
``catalog.chunk.<tag>.<i>``. Nothing reads a chunk until the one guarded transaction that writes
the value's manifest (a ``Kind.MANIFEST`` envelope naming the tag, the chunk count and the size)
where the value itself would be. So a writer that dies between chunks leaves only chunks that no
manifest names; compaction deletes them. Readers assemble the chunks and decode the value's own
envelope, whose checksum covers the whole value.

Tags carry the kind and version the value belongs to (``u<N>.<id>``, ``s<S>.<id>``), so a
snapshot at S drops the chunks of every older update and snapshot with two range deletes.
"""

from __future__ import annotations

import asyncio
import bisect
import itertools
import secrets
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import msgpack

from updatelog import envelope
from updatelog.envelope import Envelope, Kind
from updatelog.errors import FormatError, UnknownOutcomeError
from updatelog.keys import KeyLayout, prefix_range_end
from updatelog.kv import Delete, KvStore, Put

_PARALLEL = 4
_PAGE = 8


class ChunksMissingError(FormatError):
    """A manifest names chunks that are not (all) there: compacted since, or lost."""


@dataclass(frozen=True, slots=True)
class Manifest:
    """Where a chunked value lives: its tag, number of chunks and size in bytes."""

    tag: str
    count: int
    size: int

    def encode(self) -> bytes:
        """Return the stored manifest (a ``Kind.MANIFEST`` envelope)."""
        body = msgpack.packb({"tag": self.tag, "count": self.count, "size": self.size})
        return envelope.encode(Kind.MANIFEST, body)


def decode_manifest(body: bytes) -> Manifest:
    """Read a manifest's body.

    Raises:
        FormatError: the body is not a manifest of the known shape.
    """
    try:
        fields: Any = msgpack.unpackb(body, raw=False, strict_map_key=True)
    except (ValueError, TypeError, msgpack.UnpackException) as e:
        raise FormatError(f"a chunk manifest is not valid msgpack: {e}") from e
    if not isinstance(fields, dict) or set(fields) != {"tag", "count", "size"}:
        raise FormatError("a chunk manifest must be a map of tag, count and size")
    tag, count, size = fields["tag"], fields["count"], fields["size"]
    if not isinstance(tag, str) or type(count) is not int or type(size) is not int or count < 1:
        raise FormatError("a chunk manifest has a malformed tag, count or size")
    return Manifest(tag, count, size)


class Chunks:
    """Writes and assembles the chunked values of one catalog in one store.

    Args:
        store: the key-value store.
        keys: the catalog's key layout.
        chunk_bytes: the most bytes of value one chunk carries.
    """

    def __init__(self, store: KvStore, keys: KeyLayout, chunk_bytes: int) -> None:
        self.store = store
        self.keys = keys
        self.chunk_bytes = chunk_bytes

    async def write(self, kind: str, version: int, value: Sequence[bytes]) -> bytes:
        """Write ``value`` as chunks and return its manifest (still invisible to readers).

        Each chunk is a plain put, so one whose answer was lost is simply written again.

        Args:
            kind: ``"u"`` for an update, ``"s"`` for a snapshot.
            version: the version the value is stored at.
            value: the value, as pieces whose concatenation is the value; each chunk is cut
                from them when it is sent, so the whole value is never joined in memory.

        Raises:
            StorageUnavailableError: the store did not take a chunk within its timeout.
            UpdateTooLargeError: the store refused a chunk as too large (its limit is lower
                than configured).
        """
        # The nonce starts with the writer's wall clock, so compaction can tell a chunk that
        # lost its writer long ago from one still being written.
        nonce = f"{time.time_ns() // 1_000_000:012x}{secrets.token_hex(4)}"
        tag = self.keys.chunk_tag(kind, version, nonce)
        step = self.chunk_bytes
        ends = list(itertools.accumulate(len(piece) for piece in value))
        size = ends[-1] if ends else 0
        count = -(-size // step)
        gate = asyncio.Semaphore(_PARALLEL)

        async def put(index: int) -> None:
            async with gate:
                op = Put(self.keys.chunk(tag, index), _cut(value, ends, index * step, step))
                for attempt in range(3):
                    try:
                        await self.store.txn([], [op])
                        return
                    except UnknownOutcomeError:
                        if attempt == 2:
                            raise

        try:
            await asyncio.gather(*(put(i) for i in range(count)))
        except BaseException:
            await self.discard(tag)
            raise
        return Manifest(tag, count, size).encode()

    async def discard(self, tag: str) -> None:
        """Delete the chunks of ``tag`` (a value that lost its race); best effort."""
        start = f"{self.keys.chunk_prefix}{tag}."
        try:
            await self.store.txn([], [Delete(start, prefix_range_end(start))])
        except Exception:
            return

    async def resolve(self, stored: bytes, *kinds: Kind) -> Envelope:
        """Decode a stored value, assembling it first when it is a manifest.

        Raises:
            FormatError: the value, its manifest or its chunks are corrupted or missing.
        """
        outer = envelope.decode_as(stored, Kind.MANIFEST, *kinds)
        if outer.kind is not Kind.MANIFEST:
            return outer
        manifest = decode_manifest(outer.body)
        parts: list[bytes] = []
        next_key = self.keys.chunk(manifest.tag, 0)
        end = self.keys.chunk(manifest.tag, manifest.count)
        while next_key < end:
            read = await self.store.range(next_key, end, limit=_PAGE)
            parts.extend(kv.value for kv in read.kvs)
            if not read.more or not read.kvs:
                break
            next_key = read.kvs[-1].key + "\x00"
        size = sum(len(part) for part in parts)
        if len(parts) != manifest.count or size != manifest.size:
            raise ChunksMissingError(
                f"chunked value {manifest.tag} has {len(parts)} of {manifest.count} chunks "
                f"({size} of {manifest.size} bytes)"
            )
        # Joining and checking hundreds of megabytes is no work for the event loop.
        return await asyncio.to_thread(_assembled, parts, kinds)

    async def tags(self) -> set[str]:
        """Return the tag of every chunk in the store (live or garbage)."""
        start = self.keys.chunk_prefix
        names = await self.store.keys(start, prefix_range_end(start))
        return {name[len(start) :].rsplit(".", 1)[0] for name in names}


def _cut(value: Sequence[bytes], ends: list[int], start: int, length: int) -> bytes:
    """Return ``length`` bytes of the concatenation of ``value`` from ``start``.

    ``ends`` is the running total of the pieces' lengths; only what the chunk needs is copied.
    """
    stop = min(start + length, ends[-1])
    index = bisect.bisect_right(ends, start)
    parts: list[bytes] = []
    while start < stop:
        piece, begin = value[index], ends[index] - len(value[index])
        parts.append(piece[start - begin : stop - begin])
        start = ends[index]
        index += 1
    return parts[0] if len(parts) == 1 else b"".join(parts)


def _assembled(parts: list[bytes], kinds: tuple[Kind, ...]) -> Envelope:
    return envelope.decode_as(b"".join(parts), *kinds)


def manifest_tag(stored: bytes | None) -> str | None:
    """Return the chunk tag a stored value names, or None when it is not a manifest."""
    if stored is None:
        return None
    decoded = envelope.decode(stored)
    return decode_manifest(decoded.body).tag if decoded.kind is Kind.MANIFEST else None
