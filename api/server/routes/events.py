"""``GET /v1/events``: catalog events as server-sent events, replayed then live.

Each event's ``id`` is ``<version>.<entry index>``; a client that reconnects with
``Last-Event-ID`` resumes right after it, so nothing is lost or repeated. Retained history is
replayed first (from ``from_version``), then the stream follows new versions as they apply;
a version not written yet is waited for. An idle stream sends ``bookmark`` frames whose id
(``<version>``) moves the position past versions its filters let nothing through from.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import AsyncIterator, Callable, Iterable
from typing import Annotated

from fastapi import APIRouter, Depends, Header, Query, Request
from fastapi.responses import StreamingResponse
from starlette.types import Message, Receive, Scope, Send

from api.server.auth import require
from api.server.claims import Claims
from api.server.config import ServerSettings
from api.server.errors import ApiError, problem_responses
from api.server.execution import node_of
from api.server.permits import caller, sees_event
from api.server.routes.params import NAME_DOC
from api.server.slots import Slots
from api.wire.codes import Code
from api.wire.roles import Role
from catalog.access import Caller
from catalog.descriptors import PrincipalRole
from catalog.errors import CatalogError, ValidationError
from catalog.event_feed import CatalogEventParameters, EventFilter, FeedOverflowError
from catalog.events import CatalogEvent
from catalog.identifiers import parse_name
from catalog.runtime.node import CatalogNode

router = APIRouter(prefix="/v1", tags=["events"])
log = logging.getLogger(__name__)

_EVENTS_PER_TURN = 64
"""Events a stream sends before it lets other requests run (replays compute as they go)."""


def parse_event_id(text: str) -> tuple[int, int]:
    """Parse ``<version>.<index>`` (after that event) or ``<version>`` (after that version).

    Raises:
        ValidationError: anything else.
    """
    version, dot, index = text.strip().partition(".")
    if not (
        version.isascii()
        and version.isdigit()
        and 1 <= int(version) < _WHOLE_VERSION
        and (not dot or (index.isascii() and index.isdigit()))
    ):
        raise ValidationError(
            f"Last-Event-ID {text!r} is not a stream position: send the id of the last event "
            "or bookmark received, <version>.<index> or <version>"
        )
    return int(version), (int(index) if dot else _WHOLE_VERSION)


_WHOLE_VERSION = 1 << 62
"""The entry index past every entry: a position after a whole version."""


def format_event(e: CatalogEventParameters, *, origin: bool = True) -> str:
    """Return one SSE frame for a catalog event (without who asked for it, unless ``origin``)."""
    data = e.to_json()
    if not origin:
        data.pop("origin", None)  # its message may name what the subscriber may not see
    return f"id: {e.version}.{e.index}\nevent: {e.event}\ndata: {json.dumps(data)}\n\n"


def _bookmark(version: int) -> str:
    """Return a frame that moves the subscriber's position past ``version`` (no event)."""
    return f"id: {version}\nevent: bookmark\ndata: {json.dumps({'version': version})}\n\n"


def _error_frame(code: str, message: str, resume: str | None = None) -> str:
    body: dict[str, str] = {"code": code, "detail": message}
    if resume is not None:
        body["resume"] = resume
    return f"event: error\ndata: {json.dumps(body)}\n\n"


def parse_kinds(text: str | None) -> frozenset[CatalogEvent] | None:
    """Parse ``kinds=TABLE_CREATE,TABLE_DROP`` (case-insensitive).

    Raises:
        ValidationError: an unknown kind; the message lists the accepted ones.
    """
    if text is None:
        return None
    names = [n.strip().upper() for n in text.split(",") if n.strip()]
    unknown = [n for n in names if n not in CatalogEvent.__members__]
    if unknown or not names:
        raise ValidationError(
            f"kinds={text!r}: {', '.join(unknown) or 'no kind'} is not an event kind; "
            f"accepted (comma-separated): {', '.join(CatalogEvent)}"
        )
    return frozenset(CatalogEvent(n) for n in names)


