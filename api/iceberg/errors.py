"""Errors of the Iceberg routes, in the protocol's shape ``{"error": {message, type, code}}``.

::

    IcebergError                 one of the protocol's exception types and its status

Errors raised elsewhere (the catalog's, the log's, the API layer's) keep their stable codes;
``EXCEPTION_BY_CODE`` maps each code to the protocol's exception type and status, in one
table. Any code it does not name is answered by its HTTP status alone.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from fastapi import Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from starlette.exceptions import HTTPException as StarletteHTTPException

from api.iceberg.models import ErrorModel, IcebergErrorResponse
from api.server.errors import STATUS_BY_CODE, ApiCode, ApiError
from catalog.errors import CatalogError, ErrorCode
from schemasync.errors import SchemaSyncError
from updatelog.errors import UnknownOutcomeError, UpdateLogError

PREFIX = "/iceberg/"
"""Where the Iceberg routes are served; errors under it take the protocol's shape."""

NO_SUCH_NAMESPACE = "NoSuchNamespaceException"
NO_SUCH_TABLE = "NoSuchTableException"
ALREADY_EXISTS = "AlreadyExistsException"
NAMESPACE_NOT_EMPTY = "NamespaceNotEmptyException"
COMMIT_FAILED = "CommitFailedException"
COMMIT_STATE_UNKNOWN = "CommitStateUnknownException"
BAD_REQUEST = "BadRequestException"
NOT_AUTHORIZED = "NotAuthorizedException"
FORBIDDEN = "ForbiddenException"
SERVICE_UNAVAILABLE = "ServiceUnavailableException"

EXCEPTION_BY_CODE: dict[str, tuple[str, int]] = {
    ErrorCode.SCHEMA_NOT_FOUND: (NO_SUCH_NAMESPACE, 404),
    ErrorCode.TABLE_NOT_FOUND: (NO_SUCH_TABLE, 404),
    ErrorCode.SCHEMA_EXISTS: (ALREADY_EXISTS, 409),
    ErrorCode.TABLE_EXISTS: (ALREADY_EXISTS, 409),
    ErrorCode.INDEX_EXISTS: (ALREADY_EXISTS, 409),
    ErrorCode.COLUMN_EXISTS: (COMMIT_FAILED, 409),
    ErrorCode.COLUMN_NOT_FOUND: (COMMIT_FAILED, 409),
    ErrorCode.SCHEMA_NOT_EMPTY: (NAMESPACE_NOT_EMPTY, 409),
    ErrorCode.VALIDATION_ERROR: (BAD_REQUEST, 400),
    ErrorCode.UNSUPPORTED_CHANGE: (BAD_REQUEST, 400),
    ErrorCode.TOO_MANY_COLUMNS: (BAD_REQUEST, 400),
    ErrorCode.REQUEST_ID_REUSED: (BAD_REQUEST, 400),
    ErrorCode.CONCURRENT_UPDATE: (SERVICE_UNAVAILABLE, 503),
    ErrorCode.PRECONDITION_FAILED: (COMMIT_FAILED, 409),
    ErrorCode.NODE_STOPPING: (SERVICE_UNAVAILABLE, 503),
    ApiCode.MALFORMED_REQUEST: (BAD_REQUEST, 400),
    ApiCode.UNKNOWN_PARAMETER: (BAD_REQUEST, 400),
    ApiCode.UNSUPPORTED_MEDIA_TYPE: (BAD_REQUEST, 400),
    ApiCode.UNAUTHENTICATED: (NOT_AUTHORIZED, 401),
    ApiCode.FORBIDDEN: (FORBIDDEN, 403),
    ApiCode.NOT_READY: (SERVICE_UNAVAILABLE, 503),
    ApiCode.TOO_MANY_REQUESTS: (SERVICE_UNAVAILABLE, 503),
}
"""The protocol's exception type and status for each stable error code."""

