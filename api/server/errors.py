"""Errors as ``application/problem+json`` (RFC 9457), with the domain's stable ``code``.

Each code's HTTP status comes from the one registry, ``api.wire.codes``. Bad input is always a
4xx; a 5xx means the node cannot serve (store down, corrupted store, a bug), never that the
request was wrong.
"""

from __future__ import annotations

from dataclasses import asdict
from http import HTTPStatus
from typing import Any

from fastapi import Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from api.wire.codes import Code, Retry, code_of
from catalog.errors import CatalogError
from schemasync.errors import SchemaSyncError
from updatelog.errors import UpdateLogError

PROBLEM_JSON = "application/problem+json"


class ApiError(Exception):
    """An error raised by the API layer with one of its codes (a ``Code``)."""

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
    registered = code_of(code)
    status = status or (registered.status if registered is not None else 500)
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
    retry = registered is not None and registered.retry is not Retry.NEVER
    headers = {"Retry-After": "1"} if retry else None
    if code == Code.UNAUTHENTICATED:
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
        return problem(Code.MALFORMED_REQUEST, "the request body is not valid JSON", errors=errors)
    first = errors[0] if errors else {"loc": [], "msg": "invalid request"}
    where = ".".join(first["loc"])
    detail = f"invalid request: {where + ': ' if where else ''}{first['msg']}"
    if len(errors) > 1:
        detail += f" (and {len(errors) - 1} more problem(s))"
    return problem(Code.VALIDATION_ERROR, detail, errors=errors)


async def on_http_error(_: Request, e: Exception) -> JSONResponse:
    """Map routing errors (unknown path, wrong method) to problem+json."""
    assert isinstance(e, StarletteHTTPException)
    code = {
        404: Code.NOT_FOUND,
        405: Code.METHOD_NOT_ALLOWED,
        415: Code.UNSUPPORTED_MEDIA_TYPE,
    }.get(e.status_code, Code.MALFORMED_REQUEST if e.status_code < 500 else Code.INTERNAL_ERROR)
    return problem(code, str(e.detail), status=e.status_code)


async def on_unexpected(_: Request, e: Exception) -> JSONResponse:
    """A bug: answer 500 without leaking internals (the traceback goes to the log)."""
    return problem(Code.INTERNAL_ERROR, f"internal error ({type(e).__name__}); see the server log")