def _seen_by(node: CatalogNode, who: Caller) -> Callable[[CatalogEventParameters], bool]:
    """Return whether ``who`` may see an event, judged on the catalogs around its version."""
    service = node.service

    def seen(event: CatalogEventParameters) -> bool:
        after = service.catalog(event.version)
        try:
            before = service.catalog(event.version - 1)
        except CatalogError:  # compacted: the object is judged after the change only
            before = after
        return sees_event(who, before, after, event, service.latest_catalog())

    return seen


def _token_ended(node: CatalogNode, claims: Claims) -> Callable[[], str | None]:
    """Return why the stream's token no longer holds (expired, its principal dropped), or None."""

    def ended() -> str | None:
        if claims.expires_at <= time.time():
            return "the token this stream was opened with has expired"
        principal = claims.principal_id
        if (
            principal is not None
            and node.service.latest_catalog().find_principal_by_id(principal) is None
        ):
            return f"principal {claims.subject} no longer exists"
        return None

    return ended


async def _stream(
    node: CatalogNode,
    position: tuple[int, int],
    only: EventFilter,
    settings: ServerSettings,
    seen: Callable[[CatalogEventParameters], bool] | None = None,
    ended: Callable[[], str | None] | None = None,
) -> AsyncIterator[str]:
    """Replay retained versions before the feed's first one, then forward what the node fires.

    ``position`` is ``(version, index)``: the stream starts after entry ``index`` of
    ``version`` (-1: at its first entry). An idle stream sends keep-alives, and a bookmark
    when it has read versions whose events the filter let none through. A subscriber that
    falls too far behind is cut off with the position to resume from. With ``seen``, only
    the events it lets through are sent (a subscriber's grants). With ``ended``, the stream
    stops, with the position to resume from, once it names why (a token that expired).
    """
    service = node.service
    feed = service.subscribe(settings.sse_backlog_versions, only)
    version, skip_through = position
    sent = version - 1  # the stream position the subscriber knows (a whole version)
    events: Iterable[CatalogEventParameters]
    try:
        yield ": catalog events\n\n"
        while True:
            why = None if ended is None else ended()
            if why is not None:
                resume = f"{version - 1}" if skip_through < 0 else f"{version}.{skip_through}"
                yield _error_frame(
                    str(Code.UNAUTHENTICATED),
                    f"{why}: sign in again and reconnect with Last-Event-ID: {resume}",
                    resume,
                )
                return
            if version < feed.first_version:
                got, events = version, service.events(version)
            else:
                try:
                    got, events = await asyncio.wait_for(feed.next(), settings.sse_heartbeat_s)
                except TimeoutError:
                    if service.failure is not None:  # no version will come: say why
                        code = str(getattr(service.failure, "code", "STORAGE_UNAVAILABLE"))
                        yield _error_frame(code, f"{service.failure}")
                        return
                    yield ": keep-alive\n\n" if sent >= version - 1 else _bookmark(version - 1)
                    sent = version - 1
                    continue
                if got < version:
                    continue
                if got > version:  # the node loaded a snapshot past it: replay what is left
                    got, events = version, service.events(version)
            for count, event in enumerate(events, 1):
                if (
                    event.index > skip_through
                    and only.matches(event)
                    and (seen is None or seen(event))
                ):
                    yield format_event(event, origin=seen is None)
                    sent = version - 1
                if count % _EVENTS_PER_TURN == 0:
                    await asyncio.sleep(0)  # a long replay leaves the loop to others
            version, skip_through = got + 1, -1
    except FeedOverflowError:
        resume = f"{version - 1}" if skip_through < 0 else f"{version}.{skip_through}"
        yield _error_frame(
            str(Code.SUBSCRIBER_TOO_SLOW),
            f"this stream fell {settings.sse_backlog_versions} versions behind the catalog "
            f"and was cut off; reconnect with Last-Event-ID: {resume} to go on from there",
            resume,
        )
    except CatalogError as e:  # compacted away, or the node failed: tell the client and stop
        yield _error_frame(str(e.code), e.message)
    finally:
        service.unsubscribe(feed)


