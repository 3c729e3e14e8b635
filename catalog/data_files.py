"""Data commits as values: the files of a table a commit makes visible, and their stored form.

``catalog.data_commits`` runs the commits; these models are what clients send and read back.
"""

from __future__ import annotations

from typing import Literal

import msgpack
from pydantic import Field, field_validator

from catalog.errors import ValidationError
from catalog.model import Model
from updatelog.errors import FormatError

DataMode = Literal["append", "overwrite"]


class DataFile(Model):
    """One data file of a commit.

    Attributes:
        path: the file's path relative to the table's folder in the warehouse.
        partition: the table partition (of its zone) the file's rows belong to.
        rows: how many rows it holds.
        size: its size in bytes.
    """

    path: str = Field(
        min_length=1, max_length=1024, pattern=r"^[A-Za-z0-9_.=-]+(/[A-Za-z0-9_.=-]+)*$"
    )
    partition: int = Field(ge=0, le=65_535)
    rows: int = Field(ge=0, le=2**63 - 1)
    size: int = Field(ge=0, le=2**63 - 1)

    @field_validator("path")
    @classmethod
    def _inside_the_table_folder(cls, path: str) -> str:
        if any(part in ("", ".", "..") for part in path.split("/")):
            raise ValueError("a data file path stays inside the table's folder (no . or ..)")
        return path


class DataCommit(Model):
    """One committed write of a table: its files become visible at ``commit_ts``.

    Attributes:
        table_id: the table (a table re-created under the same name has a new id).
        seq: the commit's number within the table, from 1, contiguous.
        commit_ts: the hybrid timestamp at which the files become visible.
        schema_version: the table schema version the files were written with.
        mode: ``append`` adds files; ``overwrite`` replaces every earlier commit's files.
        files: the files.
        request_id: the writer's idempotency key.
    """

    table_id: int
    seq: int
    commit_ts: int
    schema_version: int
    mode: DataMode
    files: tuple[DataFile, ...]
    request_id: str


def encode_data_commit(commit: DataCommit) -> bytes:
    """Return the stored form of a data commit."""
    return msgpack.packb(commit.model_dump(mode="json"))


def decode_data_commit(data: bytes) -> DataCommit:
    """Decode a stored data commit.

    Raises:
        FormatError: garbage or a wrong shape.
    """
    try:
        body = msgpack.unpackb(data, raw=False, strict_map_key=True)
        return DataCommit.model_validate(body)
    except (ValueError, TypeError, msgpack.UnpackException, ValidationError) as e:
        raise FormatError(f"not a data commit ({e})") from e


def visible_files(commits: list[DataCommit]) -> list[DataCommit]:
    """Return the commits whose files are visible: those since the last overwrite."""
    start = 0
    for i, commit in enumerate(commits):
        if commit.mode == "overwrite":
            start = i
    return commits[start:]
