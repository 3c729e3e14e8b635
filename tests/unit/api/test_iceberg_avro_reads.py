"""A writer's Avro files decode within their limits, whatever codec compressed them."""

from __future__ import annotations

import bz2
import zlib
from pathlib import Path

import pytest
import zstandard
from pyiceberg.avro.codecs import AvroCompressionCodec
from pyiceberg.manifest import ManifestContent, ManifestFile

from api.iceberg.avro_reads import (
    MAX_ENTRIES_PER_COMMIT,
    LimitError,
    ReadBudget,
    _inflate,
    manifests_of,
    open_manifest_list,
)
from tests.manifest_lists import write_list

ZEROS = bytes(5000)


def _deflated(data: bytes) -> bytes:
    packer = zlib.compressobj(9, zlib.DEFLATED, -15)
    return packer.compress(data) + packer.flush()


@pytest.mark.parametrize(
    ("codec", "packed"),
    [
        ("null", ZEROS),
        ("deflate", _deflated(ZEROS)),
        ("bzip2", bz2.compress(ZEROS)),
        ("zstandard", zstandard.ZstdCompressor().compress(ZEROS)),
    ],
)
def test_a_block_inflates_up_to_the_room_left_and_no_further(codec: str, packed: bytes) -> None:
    assert _inflate(codec, packed, len(ZEROS), "manifest m") == ZEROS
    with pytest.raises(LimitError, match="manifest m decompresses to more than"):
        _inflate(codec, packed, len(ZEROS) - 1, "manifest m")


def test_a_codec_the_catalog_does_not_read_is_refused_naming_it() -> None:
    with pytest.raises(LimitError, match="compressed with snappy"):
        _inflate("snappy", b"\x05abcde", 100, "manifest m")


@pytest.mark.parametrize("codec", ["deflate", "zstandard", "null"])
def test_a_manifest_list_of_each_codec_reads_back(
    tmp_path: Path, codec: AvroCompressionCodec
) -> None:
    path = tmp_path / "metadata" / "snap-1.avro"
    manifests = [
        ManifestFile.from_args(
            manifest_path=f"{tmp_path}/metadata/m{n}.avro",
            manifest_length=100,
            partition_spec_id=0,
            added_snapshot_id=1,
            content=ManifestContent.DATA,
            sequence_number=1,
            min_sequence_number=1,
            added_files_count=n,
            existing_files_count=0,
            deleted_files_count=0,
            added_rows_count=n,
            existing_rows_count=0,
            deleted_rows_count=0,
        )
        for n in range(3)
    ]
    write_list(path, manifests, codec=codec)
    budget = ReadBudget(str(tmp_path))
    read = manifests_of(open_manifest_list(budget, "metadata/snap-1.avro", str(path)))
    assert [m.manifest_path for m in read] == [m.manifest_path for m in manifests]
    assert budget.entries_left == MAX_ENTRIES_PER_COMMIT - 3  # a list's entries count too
