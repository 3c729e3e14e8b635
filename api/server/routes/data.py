"""Data commits: Spark writers make files visible at one timestamp; readers list them at T."""

from __future__ import annotations

import asyncio
from typing import Annotated

from fastapi import APIRouter, Depends, Query, Request
from fastapi.responses import Response

from api.server.auth import require, scoped_request_id
from api.server.errors import ApiError, problem_responses
from api.server.execution import node_of
from api.server.moments import parse_timestamp
from api.server.permits import permit, visible
from api.server.responses import json_response
from api.server.routes.params import AT_DOC
from api.wire.codes import Code
from api.wire.models import DataCommitRequest, DataCommitsBody
from api.wire.roles import Role
from api.wire.storage import TableKeysBody
from catalog.data.files import DataCommit
from catalog.data.s3_sessions import VENDOR, VendingError
from catalog.data.s3_store import S3Endpoint
from catalog.data.warehouse import on_s3, table_folders
from catalog.descriptors import Privilege, SecurableKind
from catalog.errors import ErrorCode, NotFoundError, ValidationError
from catalog.runtime.node import CatalogNode

TABLE = SecurableKind.TABLE


def _permit_table(request: Request, node: CatalogNode, privilege: Privilege, table_id: int) -> None:
    """Refuse unless the caller holds ``privilege`` on the table; one it may not see is missing.

    Raises:
        NotFoundError: TABLE_NOT_FOUND, naming only the id given, for a table it may not see.
        ApiError: FORBIDDEN.
    """
    latest = node.service.latest_catalog()
    if not visible(request, latest, TABLE, table_id):
        raise NotFoundError(f"table with id {table_id} not found", code=ErrorCode.TABLE_NOT_FOUND)
    permit(request, latest, privilege, TABLE, table_id)


router = APIRouter(
    prefix="/v1/data",
    tags=["data"],
    responses=problem_responses(400, 401, 403, 404, 409, 413, 415, 422, 503),
)


@router.post("/commits", response_model=DataCommit, dependencies=[Depends(require(Role.NONE))])
async def commit_data(request: Request, payload: DataCommitRequest) -> Response:
    """Commit written files of a table: visible to reads at or after the returned commit_ts.

    Idempotent by ``request_id``: a retry returns the original commit. With
    ``expected_seq``, refused (409 PRECONDITION_FAILED, nothing committed) when the table has
    data commits after that one: a writer that checked the table's rows as of that commit
    (its keys, say) commits only if the check still holds.
    """
    node = node_of(request)
    _permit_table(request, node, Privilege.MODIFY, payload.table_id)
    commit = await node.data.commit(
        payload.table_id,
        payload.files,
        schema_version=payload.schema_version,
        mode=payload.mode,
        request_id=scoped_request_id(request, payload.request_id),
        expected_seq=payload.expected_seq,
        removed=payload.removed,
    )
    # The log keeps the id within the caller's principal; the caller gets back its own id.
    return json_response(commit.model_copy(update={"request_id": payload.request_id}))


@router.get("/keys", response_model=TableKeysBody, dependencies=[Depends(require(Role.NONE))])
async def table_keys(
    request: Request,
    table_id: Annotated[int, Query(ge=0, le=2**63 - 1)],
    write: Annotated[bool, Query(description="Keys that write too (takes MODIFY).")] = False,
) -> Response:
    """A table's folder and, on S3, short-lived keys for its folders alone (the Spark source's).

    Read-only keys take ``SELECT``; ``write`` takes ``MODIFY``. A table in a local folder
    answers its folder and no keys.
    """
    node = node_of(request)
    _permit_table(request, node, Privilege.MODIFY if write else Privilege.SELECT, table_id)
    table = node.service.latest_catalog().table_by_id(table_id)
    warehouse = node.settings.warehouse or request.app.state.settings.default_warehouse
    folders = table_folders(table, warehouse)
    if not on_s3(folders[0]):
        return json_response(TableKeysBody(table_id=table_id, location=folders[0]))
    try:
        endpoint = S3Endpoint.from_env()
        keys = await asyncio.to_thread(VENDOR.keys_for, folders, write)
    except (VendingError, ValidationError) as e:
        raise ApiError(
            Code.OBJECT_STORE_UNAVAILABLE, f"{e}; no keys were handed out: try again"
        ) from e
    return json_response(
        TableKeysBody(
            table_id=table_id,
            location=folders[0],
            endpoint=endpoint.url,
            region=endpoint.region,
            path_style=endpoint.path_style,
            access_key_id=keys.access_key_id,
            secret_access_key=keys.secret_access_key,
            session_token=keys.session_token,
            expires_at_ms=keys.expires_at_ms,
        )
    )


@router.get("/commits", response_model=DataCommitsBody, dependencies=[Depends(require(Role.NONE))])
async def data_commits(
    request: Request,
    table_id: Annotated[int, Query(ge=0, le=2**63 - 1)],
    at: Annotated[str | None, Query(min_length=1, max_length=64, description=AT_DOC)] = None,
    history: Annotated[bool, Query(description="Also the commits an overwrite hid.")] = False,
) -> Response:
    """The table's commits visible at ``at`` (default now): exact once this answers."""
    node = node_of(request)
    _permit_table(request, node, Privilege.SELECT, table_id)
    ts = node.clock.now() if at is None else parse_timestamp(at)
    commits = await node.data.commits_at(table_id, ts, history=history)
    return json_response(DataCommitsBody(table_id=table_id, at=ts, commits=commits))