@router.get(
    "/events",
    response_class=StreamingResponse,
    responses={
        200: {"content": {"text/event-stream": {}}, "description": "A stream of catalog events"},
        **problem_responses(400, 401, 403, 410, 422, 503),
    },
)
async def events(
    request: Request,
    from_version: Annotated[
        int | None,
        Query(
            ge=1,
            description="Start at this version (default: live only); a version not written "
            "yet is waited for",
        ),
    ] = None,
    schema: Annotated[
        str | None,
        Query(
            max_length=256,
            description=f"Only events about this schema and what is in it. {NAME_DOC}",
        ),
    ] = None,
    table: Annotated[
        str | None,
        Query(
            max_length=256,
            description="Only events about tables of this name (also renamed from or to it) "
            f"and their indexes. {NAME_DOC}",
        ),
    ] = None,
    kinds: Annotated[
        str | None,
        Query(
            max_length=1024,
            description="Only these kinds of events, comma-separated (e.g. "
            "TABLE_CREATE,TABLE_ALTER)",
        ),
    ] = None,
    last_event_id: Annotated[str | None, Header(alias="Last-Event-ID", max_length=64)] = None,
    claims: Annotated[Claims | None, Depends(require(Role.NONE))] = None,
) -> StreamingResponse:
    """Stream one event per catalog change: retained history from ``from_version``, then live.

    Each event names its object and carries the change (the update entry), not the whole
    object. Filters are applied here, on the server; positions stay those of the whole
    catalog, so ``Last-Event-ID`` resumes a filtered stream as any other. A subscriber of
    the role ``none`` gets only the events about schemas, tables, views and indexes it may
    see (``permits.sees_event``).
    """
    node = node_of(request)
    service = node.service
    only = EventFilter(
        schema=None if schema is None else parse_name(schema),
        table=None if table is None else parse_name(table),
        kinds=parse_kinds(kinds),
    )
    if last_event_id:
        position = parse_event_id(last_event_id)
        if position[1] == _WHOLE_VERSION:  # a bookmark: start at the next version
            position = (position[0] + 1, -1)
    else:
        position = (from_version or service.applied.value + 1, -1)
    if position[0] <= service.latest_version:
        service.update(position[0])  # VERSION_COMPACTED (410) before the stream starts
    slots: Slots = request.app.state.subscribers
    slot = slots.take("" if claims is None else claims.caller)
    if slot is None:
        raise ApiError(
            Code.TOO_MANY_SUBSCRIBERS,
            f"this node serves at most {slots.limit} event streams, {slots.per_principal} per "
            "principal; close one, or retry later or on another node",
        )
    metrics = request.app.state.metrics
    metrics.sse_subscribers.inc()

    def release() -> None:
        slot.release()
        metrics.sse_subscribers.dec()

    settings: ServerSettings = request.app.state.settings
    who = caller(request)
    seen = None if who is None or who.role is not PrincipalRole.NONE else _seen_by(node, who)
    ended = None if claims is None else _token_ended(node, claims)
    stream = _stream(node, position, only, settings, seen, ended)
    return _EventResponse(stream, release, settings.sse_send_timeout_s)


class _EventResponse(StreamingResponse):
    """An event stream that gives its subscriber slot back when the response ends.

    However it ends: also when the client leaves before the first byte, or stops reading for
    ``send_timeout_s`` (its connection is then closed; it resumes from its last event id).
    """

    def __init__(
        self, stream: AsyncIterator[str], release: Callable[[], None], send_timeout_s: float
    ) -> None:
        super().__init__(
            stream,
            media_type="text/event-stream",
            headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
        )
        self._release = release
        self._send_timeout_s = send_timeout_s

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        async def bounded(message: Message) -> None:
            await asyncio.wait_for(send(message), self._send_timeout_s)

        try:
            await super().__call__(scope, receive, bounded)
        except TimeoutError:
            log.warning(
                "cut off an event subscriber that read nothing for %.0f s", self._send_timeout_s
            )
        finally:
            self._release()
