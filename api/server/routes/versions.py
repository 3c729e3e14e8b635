"""Versions: the retained ones, waiting for one, and the difference between two."""

from __future__ import annotations

import asyncio
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Path, Query, Request
from fastapi.responses import Response

from api.server.auth import require
from api.server.errors import ApiError, problem_responses
from api.server.execution import node_of
from api.server.permits import caller, seen_catalog
from api.server.responses import json_response
from api.wire.codes import Code
from api.wire.models import (
    ChangeBody,
    ColumnChangeBody,
    DiffBody,
    FieldChangeBody,
    ReadyBody,
    VersionInfo,
    VersionsBody,
)
from api.wire.roles import Role
from catalog.access import Caller, role_covers
from catalog.catalog import Catalog
from catalog.change_words import describe
from catalog.descriptors import Privilege
from catalog.diff import Change, ChangeKind, ColumnChange, ViewColumnChange, diff
from catalog.errors import CatalogError
from catalog.service import CatalogService
from catalog.visible import visible_catalog

router = APIRouter(
    prefix="/v1",
    tags=["versions"],
    responses=problem_responses(400, 401, 403, 404, 410, 422, 503, 504),
    dependencies=[Depends(require(Role.NONE))],  # the role none sees its part (below)
)


@router.get("/versions", response_model=VersionsBody)
async def list_versions(
    request: Request,
    from_version: Annotated[int | None, Query(ge=1, description="First version to list")] = None,
    limit: Annotated[int, Query(ge=1, le=10_000)] = 1000,
) -> Response:
    """Retained versions with their activation timestamps (a page of at most ``limit``).

    A caller of the role ``none`` gets each version's changes to what it may see, in words,
    and not its entries or origins (which name what it may not), at most ``SEEN_PAGE`` a page.
    """
    service = node_of(request).service
    earliest, latest = service.earliest_version, service.latest_version
    first = max(earliest, from_version or earliest)
    last = min(latest, first + limit - 1)
    who = caller(request)
    if who is not None and not role_covers(who.role, Privilege.SELECT):
        last = min(last, first + SEEN_PAGE - 1)
        infos = await asyncio.to_thread(_seen_versions, service, who, first, last)
    else:
        infos = [_version_info(service, v) for v in range(first, last + 1)]
    return json_response(VersionsBody(earliest=earliest, latest=latest, versions=infos))


def _version_info(service: CatalogService, version: int) -> VersionInfo:
    activation_ts = service.catalog(version).activation_ts
    try:
        update = service.update(version)
    except CatalogError:  # the snapshot version has no update
        return VersionInfo(version=version, activation_ts=activation_ts)
    after = service.catalog(version)
    try:
        before = service.catalog(version - 1)
    except CatalogError:  # the version before was compacted away: what it named is unknown
        before = Catalog.initial()
    return VersionInfo(
        version=version,
        activation_ts=activation_ts,
        entries=[entry.type for entry in update.entries],
        changes=describe(update.entries, before, after),
        origins=list(update.origins),
    )


SEEN_PAGE = 100
"""The most versions a page holds for a caller of the role ``none`` (each is worked out)."""

_VERBS = {ChangeKind.ADDED: "created", ChangeKind.DROPPED: "dropped", ChangeKind.ALTERED: "altered"}


def _seen_versions(
    service: CatalogService, who: Caller, first: int, last: int
) -> list[VersionInfo]:
    """Return versions ``first..last`` as ``who`` sees them: what changed of its part."""
    infos: list[VersionInfo] = []
    before: Catalog | None = None
    for version in range(first, last + 1):
        cat = service.catalog(version)
        after = visible_catalog(cat, who)
        if before is None:
            try:
                before = visible_catalog(service.catalog(version - 1), who)
            except CatalogError:
                before = Catalog.initial()
        changes = [f"{_VERBS[c.change]} {c.object_type} {c.name}" for c in diff(before, after)]
        infos.append(VersionInfo(version=version, activation_ts=cat.activation_ts, changes=changes))
        before = after
    return infos


@router.get("/versions/{version}/ready", response_model=ReadyBody)
async def version_ready(
    request: Request,
    version: Annotated[int, Path(ge=1)],
    timeout: Annotated[float, Query(ge=0, description="Seconds to wait (capped)")] = 30.0,
) -> Response:
    """Wait until ``version`` is applied on this node and its listeners ran."""
    node = node_of(request)
    limit = min(timeout, request.app.state.settings.ready_timeout_max_s)
    try:
        await asyncio.wait_for(node.service.catalog_ready(version), limit)
    except TimeoutError as e:
        raise ApiError(
            Code.TIMEOUT,
            f"version {version} was not applied on {node.node_name} within {limit:g} s "
            f"(latest applied: {node.service.latest_version})",
        ) from e
    try:
        activation: int | None = node.service.catalog(version).activation_ts
    except CatalogError:  # compacted since: applied long ago
        activation = None
    return json_response(ReadyBody(version=version, ready=True, activation_ts=activation))


@router.get("/diff", response_model=DiffBody)
async def get_diff(
    request: Request,
    from_version: Annotated[int, Query(alias="from", ge=0)],
    to_version: Annotated[int, Query(alias="to", ge=0)],
) -> Response:
    """Objects added, dropped or altered between two versions, down to a table's columns.

    An added object comes whole in ``after``, a dropped one in ``before``; an altered one
    carries only the properties and columns that changed, each with before and after. A
    caller of the role ``none`` gets the difference of its part of each.
    """
    service = node_of(request).service
    before, after = service.catalog(from_version), service.catalog(to_version)
    before, after = seen_catalog(request, before), seen_catalog(request, after)
    changes = [_change_body(c) for c in diff(before, after)]
    return json_response(
        DiffBody(from_version=from_version, to_version=to_version, changes=changes)
    )


def _change_body(change: Change) -> ChangeBody:
    return ChangeBody(
        object_type=change.object_type,
        columns=[ColumnChangeBody(**_difference(c)) for c in change.columns],
        **_difference(change),
    )


def _difference(change: Change | ColumnChange | ViewColumnChange) -> dict[str, Any]:
    """What an object's change and a column's change both carry."""
    return {
        "id": change.id,
        "name": change.name,
        "change": str(change.change),
        "before": None if change.before is None else change.before.model_dump(mode="json"),
        "after": None if change.after is None else change.after.model_dump(mode="json"),
        "fields": [
            FieldChangeBody(field=f.field, before=f.before, after=f.after) for f in change.fields
        ],
    }
