"""``check_request``: what every operation refuses before it reads its parameters and body.

A query parameter the operation does not take (a typo, ``?timeout_s=`` where the operation
has no timeout) is refused with 400 ``UNKNOWN_PARAMETER`` naming it and the ones accepted,
instead of being silently ignored; a body that is not JSON is refused with 415
``UNSUPPORTED_MEDIA_TYPE`` instead of a validation error about its shape.

The Iceberg REST routes check the body only (``check_body``): the protocol grows query
parameters that a server must ignore when it does not know them.
"""

from __future__ import annotations

from email.message import Message

from fastapi import Request
from fastapi.dependencies.models import Dependant
from fastapi.routing import APIRoute

from api.server.errors import ApiError
from api.wire.codes import Code

_ACCEPTED: dict[int, frozenset[str]] = {}
"""Each route's query parameter names (by route identity: routes live as long as the app)."""


async def check_request(request: Request) -> None:
    """Refuse unknown query parameters and bodies that are not JSON (see the module doc).

    A coroutine although it awaits nothing: FastAPI runs a plain function dependency on a
    worker thread, a hop per request that halved the requests/s of a table read.

    Raises:
        ApiError: UNKNOWN_PARAMETER or UNSUPPORTED_MEDIA_TYPE.
    """
    route = request.scope.get("route")
    if not isinstance(route, APIRoute):
        return
    _check_query(request, route)
    _check_body(request, route)


async def check_body(request: Request) -> None:
    """Refuse a body that is not JSON; any query parameter is let through (module doc).

    Raises:
        ApiError: UNSUPPORTED_MEDIA_TYPE.
    """
    route = request.scope.get("route")
    if isinstance(route, APIRoute):
        _check_body(request, route)


def _path(request: Request, route: APIRoute) -> str:
    # A mounted sub-application's routes are named by their full path (``/iceberg/v1/...``).
    root = request.scope.get("root_path", "")
    return str(root[len(request.scope.get("app_root_path", root)) :] + route.path)


def _check_query(request: Request, route: APIRoute) -> None:
    accepted = _ACCEPTED.get(id(route))
    if accepted is None:
        accepted = _ACCEPTED[id(route)] = frozenset(_query_names(route.dependant))
    path = _path(request, route)
    unknown = sorted(set(request.query_params) - accepted)
    if unknown:
        named = ", ".join(repr(name) for name in unknown)
        takes = ", ".join(sorted(accepted)) if accepted else "no query parameters"
        raise ApiError(
            Code.UNKNOWN_PARAMETER,
            f"{request.method} {path} does not take {named}; it takes {takes}",
        )


def _check_body(request: Request, route: APIRoute) -> None:
    path = _path(request, route)
    if route.body_field is not None and request.method in ("POST", "PUT", "PATCH"):
        content_type = request.headers.get("content-type")
        if content_type is not None and not _is_json(content_type):
            raise ApiError(
                Code.UNSUPPORTED_MEDIA_TYPE,
                f"{request.method} {path} takes a JSON body (Content-Type: "
                f"application/json), not {content_type.split(';')[0].strip() or 'an empty type'}",
            )


def _query_names(dependant: Dependant) -> set[str]:
    """Return the query parameter names of ``dependant`` and of everything it depends on."""
    names = {field.alias for field in dependant.query_params}
    for sub in dependant.dependencies:
        names |= _query_names(sub)
    return names


def _is_json(content_type: str) -> bool:
    message = Message()
    message["content-type"] = content_type
    subtype = message.get_content_subtype()
    return message.get_content_maintype() == "application" and (
        subtype == "json" or subtype.endswith("+json")
    )
