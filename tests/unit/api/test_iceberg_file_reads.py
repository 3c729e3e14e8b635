"""Reads of writers' files run on their own threads, bounded per table and in all."""

from __future__ import annotations

import asyncio
import threading

import pytest

from api.iceberg.errors import IcebergError, iceberg_error
from api.iceberg.file_reads import FileReads
from catalog.properties import named_properties


def _stuck(release: threading.Event) -> str:
    release.wait(30)
    return threading.current_thread().name


async def _one_table_cannot_take_another_tables_slots() -> None:
    reads = FileReads(limit=3, per_table=2, wait_s=0.2)
    release = threading.Event()
    try:
        stuck = [asyncio.ensure_future(reads.run("/w/t1", _stuck, release)) for _ in range(2)]
        while reads.held() < 2:
            await asyncio.sleep(0.01)
        with pytest.raises(IcebergError, match=r"no slot came free within 0\.2 s") as refused:
            await reads.run("/w/t1/", _stuck, release)  # the same table, spelled otherwise
        assert refused.value.status == 503
        assert iceberg_error(refused.value).headers["Retry-After"] == "1"
        assert await reads.run("/w/t2", lambda: "other table") == "other table"
    finally:
        release.set()
    names = await asyncio.gather(*stuck)
    assert all(name.startswith("table-file-reads") for name in names)
    assert reads.held() == 0


async def _a_slot_is_held_until_the_thread_ends_not_the_request() -> None:
    reads = FileReads(limit=1, per_table=1, wait_s=0.1)
    release = threading.Event()
    request = asyncio.ensure_future(reads.run("/w/t1", _stuck, release))
    while reads.held() < 1:
        await asyncio.sleep(0.01)
    request.cancel()  # the client went away; its read goes on until its own deadline
    await asyncio.sleep(0.05)
    assert reads.held() == 1
    with pytest.raises(IcebergError):
        await reads.run("/w/t2", lambda: None)
    release.set()
    while reads.held():
        await asyncio.sleep(0.01)
    assert await reads.run("/w/t2", lambda: 7) == 7


def test_one_table_cannot_take_another_tables_slots() -> None:
    asyncio.run(_one_table_cannot_take_another_tables_slots())


def test_a_slot_is_held_until_the_thread_ends_not_the_request() -> None:
    asyncio.run(_a_slot_is_held_until_the_thread_ends_not_the_request())


def test_a_long_property_list_is_named_by_its_count_and_first_keys() -> None:
    assert named_properties(["a", "b"]) == "properties a, b"
    keys = [f"key-{n:04}" for n in range(1000)]
    named = named_properties(keys)
    assert named == (
        "1000 properties (key-0000, key-0001, key-0002, key-0003, key-0004 and 995 more)"
    )
