"""A table's folder as the Spark source's driver and tasks reach it: local, or on S3.

The driver names the folder (``catalog.data.warehouse.data_folder``) and, for one on S3, the
store and the keys to open it with: short-lived keys the catalog handed out for that table
(``CatalogClient.table_keys``), read-only for a read, read-write for a write. Every task gets
them with its share of the work, so no executor holds keys of its own. Files are read and
written with pyarrow's filesystem of the folder; a local one is reached through no link
(``catalog.data.table_files``).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass

from pyarrow import fs

from api.client import CatalogClient
from catalog.data.s3_store import DEFAULT_REGION, S3Endpoint, S3Keys
from catalog.data.table_files import TableFileError, arrow_filesystem, remove_file
from catalog.data.warehouse import data_folder, folder_of, on_s3
from catalog.descriptors import TableDescriptor


@dataclass(frozen=True)
class TableFolder:
    """A table's folder and how to reach it.

    Attributes:
        location: the folder, a local path or ``s3://bucket/key`` (``folder_of``).
        keys: the keys of an S3 folder (None: the process's own, as S3 tools find them).
        endpoint: the S3 store (None: the one the environment names).
    """

    location: str
    keys: S3Keys | None = None
    endpoint: S3Endpoint | None = None

    def __str__(self) -> str:
        return self.location

    @property
    def on_s3(self) -> bool:
        """Whether the folder is on S3."""
        return on_s3(self.location)

    def file(self, relative: str) -> tuple[fs.FileSystem, str]:
        """Return pyarrow's filesystem of the folder and the path of ``relative`` in it."""
        files, base = arrow_filesystem(self.location, self.keys, self.endpoint)
        return files, f"{base}/{relative}"

    def reachable(self) -> bool:
        """Return whether this process reaches the folder (an S3 one is reached from anywhere)."""
        return self.on_s3 or os.path.isdir(self.location)

    def remove(self, relative: str) -> bool:
        """Delete the file ``relative``; False when it was not there.

        A local file is reached through no link (a link is removed itself).

        Raises:
            TableFileError: the way to a local file passes a link.
            OSError: it could not be deleted.
        """
        if not self.on_s3:
            return remove_file(self.location, relative)
        files, path = self.file(relative)
        if files.get_file_info(path).type == fs.FileType.NotFound:
            return False
        files.delete_file(path)
        return True


def table_folder(
    client: CatalogClient, table: TableDescriptor, options: Mapping[str, str], *, write: bool
) -> TableFolder:
    """Return ``table``'s folder, with the keys the catalog hands out for it when on S3.

    Args:
        client: a client of the catalog, signed in as the job.
        table: the table read or written.
        options: the read's or write's options (``warehouse`` names a local warehouse for a
            table that records no location).
        write: keys to write with (else read-only ones).
    """
    if table.location is None or not on_s3(folder_of(table.location)):
        return TableFolder(data_folder(table, options.get("warehouse")))
    answer = client.table_keys(table.id, write=write)
    if answer.access_key_id is None or answer.secret_access_key is None:
        return TableFolder(answer.location)  # the catalog hands out none: the process's own
    keys = S3Keys(
        answer.access_key_id,
        answer.secret_access_key,
        answer.session_token,
        answer.expires_at_ms,
    )
    endpoint = S3Endpoint(answer.endpoint, answer.region or DEFAULT_REGION, answer.path_style)
    return TableFolder(answer.location, keys, endpoint)


__all__ = ["TableFileError", "TableFolder", "table_folder"]
