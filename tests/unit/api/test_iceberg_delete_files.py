"""A snapshot with delete files (merge-on-read) is refused, saying what to do instead."""

from __future__ import annotations

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


@pytest.mark.parametrize(
    "delete_manifest", [False, True], ids=["delete file in a data manifest", "delete manifest"]
)
def test_a_snapshot_with_delete_files_is_refused(tmp_path: Path, delete_manifest: bool) -> None:
    manifest = _manifest(tmp_path, pm.DataFileContent.POSITION_DELETES)
    if delete_manifest:
        manifest = pm.ManifestFile.from_args(
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
    manifest_list = _listed(tmp_path, manifest)
    with pytest.raises(IcebergError) as refused:
        snapshot_change(str(tmp_path), manifest_list, None, set(), 1)
    assert refused.value.status == 400
    assert "merge-on-read" in refused.value.message
    assert "nothing was written" in refused.value.message
    assert "write.delete.mode, write.update.mode and write.merge.mode" in refused.value.message


def test_a_snapshot_of_data_files_is_read(tmp_path: Path) -> None:
    manifest_list = _listed(tmp_path, _manifest(tmp_path, pm.DataFileContent.DATA))
    added, dropped = snapshot_change(str(tmp_path), manifest_list, None, set(), 1)
    assert (list(added), dropped) == (["data/f.parquet"], set())
