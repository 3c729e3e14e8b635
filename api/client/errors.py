"""Errors the catalog client raises.

::

    CatalogApiError                  code, status, detail (from the server's problem+json)
    ├── InvalidRequestError          400, 405, 413, 415, 422: VALIDATION_ERROR, MALFORMED_REQUEST,
    │                                UNSUPPORTED_CHANGE, TIMESTAMP_IN_FUTURE, ...
    ├── NotFoundError                404: TABLE_NOT_FOUND, VERSION_NOT_FOUND, NOT_FOUND, ...
    ├── ConflictError                409: SCHEMA_NOT_EMPTY, ZONE_IN_USE, INDEX_STATUS_CONFLICT,
    │                                PRECONDITION_FAILED, PRIMARY_KEY_VIOLATION
    │   └── AlreadyExistsError       409: TABLE_EXISTS, SCHEMA_EXISTS, ...
    ├── CompactedError               410, or an ``error`` event: VERSION_COMPACTED
    ├── UnavailableError             503: STORAGE_UNAVAILABLE, NOT_READY, CONCURRENT_UPDATE, ...
    ├── WaitTimeoutError             504: TIMEOUT (the server's own wait ran out)
    ├── ServerError                  500 and any other status: INTERNAL_ERROR, ...
    ├── EventStreamError             an ``error`` event other than VERSION_COMPACTED
    ├── ResponseFormatError          a 2xx body that is not the documented shape
    └── UnreachableError             no base URL answered within the retries (no status)

The class follows the server's ``code`` where the registry (``api.wire.codes``) knows it and
the answer has the code's own status, and the HTTP status otherwise, so ``except
NotFoundError`` works whatever the exact code; ``e.code`` is the stable string
(``TABLE_NOT_FOUND``), equal to the ``api.wire.codes.Code`` member of the same name.

The client does not re-raise ``catalog.errors`` types: it has failures the domain does not
(unreachable, malformed responses, HTTP-only codes), and keeping one root lets a caller catch
everything the client raises with ``except CatalogApiError``.
"""

from __future__ import annotations

import json
from typing import Any

import httpx

from api.wire.codes import ClientClass, Code, code_of

UNREACHABLE = "UNREACHABLE"
BAD_RESPONSE = "BAD_RESPONSE"


class CatalogApiError(Exception):
    """Root of every error the catalog client raises.

    Attributes:
        code: the server's stable error code (``TABLE_EXISTS``), or a client code
            (``UNREACHABLE``, ``BAD_RESPONSE``).
        status: the HTTP status, None when no response was received.
        detail: the human-readable explanation.
        errors: per-field problems for validation errors (``{"loc", "msg", "type"}``).
        url: the URL of the request that failed, when known.
        statement: the refused statement of a batch (1-based), when the server named one.
        line: the line that statement starts on in the SQL text, when there was a text.
        column: its column on that line.
    """

    def __init__(
        self,
        code: str,
        detail: str,
        *,
        status: int | None = None,
        errors: list[dict[str, Any]] | None = None,
        url: str | None = None,
    ) -> None:
        super().__init__(detail)
        self.code = code
        self.status = status
        self.detail = detail
        self.errors = errors or []
        self.url = url
        self.statement: int | None = None
        self.line: int | None = None
        self.column: int | None = None

    def __str__(self) -> str:
        status = f" {self.status}" if self.status is not None else ""
        return f"[{self.code}{status}] {self.detail}"


class InvalidRequestError(CatalogApiError):
    """The request was refused as invalid (bad input, unsupported change, bad JSON)."""


class NotFoundError(CatalogApiError):
    """A named object or a version does not exist."""


class ConflictError(CatalogApiError):
    """The change conflicts with the current catalog."""


class AlreadyExistsError(ConflictError):
    """An object with that name already exists."""


class CompactedError(CatalogApiError):
    """The version asked for (or an event stream's resume point) was compacted."""


class UnavailableError(CatalogApiError):
    """The server cannot serve now (store down, node starting, conflict storm); retry later."""


class WaitTimeoutError(CatalogApiError):
    """A wait the server was asked to do (``wait_ready``) ran out of time."""


class ServerError(CatalogApiError):
    """The server failed (a bug, or a status the API does not document)."""


class EventStreamError(CatalogApiError):
    """The event stream ended with an ``error`` event."""


class ResponseFormatError(CatalogApiError):
    """A successful response did not have the documented shape."""


class UnreachableError(CatalogApiError):
    """No base URL answered (connection refused, timeouts, dropped connections)."""


_BY_STATUS: dict[int, type[CatalogApiError]] = {
    400: InvalidRequestError,
    404: NotFoundError,
    405: InvalidRequestError,
    409: ConflictError,
    410: CompactedError,
    413: InvalidRequestError,
    415: InvalidRequestError,
    422: InvalidRequestError,
    503: UnavailableError,
    504: WaitTimeoutError,
}


_CLASSES: dict[ClientClass, type[CatalogApiError]] = {
    ClientClass.INVALID_REQUEST: InvalidRequestError,
    ClientClass.NOT_FOUND: NotFoundError,
    ClientClass.CONFLICT: ConflictError,
    ClientClass.ALREADY_EXISTS: AlreadyExistsError,
    ClientClass.COMPACTED: CompactedError,
    ClientClass.UNAVAILABLE: UnavailableError,
    ClientClass.WAIT_TIMEOUT: WaitTimeoutError,
    ClientClass.SERVER: ServerError,
}

CLASS_BY_CODE: dict[str, type[CatalogApiError]] = {code: _CLASSES[code.client] for code in Code}
"""The class each registered code raises, when the answer has the code's own status."""


def error_class(code: str, status: int | None) -> type[CatalogApiError]:
    """Return the error class for a server ``code`` and HTTP ``status``.

    ``status`` is None for an event stream's ``error`` frame: it is an ``EventStreamError``,
    unless its code says the resume point was compacted.
    """
    registered = code_of(code)
    if status is None:
        compacted = registered is not None and registered.client is ClientClass.COMPACTED
        return CompactedError if compacted else EventStreamError
    if registered is not None and registered.status == status:
        return CLASS_BY_CODE[registered]
    return _BY_STATUS.get(status, ServerError)


def error_from_response(response: httpx.Response) -> CatalogApiError:
    """Build the typed error for a non-2xx response (problem+json, or anything else)."""
    status = response.status_code
    url = str(response.request.url)
    try:
        body: Any = json.loads(response.content)
    except ValueError:
        body = None
    if isinstance(body, dict) and isinstance(body.get("code"), str):
        errors = body.get("errors")
        error = error_class(body["code"], status)(
            body["code"],
            str(body.get("detail") or body.get("title") or ""),
            status=status,
            errors=errors if isinstance(errors, list) else None,
            url=url,
        )
        where = [body.get(k) for k in ("statement", "line", "column")]
        error.statement, error.line, error.column = (v if type(v) is int else None for v in where)
        return error
    text = response.text.strip()[:200] or response.reason_phrase
    return error_class(f"HTTP_{status}", status)(f"HTTP_{status}", text, status=status, url=url)


def error_from_event(data: str, url: str | None = None) -> CatalogApiError:
    """Build the typed error an ``event: error`` frame announces."""
    try:
        body: Any = json.loads(data)
    except ValueError:
        body = None
    if not isinstance(body, dict):
        return EventStreamError("EVENT_STREAM_ERROR", data, url=url)
    code = str(body.get("code") or "EVENT_STREAM_ERROR")
    return error_class(code, None)(code, str(body.get("detail") or ""), url=url)
