"""Catalog events as the client sees them, and the resumable server-sent-events protocol.

The server sends one frame per catalog event with ``id: <version>.<index>``. A stream that
breaks reconnects with ``Last-Event-ID`` set to the last id it delivered, and the server
replays from right after it; ``EventCursor`` keeps that position and drops anything at or
before it, so a consumer sees every event once, in order.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import httpx
import pydantic

from api.client.errors import (
    BAD_RESPONSE,
    UNREACHABLE,
    CatalogApiError,
    NotFoundError,
    ResponseFormatError,
    UnreachableError,
    error_from_event,
    error_from_response,
)
from api.client.retries import RETRYABLE_CODES, Failover, RetryPolicy, describe, is_retryable
from catalog.entries import UpdateEntry
from catalog.event_feed import CatalogEventParameters
from catalog.events import CatalogEvent, EventSubject
from catalog.origin import UpdateOrigin

_ENTRY: pydantic.TypeAdapter[UpdateEntry] = pydantic.TypeAdapter(UpdateEntry)


class CatalogEventMessage(pydantic.BaseModel):
    """One catalog event from ``GET /v1/events``: which object changed, and how.

    Attributes:
        id: the stream position, ``<version>.<index>`` (what ``Last-Event-ID`` resumes from).
        event: the kind of event.
        version: the catalog version the change is in.
        index: the entry's position within the version.
        activation_ts: when ``version`` becomes active (hybrid timestamp).
        subject: the object the event is about, by id and name. The whole object is read at
            ``version`` (``version - 1`` for drops), e.g. ``client.table(schema, name,
            version=...)``.
        entry: the update entry that fired the event: the change itself.
        origin: who asked for the change, from which client, and why (None for changes
            made before origins were recorded).
    """

    model_config = pydantic.ConfigDict(frozen=True)

    id: str
    event: CatalogEvent
    version: int
    index: int
    activation_ts: int
    subject: EventSubject
    entry: UpdateEntry
    origin: UpdateOrigin | None = None

    @classmethod
    def from_frame(cls, event_id: str, data: str) -> CatalogEventMessage:
        """Decode one event frame's ``id`` and JSON ``data``.

        Raises:
            pydantic.ValidationError, ValueError: the frame is not a catalog event.
        """
        raw: dict[str, Any] = json.loads(data)
        # The parts are validated one by one, so the message is assembled without validating
        # again.
        return cls.model_construct(
            id=event_id,
            event=CatalogEvent(raw["event"]),
            version=int(raw["version"]),
            index=int(raw["index"]),
            activation_ts=int(raw["activation_ts"]),
            subject=EventSubject.model_validate(raw["subject"]),
            entry=_ENTRY.validate_python(raw["entry"]),
            origin=None
            if raw.get("origin") is None
            else UpdateOrigin.model_validate(raw["origin"]),
        )

    def to_json(self) -> dict[str, Any]:
        """Return the event as the server sent it (plus its ``id``)."""
        sent = CatalogEventParameters(
            self.event,
            self.version,
            self.activation_ts,
            self.subject,
            self.entry,
            self.index,
            self.origin,
        )
        return {"id": self.id, **sent.to_json()}


def filter_params(
    schema: str | None, table: str | None, kinds: Iterable[CatalogEvent | str] | None
) -> dict[str, str]:
    """Return the query parameters of an event stream's server-side filters."""
    params = {"schema": schema, "table": table}
    found = {k: v for k, v in params.items() if v is not None}
    if kinds is not None:
        found["kinds"] = ",".join(str(k) for k in kinds)
    return found


@dataclass(slots=True)
class SseFrame:
    """One server-sent event: its ``id``, ``event`` type and ``data`` lines joined."""

    id: str | None = None
    event: str = "message"
    data: list[str] = field(default_factory=list)


