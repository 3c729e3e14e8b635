"""``POST /v1/ddl`` and ``POST /v1/sql``: change the catalog, exactly once per request id."""

from __future__ import annotations

import asyncio
import time
from typing import Annotated

from fastapi import APIRouter, Depends, Header, Request
from fastapi.responses import Response

from api.server.auth import require
from api.server.errors import ApiError, problem_responses
from api.server.execution import admitted, execute_batch, node_of
from api.server.permits import seen_catalog
from api.server.responses import json_response
from api.server.routes.grants import shown_grants
from api.server.slots import Slot
from api.sql import parse_script, refused_statement, show_grants
from api.sql.script_shape import ScriptShape
from api.wire.codes import Code
from api.wire.grants import GrantsBody
from api.wire.models import ApplyResultBody, BatchRequest, DdlRequest, SqlRequest
from api.wire.roles import Role
from catalog.commands import CommandBase
from catalog.errors import CatalogError, ValidationError

router = APIRouter(
    prefix="/v1",
    tags=["ddl"],
    responses=problem_responses(400, 401, 403, 404, 409, 410, 413, 415, 422, 429, 503),
    dependencies=[Depends(require(Role.NONE))],  # each command's privileges: ``permits``
)


IdempotencyKey = Annotated[
    str | None,
    Header(
        alias="Idempotency-Key",
        max_length=200,
        description="Same as request_id: a retry with the same key is applied at most once.",
    ),
]


def _check_batch_size(request: Request, count: int, what: str) -> None:
    limit = request.app.state.settings.max_commands
    if count > limit:
        raise ApiError(
            Code.TOO_MANY_COMMANDS, f"a batch holds at most {limit} {what}, this one {count}"
        )


async def _execute(
    request: Request,
    commands: list[CommandBase],
    payload: BatchRequest,
    idempotency_key: str | None,
    slot: Slot,
) -> Response:
    """Run one batch; its request id comes from the body or the Idempotency-Key header."""
    if payload.request_id and idempotency_key and payload.request_id != idempotency_key:
        raise ValidationError("request_id and the Idempotency-Key header differ")
    request_id = payload.request_id or idempotency_key
    _check_batch_size(request, len(commands), "commands")
    metrics = request.app.state.metrics
    ops = [str(getattr(c, "op", type(c).__name__)) for c in commands]
    started = time.perf_counter()
    try:
        result = await execute_batch(
            request,
            commands,
            slot=slot,
            request_id=request_id,
            message=payload.message,
            wait_for_nodes=payload.wait_for_nodes_s,
        )
    except CatalogError as e:
        metrics.record(ops, [str(e.code)] * len(ops), started)
        raise
    metrics.record(
        ops, ["ok" if a else "noop" for a in result.applied] or ["ok"] * len(ops), started
    )
    body = ApplyResultBody(
        version=result.version,
        applied=list(result.applied),
        activation_ts=result.activation_ts,
        nodes_synced=None if result.nodes_synced is None else list(result.nodes_synced),
        nodes_lagging=None if result.nodes_lagging is None else list(result.nodes_lagging),
    )
    # The node lists appear only when asked for, so other answers keep their shape.
    return json_response(body, exclude_none=True)


@router.post("/ddl", response_model=ApplyResultBody)
async def ddl(
    request: Request, payload: DdlRequest, idempotency_key: IdempotencyKey = None
) -> Response:
    """Apply commands as one atomic batch; answer once the new version is visible everywhere."""
    for command in payload.commands:
        if getattr(command, "replaces_rows", False):
            raise ValidationError(
                f"{command.op}: replaces_rows is set only by an Iceberg replace of the table "
                "(REPLACE TABLE through /iceberg), which also removes its data; nothing was "
                "written"
            )
    with admitted(request) as slot:
        return await _execute(request, list(payload.commands), payload, idempotency_key, slot)


@router.post("/sql", response_model=ApplyResultBody | GrantsBody)
async def sql(
    request: Request, payload: SqlRequest, idempotency_key: IdempotencyKey = None
) -> Response:
    """Apply DDL statements (one or more, ``;``-separated) as one atomic batch.

    A ``SHOW GRANTS`` statement, sent alone, is answered with the grants it asks for.
    """
    shown = show_grants(payload.sql)
    if shown is not None:
        latest = node_of(request).service.latest_catalog()
        return json_response(shown_grants(request, latest, shown))
    with admitted(request) as slot:
        # Counted before parsing, and parsed off the event loop: a large script neither
        # holds up other requests nor costs more than a refusal.
        _check_batch_size(request, ScriptShape.of(payload.sql).statements, "statements")
        # Typed against what the caller may see: a view's query cannot name a hidden table.
        latest = seen_catalog(request, node_of(request).service.latest_catalog())
        commands, origins = await asyncio.to_thread(parse_script, payload.sql, latest)
        try:
            return await _execute(request, commands, payload, idempotency_key, slot)
        except CatalogError as e:
            raise refused_statement(e, origins) from None
