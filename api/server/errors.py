"""Errors as ``application/problem+json`` (RFC 9457), with the domain's stable ``code``.

One table maps every code to its HTTP status. Bad input is always a 4xx; a 5xx means the
node cannot serve (store down, corrupted store, a bug), never that the request was wrong.
"""

from __future__ import annotations

import enum
from dataclasses import asdict
from http import HTTPStatus
from typing import Any

from fastapi import Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from catalog.errors import CatalogError, ErrorCode
from schemasync.errors import SchemaSyncError, TimestampTooFarError
from updatelog.errors import (
    FormatError,
    SettingsMismatchError,
    StorageUnavailableError,
    StoreQuotaExceededError,
    UpdateLogError,
    UpdateTooLargeError,
    VersionConflictError,
)

PROBLEM_JSON = "application/problem+json"


class ApiCode(enum.StrEnum):
    """Codes of the API layer itself.

    The domain's codes are ``catalog.errors.ErrorCode``; the store's and the clock's are the
    ``code`` of their error classes. ``STATUS_BY_CODE`` gives each its HTTP status.
    """

    MALFORMED_REQUEST = "MALFORMED_REQUEST"
    UNKNOWN_PARAMETER = "UNKNOWN_PARAMETER"
    REQUEST_TOO_LARGE = "REQUEST_TOO_LARGE"
    TIMEOUT = "TIMEOUT"
    NOT_READY = "NOT_READY"
    NOT_FOUND = "NOT_FOUND"
    METHOD_NOT_ALLOWED = "METHOD_NOT_ALLOWED"
    UNSUPPORTED_MEDIA_TYPE = "UNSUPPORTED_MEDIA_TYPE"
    INTERNAL_ERROR = "INTERNAL_ERROR"
    UNAUTHENTICATED = "UNAUTHENTICATED"
    FORBIDDEN = "FORBIDDEN"
    HOST_NOT_ALLOWED = "HOST_NOT_ALLOWED"
    AUTH_DISABLED = "AUTH_DISABLED"
    TOO_MANY_COMMANDS = "TOO_MANY_COMMANDS"
    TOO_MANY_SUBSCRIBERS = "TOO_MANY_SUBSCRIBERS"
    SUBSCRIBER_TOO_SLOW = "SUBSCRIBER_TOO_SLOW"
    TOO_MANY_REQUESTS = "TOO_MANY_REQUESTS"


STATUS_BY_CODE: dict[str, int] = {
    ErrorCode.VALIDATION_ERROR: 422,
    ErrorCode.UNSUPPORTED_CHANGE: 422,
    ErrorCode.TOO_MANY_COLUMNS: 422,
    ErrorCode.SCHEMA_NOT_EMPTY: 409,
    ErrorCode.ZONE_IN_USE: 409,
    ErrorCode.INDEX_STATUS_CONFLICT: 409,
    ErrorCode.SCHEMA_NOT_FOUND: 404,
    ErrorCode.TABLE_NOT_FOUND: 404,
    ErrorCode.COLUMN_NOT_FOUND: 404,
    ErrorCode.INDEX_NOT_FOUND: 404,
    ErrorCode.ZONE_NOT_FOUND: 404,
    ErrorCode.VERSION_NOT_FOUND: 404,
    ErrorCode.SCHEMA_EXISTS: 409,
    ErrorCode.TABLE_EXISTS: 409,
    ErrorCode.COLUMN_EXISTS: 409,
    ErrorCode.INDEX_EXISTS: 409,
    ErrorCode.ZONE_EXISTS: 409,
    ErrorCode.CONCURRENT_UPDATE: 503,
    ErrorCode.PRECONDITION_FAILED: 409,
    ErrorCode.PRIMARY_KEY_VIOLATION: 409,
    ErrorCode.VERSION_COMPACTED: 410,
    ErrorCode.REQUEST_ID_REUSED: 422,
    ErrorCode.NODE_STOPPING: 503,
    TimestampTooFarError.code: 422,
    StorageUnavailableError.code: 503,
    FormatError.code: 503,
    SettingsMismatchError.code: 503,
    VersionConflictError.code: 409,
    UpdateTooLargeError.code: 413,
    StoreQuotaExceededError.code: 507,
    ApiCode.MALFORMED_REQUEST: 400,
    ApiCode.UNKNOWN_PARAMETER: 400,
    ApiCode.REQUEST_TOO_LARGE: 413,
    ApiCode.TIMEOUT: 504,
    ApiCode.NOT_READY: 503,
    ApiCode.NOT_FOUND: 404,
    ApiCode.METHOD_NOT_ALLOWED: 405,
    ApiCode.UNSUPPORTED_MEDIA_TYPE: 415,
    ApiCode.INTERNAL_ERROR: 500,
    ApiCode.UNAUTHENTICATED: 401,
    ApiCode.FORBIDDEN: 403,
    ApiCode.HOST_NOT_ALLOWED: 403,
    ApiCode.AUTH_DISABLED: 409,
    ApiCode.TOO_MANY_COMMANDS: 413,
    ApiCode.TOO_MANY_SUBSCRIBERS: 503,
    ApiCode.TOO_MANY_REQUESTS: 429,
    ApiCode.SUBSCRIBER_TOO_SLOW: 503,  # only ever in an event stream's error frame
}
"""Every code the API answers with, and its HTTP status (unknown codes answer 500)."""

