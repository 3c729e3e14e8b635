"""Path parameters of the Iceberg routes, the endpoint list, and paging of name lists.

A namespace in a path is its levels joined by the unit separator (``%1F``); the catalog's
namespaces are its schemas, one level each, so a path of several levels names none.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import Path

from catalog.errors import ErrorCode, NotFoundError

NAMESPACE_SEPARATOR = "\x1f"

NamespacePath = Annotated[
    str, Path(min_length=1, max_length=1000, description="A schema's exact name.")
]
TablePath = Annotated[str, Path(min_length=1, max_length=1000, description="A table's exact name.")]

ENDPOINTS = (
    "GET /v1/{prefix}/namespaces",
    "POST /v1/{prefix}/namespaces",
    "GET /v1/{prefix}/namespaces/{namespace}",
    "HEAD /v1/{prefix}/namespaces/{namespace}",
    "DELETE /v1/{prefix}/namespaces/{namespace}",
    "POST /v1/{prefix}/namespaces/{namespace}/properties",
    "GET /v1/{prefix}/namespaces/{namespace}/tables",
    "POST /v1/{prefix}/namespaces/{namespace}/tables",
    "GET /v1/{prefix}/namespaces/{namespace}/tables/{table}",
    "HEAD /v1/{prefix}/namespaces/{namespace}/tables/{table}",
    "POST /v1/{prefix}/namespaces/{namespace}/tables/{table}",
    "DELETE /v1/{prefix}/namespaces/{namespace}/tables/{table}",
    "POST /v1/{prefix}/tables/rename",
)
"""The protocol's endpoints this server implements, as ``GET /v1/config`` lists them."""


def schema_name(namespace: str) -> str:
    """Return the schema a namespace path names.

    Raises:
        NotFoundError: SCHEMA_NOT_FOUND for a namespace of several levels.
    """
    if NAMESPACE_SEPARATOR in namespace:
        shown = ".".join(namespace.split(NAMESPACE_SEPARATOR))
        raise NotFoundError(
            f"namespace {shown} not found: the catalog's namespaces are its schemas, one level",
            code=ErrorCode.SCHEMA_NOT_FOUND,
        )
    return namespace


def page(names: list[str], token: str | None, size: int | None) -> tuple[list[str], str | None]:
    """Return one page of sorted ``names`` after ``token``, and the next page's token.

    The token is the last name of the page before, so a page stays right while names are
    created or dropped.
    """
    rest = [n for n in names if token is None or n > token]
    if size is None or len(rest) <= size:
        return rest, None
    return rest[:size], rest[size - 1]