class SseDecoder:
    """Turn the lines of a ``text/event-stream`` into frames (comments are keep-alives)."""

    def __init__(self) -> None:
        self._frame = SseFrame()

    def feed(self, line: str) -> SseFrame | None:
        """Take one line (without its line break); return a frame when a blank line ends one."""
        if not line:
            frame, self._frame = self._frame, SseFrame()
            return frame if frame.data or frame.id is not None else None
        if line.startswith(":"):
            return None
        name, _, value = line.partition(":")
        value = value.removeprefix(" ")
        if name == "id":
            self._frame.id = value
        elif name == "event":
            self._frame.event = value
        elif name == "data":
            self._frame.data.append(value)
        return None


_WHOLE_VERSION = 1 << 62
"""The entry index past every entry: a bookmark's position, after a whole version."""


def parse_event_id(text: str) -> tuple[int, int] | None:
    """Return ``(version, index)`` of an event or bookmark id, None if it is neither."""
    version, dot, index = text.partition(".")
    if not (version.isascii() and version.isdigit()):
        return None
    if not dot:
        return int(version), _WHOLE_VERSION
    if index.isascii() and index.isdigit():
        return int(version), int(index)
    return None


class EventCursor:
    """Where an event stream stands: what to ask for on (re)connection, what to drop.

    Args:
        from_version: the first version to replay; None for live events only. A live-only
            cursor is pinned to a version by ``pin`` before it first connects, so a
            reconnection before the first event still misses nothing.
        last_event_id: resume right after this event id (e.g. one saved from an earlier run).
        filters: the server-side filters, as query parameters (see ``filter_params``).
    """

    def __init__(
        self,
        from_version: int | None = None,
        last_event_id: str | None = None,
        filters: dict[str, str] | None = None,
    ) -> None:
        self.from_version = from_version
        self.last_event_id = last_event_id
        self.filters = filters or {}
        self.pinned = False
        self._last = parse_event_id(last_event_id) if last_event_id else None
        if last_event_id is not None and self._last is None:
            raise ValueError(
                f"last_event_id {last_event_id!r} is not an event id (<version>.<index>) "
                "nor a bookmark (<version>)"
            )

    @property
    def needs_pin(self) -> bool:
        """Return True if the cursor does not know where it starts yet."""
        return self.from_version is None and self.last_event_id is None

    def pin(self, latest_version: int) -> None:
        """Start live: right after ``latest_version``."""
        self.from_version = latest_version + 1
        self.pinned = True

    def request(self) -> tuple[dict[str, str], dict[str, str]]:
        """Return the query parameters and headers of the next connection."""
        if self.last_event_id is not None:
            headers = {"Last-Event-ID": self.last_event_id, "Accept": "text/event-stream"}
            return dict(self.filters), headers
        params = {"from_version": str(self.from_version)} if self.from_version else {}
        return {**params, **self.filters}, {"Accept": "text/event-stream"}

    def accept(self, frame: SseFrame, url: str | None = None) -> CatalogEventMessage | None:
        """Return the frame's event, or None for a frame already delivered or not an event.

        A bookmark moves the position without an event. A subscriber cut off for being too
        slow takes the position the server gives and reconnects from there.

        Raises:
            CatalogApiError: an ``error`` frame (``CompactedError`` for VERSION_COMPACTED).
        """
        data = "\n".join(frame.data)
        if frame.event == "error":
            error = error_from_event(data, url)
            if error.code != "SUBSCRIBER_TOO_SLOW":
                raise error
            frame = SseFrame(id=str(json.loads(data).get("resume") or ""), event="bookmark")
        if frame.id is None:
            return None
        position = parse_event_id(frame.id)
        if position is None or (self._last is not None and position <= self._last):
            return None
        if frame.event == "bookmark":
            self._last, self.last_event_id = position, frame.id
            return None
        try:
            message = CatalogEventMessage.from_frame(frame.id, data)
        except (pydantic.ValidationError, ValueError, KeyError, StopIteration) as e:
            raise ResponseFormatError(
                BAD_RESPONSE, f"undecodable event {frame.id}: {e}", url=url
            ) from e
        self._last, self.last_event_id = position, frame.id
        return message


