"""The response cache is bounded in entries and in bytes, least recently used out first."""

from __future__ import annotations

from api.server.routes.catalog import ResponseCache


def test_bounded_in_bytes() -> None:
    cache = ResponseCache(size=100, max_bytes=1000)
    for i in range(10):
        cache.get(("k", i), lambda: b"x" * 200)
    assert cache.bytes_held <= 1000
    built: list[tuple[object, ...]] = []

    def build(key: tuple[object, ...]) -> bytes:
        built.append(key)
        return b"x" * 200

    cache.get(("k", 9), lambda: build(("k", 9)))  # the newest is still kept
    cache.get(("k", 0), lambda: build(("k", 0)))  # the oldest was dropped
    assert built == [("k", 0)]


def test_bounded_in_entries_and_large_answers_are_not_kept() -> None:
    cache = ResponseCache(size=2, max_bytes=1000)
    for i in range(3):
        cache.get(("k", i), lambda: b"x")
    assert cache.bytes_held == 2
    assert cache.get(("big",), lambda: b"y" * 251) == b"y" * 251  # over a quarter: served only
    assert cache.bytes_held == 2
