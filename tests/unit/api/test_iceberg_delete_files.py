"""A snapshot's delete files: position deletes are read, equality deletes refused."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from pyiceberg import manifest as pm
from pyiceberg.partitioning import UNPARTITIONED_PARTITION_SPEC
from pyiceberg.schema import Schema
from pyiceberg.typedef import Record
from pyiceberg.types import LongType, NestedField

from api.iceberg.errors import IcebergError
from api.iceberg.manifests import WarehouseIO, snapshot_change

SCHEMA = Schema(NestedField(1, "id", LongType(), required=False))


def _manifest(folder: Path, content: pm.DataFileContent) -> pm.ManifestFile:
    """Write a manifest of one file of ``content``; return its entry for a manifest list."""
    io = WarehouseIO()
    with pm.write_manifest(
        format_version=2,
        spec=UNPARTITIONED_PARTITION_SPEC,
        schema=SCHEMA,
        output_file=io.new_output(str(folder / "metadata" / "m0.avro")),
        snapshot_id=1,
        avro_compression="deflate",
    ) as writer:
        data_file = pm.DataFile.from_args(
            content=content,
            file_path=str(folder / "data" / "f.parquet"),
            file_format=pm.FileFormat.PARQUET,
            partition=Record(),
            record_count=1,
            file_size_in_bytes=10,
        )
        writer.add(
            pm.ManifestEntry.from_args(
                status=pm.ManifestEntryStatus.ADDED, snapshot_id=1, data_file=data_file
            )
        )
    return writer.to_manifest_file()


def _listed(folder: Path, manifest: pm.ManifestFile) -> str:
    """Write a manifest list naming ``manifest``; return its path."""
    path = str(folder / "metadata" / "snap-1.avro")
    with pm.write_manifest_list(
        format_version=2,
        output_file=WarehouseIO().new_output(path),
        snapshot_id=1,
        parent_snapshot_id=None,
        sequence_number=1,
        avro_compression="deflate",
    ) as writer:
        writer.add_manifests([manifest])
    return path


def _as_delete_manifest(manifest: pm.ManifestFile) -> pm.ManifestFile:
    """Return ``manifest`` listed as a delete manifest."""
    return pm.ManifestFile.from_args(
        manifest_path=manifest.manifest_path,
        manifest_length=manifest.manifest_length,
        partition_spec_id=0,
        content=pm.ManifestContent.DELETES,
        sequence_number=1,
        min_sequence_number=1,
        added_snapshot_id=1,
        added_files_count=1,
        added_rows_count=1,
        existing_files_count=0,
        existing_rows_count=0,
        deleted_files_count=0,
        deleted_rows_count=0,
    )


def test_a_position_delete_file_of_a_delete_manifest_is_read(tmp_path: Path) -> None:
    manifest = _as_delete_manifest(_manifest(tmp_path, pm.DataFileContent.POSITION_DELETES))
    added, dropped = snapshot_change(str(tmp_path), _listed(tmp_path, manifest), None, set(), 1)
    assert list(added) == ["data/f.parquet"] and dropped == set()
    assert added["data/f.parquet"].content == pm.DataFileContent.POSITION_DELETES


def _refused(tmp_path: Path, manifest: pm.ManifestFile) -> str:
    with pytest.raises(IcebergError) as refused:
        snapshot_change(str(tmp_path), _listed(tmp_path, manifest), None, set(), 1)
    assert refused.value.status == 400
    return refused.value.message


def test_an_equality_delete_file_is_refused_saying_what_to_do(tmp_path: Path) -> None:
    manifest = _as_delete_manifest(_manifest(tmp_path, pm.DataFileContent.EQUALITY_DELETES))
    message = _refused(tmp_path, manifest)
    assert "equality delete file" in message and "nothing was written" in message
    assert "delete rows by position" in message


@pytest.mark.parametrize(
    ("content", "delete_manifest"),
    [(pm.DataFileContent.POSITION_DELETES, False), (pm.DataFileContent.DATA, True)],
    ids=["delete file in a data manifest", "data file in a delete manifest"],
)
def test_a_file_in_a_manifest_of_the_other_kind_is_refused(
    tmp_path: Path, content: pm.DataFileContent, delete_manifest: bool
) -> None:
    manifest = _manifest(tmp_path, content)
    if delete_manifest:
        manifest = _as_delete_manifest(manifest)
    assert "which is not a" in _refused(tmp_path, manifest)


def test_a_snapshot_of_data_files_is_read(tmp_path: Path) -> None:
    manifest_list = _listed(tmp_path, _manifest(tmp_path, pm.DataFileContent.DATA))
    added, dropped = snapshot_change(str(tmp_path), manifest_list, None, set(), 1)
    assert (list(added), dropped) == (["data/f.parquet"], set())


def test_a_manifest_list_written_again_at_its_path_is_read_again(tmp_path: Path) -> None:
    manifest_list = _listed(tmp_path, _manifest(tmp_path, pm.DataFileContent.DATA))
    assert list(snapshot_change(str(tmp_path), manifest_list, None, set(), 1)[0])
    assert list(snapshot_change(str(tmp_path), manifest_list, None, set(), 1)[0])  # kept
    equality = _as_delete_manifest(_manifest(tmp_path, pm.DataFileContent.EQUALITY_DELETES))
    assert _listed(tmp_path, equality) == manifest_list  # the same path, other content
    later = os.stat(manifest_list).st_mtime_ns + 1_000_000_000  # a clock tick may be coarse
    os.utime(manifest_list, ns=(later, later))
    assert "equality delete file" in _refused(tmp_path, equality)
