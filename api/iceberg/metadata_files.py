"""A table's metadata files: the served metadata written as Iceberg's ``metadata.json``.

Every table answer (create, load, commit) names a metadata file, and the file is there: a
reader given only that file (DuckDB's ``iceberg_scan('<file>')``, a migration tool, another
catalog's ``register``) reads the table from it. Its name is fixed by the table's state
(``metadata.metadata_location``: the catalog version that last changed the table and the
latest data commit's sequence number), so every node names the same file for the same state
and the first to answer writes it: a commit writes it before it answers, a load writes it
when it is missing (a node that stopped between its commit and the write, a state made by
the Spark source, or by another node). A file is written under a fresh name and renamed, so a
reader never sees half of one, and two nodes writing it at once leave one whole file
(``catalog.data.table_files``: a local folder or S3).

The JSON is what Iceberg's ``TableMetadataParser`` writes for format version 2: no nulls
(``current-snapshot-id`` -1 before the first snapshot), ``statistics`` and
``partition-statistics`` empty, and ``metadata-log`` the table's earlier metadata files
still in its folder (the last ``PREVIOUS_VERSIONS_MAX``, oldest first).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import threading
from collections import OrderedDict
from collections.abc import Mapping
from typing import Any

from api.iceberg.errors import IcebergError
from api.iceberg.manifests import stored_path
from api.iceberg.models import TableMetadata
from catalog.data.table_files import (
    StoreUnavailableError,
    TableFileError,
    entries,
    file_status,
    remove_file,
    write_file,
)
from catalog.data.warehouse import on_s3

PREVIOUS_VERSIONS_PROPERTY = "write.metadata.previous-versions-max"
PREVIOUS_VERSIONS_MAX = 100
"""How many earlier metadata files ``metadata-log`` lists by default (Iceberg's default for
``write.metadata.previous-versions-max``)."""
DELETE_AFTER_COMMIT_PROPERTY = "write.metadata.delete-after-commit.enabled"

ENGINE_FOLDERS = ("data", "metadata")
"""Where engines put a table's data files and manifests, under its location (Iceberg's
defaults for ``write.data.path`` and ``write.metadata.path``)."""

_NAME = re.compile(r"catalog-v(\d+)(?:-data-(\d+))?\.metadata\.json")


def metadata_json(metadata: TableMetadata) -> dict[str, Any]:
    """Return ``metadata`` as the Iceberg spec's JSON object (no null members)."""
    body = metadata.model_dump(mode="json", by_alias=True, exclude_none=True)
    body["current-snapshot-id"] = (
        -1 if metadata.current_snapshot_id is None else metadata.current_snapshot_id
    )
    body.setdefault("statistics", [])
    body.setdefault("partition-statistics", [])
    return body


def _order(name: str) -> tuple[int, int] | None:
    match = _NAME.fullmatch(name)
    if match is None:
        return None
    return int(match.group(1)), int(match.group(2) or 0)


def previous_versions_max(properties: Mapping[str, str]) -> int:
    """Return how many earlier metadata files a table keeps in its log.

    It is the table's ``write.metadata.previous-versions-max``, at least 1; the files beyond
    it are deleted after a commit when the table asks for that. A value that is not a whole
    number counts as Iceberg's default.
    """
    try:
        return max(1, int(properties.get(PREVIOUS_VERSIONS_PROPERTY, PREVIOUS_VERSIONS_MAX)))
    except ValueError:
        return PREVIOUS_VERSIONS_MAX


