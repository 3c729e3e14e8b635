"""The node registry entry's body: a stable msgpack map that later releases may extend."""

from __future__ import annotations

import msgpack
import pytest

from catalog.runtime.registry import NodeRecord, decode_nodes
from updatelog import FormatError

RECORD = NodeRecord("n1", "http://10.0.0.1:8000", 42, 7 << 16, 1_700_000_000_123, 1_699_999_000_000)
# Written by the first release with a registry; it must decode forever.
GOLDEN_V1 = bytes.fromhex(
    "86a46e616d65a26e31a761646472657373b4687474703a2f2f31302e302e302e313a38303030af6170706c69"
    "65645f76657273696f6e2aa9736166655f74696d65ce00070000ac6865617274626561745f6d73cf0000018b"
    "cfe5687baa737461727465645f6d73cf0000018bcfd625c0"
)


def test_golden_entry_decodes_and_the_writer_still_writes_it() -> None:
    assert NodeRecord.decode(GOLDEN_V1) == RECORD
    assert RECORD.encode() == GOLDEN_V1


def test_round_trip_without_an_address() -> None:
    record = NodeRecord("n", None, 0, 0, 0, 0)
    assert NodeRecord.decode(record.encode()) == record


def test_fields_a_later_release_adds_are_ignored() -> None:
    fields = msgpack.unpackb(GOLDEN_V1)
    fields["zone"] = "eu-1"
    assert NodeRecord.decode(msgpack.packb(fields)) == RECORD


@pytest.mark.parametrize(
    "body",
    [
        b"\xc1",  # never valid msgpack
        msgpack.packb([1, 2, 3]),
        GOLDEN_V1[:-3],
        msgpack.packb({**msgpack.unpackb(GOLDEN_V1), "applied_version": -1}),
        msgpack.packb({**msgpack.unpackb(GOLDEN_V1), "safe_time": "soon"}),
        msgpack.packb({**msgpack.unpackb(GOLDEN_V1), "address": 8000}),
        msgpack.packb({k: v for k, v in msgpack.unpackb(GOLDEN_V1).items() if k != "name"}),
    ],
    ids=[
        "not-msgpack",
        "not-a-map",
        "truncated",
        "negative",
        "wrong-type",
        "bad-address",
        "no-name",
    ],
)
def test_malformed_entries_are_format_errors(body: bytes) -> None:
    with pytest.raises(FormatError):
        NodeRecord.decode(body)


def test_the_key_names_the_node() -> None:
    assert [r.name for r in decode_nodes({"b": RECORD.encode(), "a": RECORD.encode()})] == [
        "a",
        "b",
    ]