RETRYABLE = {
    ErrorCode.CONCURRENT_UPDATE,
    ErrorCode.NODE_STOPPING,
    StorageUnavailableError.code,
    ApiCode.NOT_READY,
    ApiCode.TIMEOUT,
    ApiCode.TOO_MANY_SUBSCRIBERS,
    ApiCode.TOO_MANY_REQUESTS,
}


class ApiError(Exception):
    """An error raised by the API layer with one of the codes above."""

    def __init__(self, code: str, message: str, *, details: list[dict[str, Any]] | None = None):
        super().__init__(message)
        self.code = code
        self.message = message
        self.details = details or []


def problem_responses(*statuses: int) -> dict[int | str, dict[str, Any]]:
    """Return OpenAPI ``responses`` documenting problem+json answers with these statuses."""
    from api.wire.models import (
        Problem,  # the models module imports the catalog; keep this one light
    )

    return {status: {"model": Problem, "content": {PROBLEM_JSON: {}}} for status in statuses}


def problem(
    code: str,
    detail: str,
    *,
    errors: list[dict[str, Any]] | None = None,
    status: int | None = None,
    extra: dict[str, Any] | None = None,
) -> JSONResponse:
    """Return a problem+json response for ``code`` (with ``extra`` members, if any)."""
    status = status or STATUS_BY_CODE.get(code, 500)
    body: dict[str, Any] = {
        "type": f"urn:event-catalog:error:{code}",
        "title": HTTPStatus(status).phrase,
        "status": status,
        "code": code,
        "detail": detail,
    }
    if errors:
        body["errors"] = errors
    body.update(extra or {})
    headers = {"Retry-After": "1"} if code in RETRYABLE else None
    if code == ApiCode.UNAUTHENTICATED:
        headers = {"WWW-Authenticate": 'Bearer realm="catalog"'}
    return JSONResponse(body, status_code=status, media_type=PROBLEM_JSON, headers=headers)


def _json_safe(details: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{k: v for k, v in d.items() if k in ("loc", "msg", "type")} for d in details]


async def on_catalog_error(_: Request, e: Exception) -> JSONResponse:
    """Map a domain error to its status; a refused statement of a batch is named."""
    assert isinstance(e, CatalogError)
    details = getattr(e, "details", None) or None
    detail, position = e.message, e.position
    if position is not None and not detail.startswith("statement "):
        detail = f"statement {position.statement}: {detail}"
    located = {} if position is None else asdict(position)
    return problem(
        str(e.code),
        detail,
        errors=_json_safe(details) if details else None,
        extra={k: v for k, v in located.items() if v is not None},
    )


async def on_log_error(_: Request, e: Exception) -> JSONResponse:
    """Map an update-log error (store down, corrupted value) to its status."""
    assert isinstance(e, UpdateLogError)
    return problem(e.code, e.message)


async def on_schema_sync_error(_: Request, e: Exception) -> JSONResponse:
    """Map a schema-sync error (e.g. a timestamp too far ahead) to its status."""
    assert isinstance(e, SchemaSyncError)
    return problem(e.code, e.message)


async def on_api_error(_: Request, e: Exception) -> JSONResponse:
    """Map an API-layer error to its status."""
    assert isinstance(e, ApiError)
    return problem(e.code, e.message, errors=e.details or None)


async def on_request_validation(_: Request, e: Exception) -> JSONResponse:
    """Map FastAPI's validation errors: malformed JSON → 400, anything else → 422."""
    assert isinstance(e, RequestValidationError)
    errors: list[dict[str, Any]] = []
    for err in e.errors():
        loc = [str(p) for p in err.get("loc", ())]
        cause = err.get("ctx", {}).get("error") if isinstance(err.get("ctx"), dict) else None
        if isinstance(cause, CatalogError):
            # A command refused its own shape: show its located problems, not a wrapper.
            nested = getattr(cause, "details", None) or [{"loc": [], "msg": cause.message}]
            errors += [
                {
                    "loc": loc + [str(p) for p in d.get("loc", [])],
                    "msg": str(d.get("msg")),
                    "type": "value_error",
                }
                for d in nested
            ]
        else:
            errors.append(
                {"loc": loc, "msg": str(err.get("msg", "")), "type": str(err.get("type", ""))}
            )
    if any(err["type"] == "json_invalid" for err in errors):
        return problem(
            ApiCode.MALFORMED_REQUEST, "the request body is not valid JSON", errors=errors
        )
    first = errors[0] if errors else {"loc": [], "msg": "invalid request"}
    where = ".".join(first["loc"])
    detail = f"invalid request: {where + ': ' if where else ''}{first['msg']}"
    if len(errors) > 1:
        detail += f" (and {len(errors) - 1} more problem(s))"
    return problem(ErrorCode.VALIDATION_ERROR, detail, errors=errors)


async def on_http_error(_: Request, e: Exception) -> JSONResponse:
    """Map routing errors (unknown path, wrong method) to problem+json."""
    assert isinstance(e, StarletteHTTPException)
    code = {
        404: ApiCode.NOT_FOUND,
        405: ApiCode.METHOD_NOT_ALLOWED,
        415: ApiCode.UNSUPPORTED_MEDIA_TYPE,
    }.get(
        e.status_code, ApiCode.MALFORMED_REQUEST if e.status_code < 500 else ApiCode.INTERNAL_ERROR
    )
    return problem(code, str(e.detail), status=e.status_code)


async def on_unexpected(_: Request, e: Exception) -> JSONResponse:
    """A bug: answer 500 without leaking internals (the traceback goes to the log)."""
    return problem(
        ApiCode.INTERNAL_ERROR, f"internal error ({type(e).__name__}); see the server log"
    )
