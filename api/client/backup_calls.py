"""The backup call both clients share (``POST /v1/backup``, the admin role)."""

from __future__ import annotations

import os
from pathlib import Path

import httpx

from api.client.calls import Call, Timestamp, timestamp_param

BACKUP_READ_S = 600.0
"""How much longer than other calls a backup may take to arrive (a large catalog's)."""


def backup_call(
    to: str | Path, version: int | None = None, at: Timestamp | None = None
) -> Call[tuple[int, str, int]]:
    """Download a backup of the catalog into the file ``to``; return its version, digest, size.

    The file appears whole or not at all (written under another name, then renamed).
    """
    target = Path(to)
    params: dict[str, str] = {}
    if version is not None:
        params["version"] = str(version)
    if at is not None:
        params["at"] = timestamp_param(at)

    def save(response: httpx.Response) -> tuple[int, str, int]:
        partial = target.with_name(f"{target.name}.partial")
        partial.write_bytes(response.content)
        os.replace(partial, target)
        headers = response.headers
        return (
            int(headers["Catalog-Backup-Version"]),
            headers["Catalog-Backup-Digest"],
            len(response.content),
        )

    return Call("POST", "/v1/backup", save, params=params, extra_read_s=BACKUP_READ_S)
