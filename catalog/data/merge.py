"""``merged``: one data commit that stands for a table's first commits (data expiry's merge).

What keeps Iceberg snapshot ids and sequence numbers stable across it is written down in
``catalog.data.iceberg_identity``.
"""

from __future__ import annotations

from collections.abc import Sequence

from catalog.data.files import DataCommit, DataFile, visible_files
from catalog.data.iceberg_identity import sequence_numbers


def merged(commits: Sequence[DataCommit]) -> DataCommit:
    """Return one commit that stands for ``commits`` (a table's first ones, in order).

    Every read at or after the last of them sees through it what it sees through them: the
    files visible after the last one, each with the schema version it was written with, as
    an overwrite (so nothing before it counts), with the last one's number, time, snapshot
    and request id, and its sequence number kept (it can no longer be counted).
    """
    last = commits[-1]
    files: list[DataFile] = []
    for commit in visible_files(list(commits)):
        for file in commit.files:
            version = commit.schema_version_of(file)
            kept = None if version == last.schema_version else version
            files.append(
                file
                if file.schema_version == kept
                else file.model_copy(update={"schema_version": kept})
            )
    return last.model_copy(
        update={
            "mode": "overwrite",
            "files": tuple(files),
            "removed": None,
            "sequence_number": sequence_numbers(commits)[-1],
        }
    )
