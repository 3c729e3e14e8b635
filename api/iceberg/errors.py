"""Errors of the Iceberg routes, in the protocol's shape ``{"error": {message, type, code}}``.

::

    IcebergError                 one of the protocol's exception types and its status

Errors raised elsewhere (the catalog's, the log's, the API layer's) keep their stable codes;
each code's exception type and status come from the one registry, ``api.wire.codes``.
"""

from __future__ import annotations

from typing import Any

import pydantic
from fastapi import Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from api.iceberg.models import ErrorModel, IcebergErrorResponse
from api.server.errors import ApiError
from api.wire.codes import Code, IcebergType, Retry, code_of
from catalog.errors import CatalogError
from schemasync.errors import SchemaSyncError
from updatelog.errors import UnknownOutcomeError, UpdateLogError

_TYPE_BY_HTTP_STATUS = {
    400: IcebergType.BAD_REQUEST,
    401: IcebergType.NOT_AUTHORIZED,
    403: IcebergType.FORBIDDEN,
    404: IcebergType.NOT_FOUND,
    405: IcebergType.METHOD_NOT_ALLOWED,
    406: IcebergType.UNSUPPORTED_OPERATION,
    409: IcebergType.COMMIT_FAILED,
    413: IcebergType.BAD_REQUEST,
    422: IcebergType.BAD_REQUEST,
    429: IcebergType.TOO_MANY_REQUESTS,
    503: IcebergType.SERVICE_UNAVAILABLE,
}
"""The exception type of a routing error (unknown path, wrong method), which has a status and
no code; a code's own type is in the registry."""

ERROR_STATUSES = (400, 401, 403, 404, 406, 409, 429, 503)
"""The statuses every Iceberg route documents."""


class IcebergError(Exception):
    """An error of the Iceberg routes, with the protocol's exception type and status."""

    def __init__(self, type_: str, status: int, message: str, *, retry: bool = False) -> None:
        super().__init__(message)
        self.type = type_
        self.status = status
        self.message = message
        self.retry = retry
        """Nothing was written: answered with ``Retry-After``, so a client sends it again."""


def bad_request(message: str) -> IcebergError:
    """Return a 400 ``BadRequestException`` saying ``message``."""
    return IcebergError(IcebergType.BAD_REQUEST, 400, message)


def malformed(what: str, error: pydantic.ValidationError) -> IcebergError:
    """Return a 400 saying what cannot be read: ``what``, then pydantic's first problem."""
    first = error.errors()[0]
    where = ".".join(str(p) for p in first["loc"])
    return bad_request(f"{what}: {where}: {first['msg']}")


def unsupported(message: str) -> IcebergError:
    """Return a 406 ``UnsupportedOperationException``: the protocol has it, this catalog not."""
    return IcebergError(IcebergType.UNSUPPORTED_OPERATION, 406, message)


def commit_failed(message: str) -> IcebergError:
    """Return a 409 ``CommitFailedException`` saying ``message``."""
    return IcebergError(IcebergType.COMMIT_FAILED, 409, message)


def unavailable(message: str) -> IcebergError:
    """Return a 503 ``ServiceUnavailableException`` of a request that wrote nothing.

    It is answered with ``Retry-After``: the client may send the request again.
    """
    return IcebergError(IcebergType.SERVICE_UNAVAILABLE, 503, message, retry=True)


def error_response(type_: str, status: int, message: str, *, retry: bool = False) -> JSONResponse:
    """Return the protocol's error answer (with ``Retry-After`` when ``retry``)."""
    body = IcebergErrorResponse(error=ErrorModel(message=message, type=type_, code=status))
    headers = {"Retry-After": "1"} if retry else None
    if status == 401:
        headers = {"WWW-Authenticate": 'Bearer realm="catalog"'}
    return JSONResponse(body.model_dump(by_alias=True), status_code=status, headers=headers)


def _by_code(code: str, message: str) -> JSONResponse:
    registered = code_of(code)
    if registered is None:
        return error_response(IcebergType.SERVICE_UNAVAILABLE, 500, message)
    # The spec lets a client send a request again on 503 only with Retry-After.
    retry = registered.retry is not Retry.NEVER
    return error_response(registered.iceberg, registered.iceberg_status, message, retry=retry)


def iceberg_error(e: Exception) -> JSONResponse:
    """Return the protocol's answer to ``e``, raised while serving an Iceberg route."""
    if isinstance(e, IcebergError):
        return error_response(e.type, e.status, e.message, retry=e.retry)
    if isinstance(e, UnknownOutcomeError):
        return error_response(
            IcebergType.COMMIT_STATE_UNKNOWN,
            500,
            f"{e.message}; the change may or may not have been made",
        )
    if isinstance(e, CatalogError | UpdateLogError | SchemaSyncError | ApiError):
        return _by_code(str(e.code), e.message)
    if isinstance(e, RequestValidationError):
        return error_response(IcebergType.BAD_REQUEST, 400, _validation_message(e))
    if isinstance(e, StarletteHTTPException):
        status = e.status_code
        type_ = _TYPE_BY_HTTP_STATUS.get(status, IcebergType.BAD_REQUEST)
        return error_response(type_, status, str(e.detail))
    return error_response(
        IcebergType.INTERNAL, 500, f"internal error ({type(e).__name__}); see the server log"
    )


async def on_iceberg_error(_: Request, e: Exception) -> JSONResponse:
    """Answer any error raised while serving the Iceberg sub-application, in its shape."""
    return iceberg_error(e)


def refusal(code: Code, message: str) -> JSONResponse:
    """Return the protocol's answer to a request the server refused before routing it."""
    return iceberg_error(ApiError(code, message))


def _validation_message(e: RequestValidationError) -> str:
    problems = []
    for err in e.errors():
        where = ".".join(str(p) for p in err.get("loc", ()))
        problems.append(f"{where}: {err.get('msg', 'invalid')}" if where else str(err.get("msg")))
    return "invalid request: " + ("; ".join(problems[:3]) or "malformed body")


def documented_errors() -> dict[int | str, dict[str, Any]]:
    """Return OpenAPI ``responses`` documenting the protocol's error answers."""
    return {status: {"model": IcebergErrorResponse} for status in ERROR_STATUSES}