class Reconnects:
    """Bounded reconnection of an event stream: consecutive failures, with backoff.

    A connection that delivered an event, or stayed up for ``healthy_after_s``, resets the
    count, so a long-lived stream survives any number of spaced-out server restarts while
    a server that keeps refusing or dropping it makes the stream raise.
    """

    def __init__(self, policy: RetryPolicy, healthy_after_s: float = 10.0) -> None:
        self._policy = policy
        self._healthy_after_s = healthy_after_s
        self._reasons: list[str] = []

    def delivered(self) -> None:
        """Note that the stream delivered an event."""
        self._reasons.clear()

    def failed(self, reason: str, lived_s: float = 0.0) -> float:
        """Note a broken or refused connection; return the pause before the next one.

        Raises:
            UnreachableError: ``max_reconnects`` consecutive failures.
        """
        if lived_s >= self._healthy_after_s:
            self._reasons.clear()
        self._reasons.append(reason)
        if len(self._reasons) > self._policy.max_reconnects:
            raise UnreachableError(
                UNREACHABLE,
                f"event stream: gave up after {len(self._reasons)} failed connection(s): "
                + "; ".join(self._reasons[-3:]),
            )
        return self._policy.pause(len(self._reasons))


def stream_error_is_transient(error: CatalogApiError, cursor: EventCursor) -> bool:
    """Return True if a refused stream connection is worth retrying.

    A node that is starting or whose store is down may serve again soon; a node behind the
    version a live stream was pinned to (another node answered ``versions``) catches up.
    """
    if error.code in RETRYABLE_CODES:
        return True
    return isinstance(error, NotFoundError) and error.code == "VERSION_NOT_FOUND" and cursor.pinned


class StreamAttempts:
    """One event stream's connections, without I/O: both clients connect where it says.

    Each connection goes to the preferred base URL from the cursor's position; a refusal
    worth retrying, a broken connection or the end of the stream fail over to the next URL
    after a pause, until ``Reconnects`` gives up.
    """

    def __init__(self, cursor: EventCursor, failover: Failover, policy: RetryPolicy) -> None:
        self._cursor = cursor
        self._failover = failover
        self._reconnects = Reconnects(policy)
        self._decoder = SseDecoder()
        self._url = ""
        self._started = 0.0
        self._reason = ""

    def connect(self) -> tuple[str, dict[str, str], dict[str, str]]:
        """Return the address, query parameters and headers of the next connection."""
        self._url = self._failover.order(1)[0]
        self._started = time.monotonic()
        self._decoder = SseDecoder()
        self._reason = f"{self._url}: the stream ended"
        params, headers = self._cursor.request()
        return self._url + "/v1/events", params, headers

    def refused(self, response: httpx.Response) -> None:
        """Note a refused connection (its body read).

        Raises:
            CatalogApiError: a refusal that retrying cannot change.
        """
        error = error_from_response(response)
        if not stream_error_is_transient(error, self._cursor):
            raise error
        self._reason = f"{self._url}: {error}"

    def opened(self) -> None:
        """Note that the connection was accepted."""
        self._failover.answered(self._url)

    def feed(self, line: str) -> CatalogEventMessage | None:
        """Return the event a line of the stream completes, if any."""
        frame = self._decoder.feed(line)
        message = None if frame is None else self._cursor.accept(frame, self._url)
        if message is not None:
            self._reconnects.delivered()
        return message

    def broken(self, error: httpx.TransportError) -> None:
        """Note a connection that failed or broke.

        Raises:
            httpx.TransportError: ``error`` itself, when trying again cannot help.
        """
        if not is_retryable(error):
            raise error
        self._reason = describe(self._url, error)

    def pause(self) -> float:
        """Return the pause before the next connection.

        Raises:
            UnreachableError: too many failed connections in a row.
        """
        self._failover.failed(self._url)
        return self._reconnects.failed(self._reason, time.monotonic() - self._started)
