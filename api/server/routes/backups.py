"""``POST /v1/backup``: an admin downloads a backup of the catalog this server's store holds.

The backup is the same file ``catalog backup --store`` writes (``catalog.backup``): taken
while the cluster keeps taking changes, of the latest catalog, of a retained ``version``, or
as of a moment ``at``. It is written to a temporary file, sent, and removed.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path
from typing import Annotated

from fastapi import APIRouter, Depends, Query, Request
from fastapi.responses import FileResponse, Response
from starlette.background import BackgroundTask

from api.server.auth import require
from api.server.errors import problem_responses
from api.server.execution import node_of
from api.server.moments import parse_timestamp
from api.wire.roles import Role
from catalog.backup.take import take_backup

router = APIRouter(
    prefix="/v1",
    tags=["operations"],
    responses=problem_responses(400, 401, 403, 404, 410, 422, 503),
    dependencies=[Depends(require(Role.ADMIN))],
)

BACKUP_MEDIA_TYPE = "application/vnd.catalog.backup"
"""The media type of a backup file."""


@router.post(
    "/backup",
    response_class=FileResponse,
    responses={200: {"content": {BACKUP_MEDIA_TYPE: {}}, "description": "The backup file."}},
)
async def backup(
    request: Request,
    version: Annotated[int | None, Query(ge=1, description="back up this retained version")] = None,
    at: Annotated[
        str | None,
        Query(min_length=1, max_length=64, description="back up as of this moment (RFC 3339)"),
    ] = None,
) -> Response:
    """A backup of the catalog: its retained versions, data commits and settings, checked.

    ``Catalog-Backup-Version`` and ``Catalog-Backup-Digest`` say what it holds.
    """
    moment = None if at is None else parse_timestamp(at)
    folder = Path(tempfile.mkdtemp(prefix="catalog-backup-"))
    try:
        summary = await take_backup(
            node_of(request).log, folder / "catalog.backup", version=version, at_ts=moment
        )
    except BaseException:
        shutil.rmtree(folder, ignore_errors=True)
        raise
    return FileResponse(
        summary.path,
        media_type=BACKUP_MEDIA_TYPE,
        filename=f"catalog-v{summary.version}.backup",
        headers={
            "Catalog-Backup-Version": str(summary.version),
            "Catalog-Backup-Digest": summary.digest,
        },
        background=BackgroundTask(shutil.rmtree, folder, ignore_errors=True),
    )
