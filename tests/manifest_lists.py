"""Manifest lists the tests write themselves (with PyIceberg's writer), to read back or to send."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from pyiceberg.avro.codecs import AvroCompressionCodec
from pyiceberg.io.pyarrow import PyArrowFileIO
from pyiceberg.manifest import ManifestFile, write_manifest_list


def write_list(
    path: Path,
    manifests: Sequence[ManifestFile],
    *,
    snapshot_id: int = 1,
    parent_snapshot_id: int | None = None,
    codec: AvroCompressionCodec = "deflate",
) -> Path:
    """Write a format-2 manifest list of ``manifests`` at ``path``; return the path."""
    with write_manifest_list(
        format_version=2,
        output_file=PyArrowFileIO().new_output(str(path)),
        snapshot_id=snapshot_id,
        parent_snapshot_id=parent_snapshot_id,
        sequence_number=snapshot_id,
        avro_compression=codec,
    ) as writer:
        writer.add_manifests(list(manifests))
    return path
