"""Retention leases: a job keeps what a read as of a moment needs while it runs.

``POST /v1/leases`` takes one (``at``, ``ttl_s``, ``owner``), ``GET /v1/leases`` lists those
that hold, ``GET /v1/leases/{id}`` reads one, ``DELETE /v1/leases/{id}`` releases one. While
a lease holds, compaction keeps the catalog version active at its moment and data expiry the
files a read at it needs (``catalog.leases``). A lease ends on its own when its time runs
out; a job renews a longer need by taking a new lease before the old one ends.

A reader takes, reads and releases its own leases; releasing another caller's lease takes the
writer role.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Path, Request
from fastapi.responses import Response

from api.server.auth import caller_of, require
from api.server.claims import Claims
from api.server.errors import ApiError, problem_responses
from api.server.execution import node_of
from api.server.moments import parse_timestamp
from api.server.responses import json_response
from api.wire.codes import Code
from api.wire.models import LeaseRequest, LeasesBody
from api.wire.roles import Role
from catalog.errors import ErrorCode, ValidationError
from catalog.leases import RetentionLease
from schemasync.clock import describe_ts
from schemasync.service import ms_to_hlc

router = APIRouter(
    prefix="/v1/leases",
    tags=["leases"],
    responses=problem_responses(400, 401, 403, 404, 409, 410, 422, 503),
    dependencies=[Depends(require(Role.READER))],
)

LeaseId = Annotated[str, Path(min_length=1, max_length=64, pattern="^[0-9a-f]+$")]


@router.post("", response_model=RetentionLease, status_code=201)
async def take_lease(request: Request, payload: LeaseRequest) -> Response:
    """Take a lease keeping reads as of ``at`` answerable for ``ttl_s`` seconds.

    Refused: a moment before the earliest version kept (410 VERSION_COMPACTED), one further
    ahead than the clock-skew bound, a lifetime over a week, or a full lease table.
    """
    node = node_of(request)
    at = parse_timestamp(payload.at)
    horizon = node.clock.now() + ms_to_hlc(node.schema_sync.max_clock_skew_ms)
    if at > horizon:
        raise ValidationError(
            f"a lease on {describe_ts(at)} is further ahead than this catalog's clock allows "
            f"({describe_ts(horizon)}); take a lease on a moment that has passed",
            code=ErrorCode.VALIDATION_ERROR,
        )
    principal = caller_of(request) or "anonymous"
    lease = await node.manager.leases.take(
        node.service, at, payload.ttl_s, payload.owner, principal
    )
    return json_response(lease, status_code=201)


@router.get("", response_model=LeasesBody)
async def list_leases(request: Request) -> Response:
    """The leases that hold, earliest moment first."""
    return json_response(LeasesBody(leases=await node_of(request).manager.leases.list()))


@router.get("/{lease_id}", response_model=RetentionLease)
async def get_lease(request: Request, lease_id: LeaseId) -> Response:
    """One lease that holds; 404 LEASE_NOT_FOUND once released or ended."""
    return json_response(await node_of(request).manager.leases.get(lease_id))


@router.delete("/{lease_id}", status_code=204)
async def release_lease(request: Request, lease_id: LeaseId) -> Response:
    """Release a lease at once (the caller's own, or any with the writer role)."""
    leases = node_of(request).manager.leases
    lease = await leases.get(lease_id)
    claims: Claims | None = getattr(request.state, "claims", None)
    mine = lease.principal == (caller_of(request) or "anonymous")
    if claims is not None and not mine and claims.role.rank < Role.WRITER.rank:
        raise ApiError(
            Code.FORBIDDEN,
            f"lease {lease_id} is {lease.principal}'s: releasing another caller's lease takes "
            "the writer role",
        )
    await leases.release(lease_id)
    return Response(status_code=204)
