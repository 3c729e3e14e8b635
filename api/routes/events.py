"""``GET /v1/events``: catalog events as server-sent events, replayed then live.

Each event's ``id`` is ``<version>.<entry index>``; a client that reconnects with
``Last-Event-ID`` resumes right after it, so nothing is lost or repeated. Retained history is
replayed first (from ``from_version``), then the stream follows new versions as they apply.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Callable, Iterable
from typing import Annotated

from fastapi import APIRouter, Depends, Header, Query, Request
from fastapi.responses import StreamingResponse
from starlette.types import Receive, Scope, Send

from api.auth import Claims, require
from api.errors import ApiCode, ApiError, problem_responses
from api.roles import Role
from api.routes.params import node_of
from api.slots import Slots
from catalog.errors import CatalogError, ErrorCode, ValidationError
from catalog.event_feed import CatalogEventParameters, FeedOverflowError
from catalog.node import CatalogNode

router = APIRouter(prefix="/v1", tags=["events"])

_EVENTS_PER_TURN = 64
"""Events a stream sends before it lets other requests run (replays compute as they go)."""


def parse_event_id(text: str) -> tuple[int, int]:
    """Parse ``<version>.<index>``.

    Raises:
        ValidationError: anything else.
    """
    version, dot, index = text.strip().partition(".")
    if (
        not (
            dot
            and (version.isascii() and version.isdigit())
            and (index.isascii() and index.isdigit())
        )
        or int(version) < 1
    ):
        raise ValidationError(f"Last-Event-ID {text!r} is not <version>.<index>")
    return int(version), int(index)


def format_event(e: CatalogEventParameters) -> str:
    """Return one SSE frame for a catalog event."""
    data = {
        "event": str(e.event),
        "version": e.version,
        "index": e.index,
        "activation_ts": e.activation_ts,
        "descriptor": e.descriptor.model_dump(mode="json") if e.descriptor is not None else None,
        "entry": e.entry.model_dump(mode="json"),
    }
    return f"id: {e.version}.{e.index}\nevent: {e.event}\ndata: {json.dumps(data)}\n\n"


def _error_frame(code: str, message: str) -> str:
    return f"event: error\ndata: {json.dumps({'code': code, 'detail': message})}\n\n"


async def _stream(
    request: Request, node: CatalogNode, version: int, skip_through: int, heartbeat_s: float
) -> AsyncIterator[str]:
    """Replay retained versions before the feed's first one, then forward what the node fires.

    A subscriber that falls too far behind is cut off; the client resumes with Last-Event-ID.
    """
    service = node.service
    feed = service.subscribe()
    events: Iterable[CatalogEventParameters]
    try:
        yield ": catalog events\n\n"
        while True:
            if version < feed.first_version:
                got, events = version, service.events(version)
            else:
                try:
                    got, events = await asyncio.wait_for(feed.next(), heartbeat_s)
                except TimeoutError:
                    if service.failure is not None:  # no version will come: say why
                        code = str(getattr(service.failure, "code", "STORAGE_UNAVAILABLE"))
                        yield _error_frame(code, f"{service.failure}")
                        return
                    yield ": keep-alive\n\n"
                    continue
                if got < version:
                    continue
                if got > version:  # the node loaded a snapshot past it: replay what is left
                    got, events = version, service.events(version)
            for count, event in enumerate(events, 1):
                if event.index > skip_through:
                    yield format_event(event)
                if count % _EVENTS_PER_TURN == 0:
                    await asyncio.sleep(0)  # a long replay leaves the loop to others
            version, skip_through = got + 1, -1
    except FeedOverflowError:
        return
    except CatalogError as e:  # compacted away, or the node failed: tell the client and stop
        yield _error_frame(str(e.code), e.message)
    finally:
        service.unsubscribe(feed)


@router.get(
    "/events",
    response_class=StreamingResponse,
    responses={
        200: {"content": {"text/event-stream": {}}, "description": "A stream of catalog events"},
        **problem_responses(401, 403, 404, 410, 422, 503),
    },
)
async def events(
    request: Request,
    from_version: Annotated[
        int | None, Query(ge=1, description="Replay from this version (default: live only)")
    ] = None,
    last_event_id: Annotated[str | None, Header(alias="Last-Event-ID", max_length=64)] = None,
    claims: Annotated[Claims | None, Depends(require(Role.READER))] = None,
) -> StreamingResponse:
    """Stream one event per catalog entry: retained history from ``from_version``, then live."""
    node = node_of(request)
    service = node.service
    if last_event_id:
        version, skip_through = parse_event_id(last_event_id)
    else:
        version, skip_through = (from_version or service.applied.value + 1), -1
    if version <= service.latest_version:
        service.update(version)  # VERSION_COMPACTED (410) before the stream starts
    elif version > service.latest_version + 1:  # from_version or Last-Event-ID from the future
        raise CatalogError(
            f"version {version} does not exist yet (latest is {service.latest_version})",
            code=ErrorCode.VERSION_NOT_FOUND,
        )
    slots: Slots = request.app.state.subscribers
    slot = slots.take("" if claims is None else claims.subject)
    if slot is None:
        raise ApiError(
            ApiCode.TOO_MANY_SUBSCRIBERS,
            f"this node serves at most {slots.limit} event streams, {slots.per_principal} per "
            "principal; close one, or retry later or on another node",
        )
    metrics = request.app.state.metrics
    metrics.sse_subscribers.inc()

    def release() -> None:
        slot.release()
        metrics.sse_subscribers.dec()

    stream = _stream(
        request, node, version, skip_through, request.app.state.settings.sse_heartbeat_s
    )
    return _EventResponse(stream, release)


class _EventResponse(StreamingResponse):
    """An event stream that gives its subscriber slot back when the response ends.

    However it ends: also when the client leaves before the first byte.
    """

    def __init__(self, stream: AsyncIterator[str], release: Callable[[], None]) -> None:
        super().__init__(
            stream,
            media_type="text/event-stream",
            headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
        )
        self._release = release

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            await super().__call__(scope, receive, send)
        finally:
            self._release()