def _earlier(files: str, current: str) -> list[tuple[tuple[int, int], str, int]]:
    """Return the metadata files in ``files`` before ``current`` (order, name, ms), oldest first."""
    limit = _order(current.rpartition("/")[2])
    try:
        names = entries(stored_path(files))
    except (TableFileError, OSError):
        return []
    found = []
    for name, status in names:
        order = _order(name)
        if order is None or (limit is not None and order >= limit):
            continue
        found.append((order, name, status.mtime_ns // 1_000_000))
    found.sort()
    return found


def metadata_log(
    earlier: list[tuple[tuple[int, int], str, int]], files: str, properties: Mapping[str, str]
) -> list[dict[str, Any]]:
    """Return the ``metadata-log`` of a table: the last of its ``earlier`` files, oldest first.

    Args:
        earlier: the table's earlier metadata files (``_earlier``).
        files: the folder of the table's metadata files.
        properties: the table's properties (``previous_versions_max``).
    """
    keep = previous_versions_max(properties)
    return [
        {"timestamp-ms": ms, "metadata-file": f"{files}/{name}"} for _, name, ms in earlier[-keep:]
    ]


def _delete_unlogged(
    earlier: list[tuple[tuple[int, int], str, int]], files: str, properties: Mapping[str, str]
) -> None:
    """Delete the earlier metadata files the log no longer names, if the table asks for it.

    A table with ``write.metadata.delete-after-commit.enabled`` true keeps its current file
    and the ``previous_versions_max`` before it, as Iceberg's own catalogs do after a commit.
    A file another node writes again meanwhile (one answering an older state) goes with a
    later commit. Deleting never follows a link (``catalog.data.table_files``).
    """
    if properties.get(DELETE_AFTER_COMMIT_PROPERTY, "false").lower() != "true":
        return
    folder = stored_path(files)
    for _, name, _ in earlier[: -previous_versions_max(properties)]:
        with contextlib.suppress(TableFileError):  # gone, or its folder is a link: left
            remove_file(folder, name)


_LOGS_KEPT = 4096
_logs: OrderedDict[str, list[dict[str, Any]]] = OrderedDict()
_logs_lock = threading.Lock()


def write_table_metadata(files: str, file: str, metadata: TableMetadata) -> TableMetadata:
    """Return ``metadata`` with its log, written to ``file`` first when it is not there yet.

    The table's folder of metadata files is listed once: for the log, and, when the file is
    new, for the earlier files the table no longer keeps. A load of a table whose file is
    there writes nothing; one whose file this process wrote or found before (its name is
    fixed by the table's state, and a file is never rewritten) reads nothing either: its log
    is remembered (the last ``_LOGS_KEPT`` files), unless the table deletes its earlier files
    after a commit (one of them may be answered again for a pinned read, and written again).

    Raises:
        OSError: the warehouse cannot be written.
    """
    with _logs_lock:
        known = _logs.get(file)
        if known is not None:
            _logs.move_to_end(file)
    if known is not None:
        return metadata.model_copy(update={"metadata_log": known})
    earlier = _earlier(files, file)
    log = metadata_log(earlier, files, metadata.properties)
    logged = metadata.model_copy(update={"metadata_log": log})
    if write_metadata_file(file, logged):
        _delete_unlogged(earlier, files, metadata.properties)
    if metadata.properties.get(DELETE_AFTER_COMMIT_PROPERTY, "false").lower() != "true":
        with _logs_lock:
            _logs[file] = log
            if len(_logs) > _LOGS_KEPT:
                _logs.popitem(last=False)
    return logged


def make_engine_folders(location: str) -> None:
    """Make a table location's ``data`` and ``metadata`` folders, empty, if missing.

    DuckDB writes its data files and manifests there and cannot make a folder named by a
    ``file:`` URI, only write into one that exists; empty folders do not make the location
    "hold files" for Trino's create. On S3 a folder is only a prefix: nothing is made.

    Raises:
        OSError: the warehouse cannot be written.
    """
    root = stored_path(location)
    if on_s3(root):
        return
    for folder in ENGINE_FOLDERS:
        os.makedirs(os.path.join(root, folder), exist_ok=True)


def write_metadata_file(file: str, metadata: TableMetadata) -> bool:
    """Write ``metadata`` to ``file`` unless it exists (whole: a reader never sees a part).

    The table's engine folders are made with a new file (``make_engine_folders``). Returns
    whether it wrote the file.

    Raises:
        OSError: the warehouse cannot be written.
    """
    folder, _, name = stored_path(file).rpartition("/")
    if _exists(folder, name):
        return False
    make_engine_folders(metadata.location)
    return write_new_json(file, metadata_json(metadata))


def write_new_json(file: str, body: dict[str, Any]) -> bool:
    """Write ``body`` as JSON to ``file`` unless it exists (whole: a reader never sees a part).

    Returns whether it wrote the file; a reader never sees a part of one.

    Raises:
        OSError: the warehouse cannot be written.
    """
    folder, _, name = stored_path(file).rpartition("/")
    if _exists(folder, name):
        return False
    return write_file(folder, name, json.dumps(body, separators=(",", ":")).encode())


def _exists(folder: str, name: str) -> bool:
    try:
        file_status(folder, name, "metadata file", f"{folder}/{name}")
    except StoreUnavailableError as e:  # the warehouse cannot be reached to be written
        raise OSError(str(e)) from e
    except TableFileError as e:
        if e.missing:
            return False
        raise
    return True


async def engine_folders(location: str, name: str) -> None:
    """Make the folders an engine writes a staged table's files into (``make_engine_folders``).

    Raises:
        IcebergError: ServiceUnavailableException when the warehouse cannot be written.
    """
    try:
        await asyncio.to_thread(make_engine_folders, location)
    except OSError as e:
        raise unwritable(f"the folders of table {name} at {location}", e) from e


def unwritable(what: str, e: OSError) -> IcebergError:
    """Return the answer to a warehouse write that failed: it may work again later."""
    return IcebergError(
        "ServiceUnavailableException", 503, f"{what} cannot be written: {e.strerror or e}"
    )
