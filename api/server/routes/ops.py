"""Operations: clock and schema sync, cluster nodes, liveness, readiness, metrics."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Query, Request
from fastapi.responses import JSONResponse, Response

from api.server.auth import require
from api.server.errors import problem, problem_responses
from api.server.execution import node_of
from api.server.moments import parse_timestamp
from api.server.responses import json_response
from api.server.routes.params import AT_DOC
from api.wire.codes import Code
from api.wire.models import NodeInfo, NodesBody, SchemaSyncBody, TimeBody
from api.wire.roles import Role

router = APIRouter(
    tags=["operations"], responses=problem_responses(400, 401, 403, 404, 410, 422, 503)
)
READER = [Depends(require(Role.READER))]
ANYONE = [Depends(require(Role.NONE))]
"""Signed in with any role: the time and the schema-sync wait tell nothing of the catalog."""


@router.get("/v1/time", response_model=TimeBody, dependencies=ANYONE)
async def get_time(request: Request) -> Response:
    """This node's hybrid clock: pin a timestamp for a job with it."""
    node = node_of(request)
    return json_response(TimeBody(now=node.clock.now(), physical_ms=node.clock.physical_ms()))


@router.post("/v1/schema-sync/wait", response_model=SchemaSyncBody, dependencies=ANYONE)
async def schema_sync_wait(
    request: Request, at: Annotated[str, Query(min_length=1, max_length=64, description=AT_DOC)]
) -> Response:
    """Wait until metadata is complete at ``at``; answer the version active then."""
    node = node_of(request)
    ts = parse_timestamp(at)
    await node.schema_sync.wait_for_metadata_completeness(ts)
    return json_response(SchemaSyncBody(at=ts, version=node.service.active_catalog_version(ts)))


@router.get("/v1/cluster/nodes", response_model=NodesBody, dependencies=READER)
async def cluster_nodes(request: Request) -> Response:
    """The live catalog nodes (the node registry) and how far each has applied the log.

    A node is listed while its registry entry lives: it refreshes the entry every few seconds
    and whenever it applies a version; a node that stops doing so drops out after its ttl.
    """
    node = node_of(request)
    records = await node.cluster_nodes()
    now_ms = node.clock.physical_ms()
    nodes = [
        NodeInfo(
            name=r.name,
            address=r.address,
            applied_version=r.applied_version,
            heartbeat_ms=r.heartbeat_ms,
            safe_time=r.safe_time,
            heartbeat_age_ms=max(0, now_ms - r.heartbeat_ms),
            started_ms=r.started_ms,
        )
        for r in records
    ]
    return json_response(NodesBody(nodes=nodes))


@router.get("/healthz")
async def healthz() -> dict[str, str]:
    """Liveness: the process answers."""
    return {"status": "ok"}


@router.get("/readyz")
async def readyz(request: Request) -> JSONResponse:
    """Readiness: recovery finished, the log's watch is live, nothing failed."""
    node = getattr(request.app.state, "node", None)
    if node is None or not node.ready:
        reason = (
            "starting"
            if node is None
            else (
                f"failed: {node.service.failure}" if node.service.failure else "following the log"
            )
        )
        return problem(Code.NOT_READY, f"not ready ({reason})")
    return JSONResponse({"status": "ready", "latest_version": node.service.latest_version})


@router.get("/metrics", response_class=Response, dependencies=READER)
async def metrics(request: Request) -> Response:
    """Prometheus metrics (with auth on, a scraper needs a reader token)."""
    body = await request.app.state.metrics.render()
    return Response(body, media_type="text/plain; version=0.0.4; charset=utf-8")