_TYPE_BY_STATUS = {
    400: BAD_REQUEST,
    401: NOT_AUTHORIZED,
    403: FORBIDDEN,
    404: "NotFoundException",
    405: "MethodNotAllowedException",
    409: COMMIT_FAILED,
    413: BAD_REQUEST,
    422: BAD_REQUEST,
    503: SERVICE_UNAVAILABLE,
}

ERROR_STATUSES = (400, 401, 403, 404, 409, 503)
"""The statuses every Iceberg route documents."""


class IcebergError(Exception):
    """An error of the Iceberg routes, with the protocol's exception type and status."""

    def __init__(self, type_: str, status: int, message: str) -> None:
        super().__init__(message)
        self.type = type_
        self.status = status
        self.message = message


def bad_request(message: str) -> IcebergError:
    """Return a 400 ``BadRequestException`` saying ``message``."""
    return IcebergError(BAD_REQUEST, 400, message)


def commit_failed(message: str) -> IcebergError:
    """Return a 409 ``CommitFailedException`` saying ``message``."""
    return IcebergError(COMMIT_FAILED, 409, message)


def error_response(type_: str, status: int, message: str) -> JSONResponse:
    """Return the protocol's error answer."""
    body = IcebergErrorResponse(error=ErrorModel(message=message, type=type_, code=status))
    headers = {"WWW-Authenticate": 'Bearer realm="catalog"'} if status == 401 else None
    return JSONResponse(body.model_dump(by_alias=True), status_code=status, headers=headers)


def _by_code(code: str, message: str) -> JSONResponse:
    found = EXCEPTION_BY_CODE.get(code)
    if found is None:
        status = STATUS_BY_CODE.get(code, 500)
        found = (_TYPE_BY_STATUS.get(status, SERVICE_UNAVAILABLE), status)
    return error_response(found[0], found[1], message)


def iceberg_error(e: Exception) -> JSONResponse:
    """Return the protocol's answer to ``e``, raised while serving an Iceberg route."""
    if isinstance(e, IcebergError):
        return error_response(e.type, e.status, e.message)
    if isinstance(e, UnknownOutcomeError):
        return error_response(
            COMMIT_STATE_UNKNOWN, 500, f"{e.message}; the change may or may not have been made"
        )
    if isinstance(e, CatalogError | UpdateLogError | SchemaSyncError | ApiError):
        return _by_code(str(e.code), e.message)
    if isinstance(e, RequestValidationError):
        return error_response(BAD_REQUEST, 400, _validation_message(e))
    if isinstance(e, StarletteHTTPException):
        status = e.status_code
        return error_response(_TYPE_BY_STATUS.get(status, BAD_REQUEST), status, str(e.detail))
    return error_response(
        "InternalServerError", 500, f"internal error ({type(e).__name__}); see the server log"
    )


async def on_iceberg_error(_: Request, e: Exception) -> JSONResponse:
    """Answer an ``IcebergError`` (only the Iceberg routes raise one)."""
    return iceberg_error(e)


def _validation_message(e: RequestValidationError) -> str:
    problems = []
    for err in e.errors():
        where = ".".join(str(p) for p in err.get("loc", ()))
        problems.append(f"{where}: {err.get('msg', 'invalid')}" if where else str(err.get("msg")))
    return "invalid request: " + ("; ".join(problems[:3]) or "malformed body")


Handler = Callable[[Request, Exception], Awaitable[Response]]


def answering_iceberg_errors(handler: Handler) -> Handler:
    """Return ``handler`` answering errors of the Iceberg routes in the protocol's shape."""

    async def handle(request: Request, e: Exception) -> Response:
        if request.url.path.startswith(PREFIX):
            return iceberg_error(e)
        return await handler(request, e)

    return handle


def documented_errors() -> dict[int | str, dict[str, Any]]:
    """Return OpenAPI ``responses`` documenting the protocol's error answers."""
    return {status: {"model": IcebergErrorResponse} for status in ERROR_STATUSES}
