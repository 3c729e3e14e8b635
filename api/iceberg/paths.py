"""Path parameters of the Iceberg routes, what names resolve to, endpoints, paging of lists.

A namespace in a path is its levels joined by the unit separator (``%1F``); the catalog's
namespaces are its schemas, one level each, so a path of several levels names none.

A name in a path resolves to the object of that exact name or, when there is none, to the
one object whose name matches it ignoring case: Trino lower-cases every identifier
(``cat.public.orders`` must reach ``PUBLIC.ORDERS``), while PyIceberg and Spark send names
as written and always get the exact match. Two objects matching ignoring case and none
exactly is a 400 naming both, never a guess.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, TypeVar

from fastapi import Depends, Header, Path, Query

from api.iceberg.errors import bad_request
from api.iceberg.models import ListTablesResponse, TableIdentifier
from api.server.auth import require
from api.wire.roles import Role
from catalog.catalog import Catalog
from catalog.descriptors import SchemaDescriptor, SecurableKind, TableDescriptor, ViewDescriptor
from catalog.errors import AlreadyExistsError, ErrorCode, NotFoundError

_Named = TypeVar("_Named", TableDescriptor, ViewDescriptor)

NAMESPACE_SEPARATOR = "\x1f"

NamespacePath = Annotated[
    str,
    Path(
        min_length=1,
        max_length=1000,
        description="A schema's name (exact, or the only one matching it ignoring case).",
    ),
]
ViewPath = Annotated[
    str,
    Path(
        min_length=1,
        max_length=1000,
        description="A view's name (exact, or the only one matching it ignoring case).",
    ),
]
TablePath = Annotated[
    str,
    Path(
        min_length=1,
        max_length=1000,
        description="A table's name (exact, or the only one matching it ignoring case).",
    ),
]

ENDPOINTS = (
    "GET /v1/{prefix}/namespaces",
    "POST /v1/{prefix}/namespaces",
    "GET /v1/{prefix}/namespaces/{namespace}",
    "HEAD /v1/{prefix}/namespaces/{namespace}",
    "DELETE /v1/{prefix}/namespaces/{namespace}",
    "POST /v1/{prefix}/namespaces/{namespace}/properties",
    "GET /v1/{prefix}/namespaces/{namespace}/tables",
    "POST /v1/{prefix}/namespaces/{namespace}/tables",
    "POST /v1/{prefix}/namespaces/{namespace}/register",
    "GET /v1/{prefix}/namespaces/{namespace}/tables/{table}",
    "HEAD /v1/{prefix}/namespaces/{namespace}/tables/{table}",
    "POST /v1/{prefix}/namespaces/{namespace}/tables/{table}",
    "DELETE /v1/{prefix}/namespaces/{namespace}/tables/{table}",
    "POST /v1/{prefix}/namespaces/{namespace}/tables/{table}/metrics",
    "GET /v1/{prefix}/namespaces/{namespace}/tables/{table}/credentials",
    "POST /v1/{prefix}/namespaces/{namespace}/tables/{table}/sign",
    "POST /v1/{prefix}/tables/rename",
    "POST /v1/{prefix}/transactions/commit",
    "GET /v1/{prefix}/namespaces/{namespace}/views",
    "POST /v1/{prefix}/namespaces/{namespace}/views",
    "GET /v1/{prefix}/namespaces/{namespace}/views/{view}",
    "HEAD /v1/{prefix}/namespaces/{namespace}/views/{view}",
    "POST /v1/{prefix}/namespaces/{namespace}/views/{view}",
    "DELETE /v1/{prefix}/namespaces/{namespace}/views/{view}",
    "POST /v1/{prefix}/views/rename",
)
"""The protocol's endpoints this server implements, as ``GET /v1/config`` lists them (a test
checks them against the routes served)."""


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


Keep = Callable[[SecurableKind, int], bool]
"""Whether the caller may see an object (by kind and id): names resolve among those only."""


def resolve_schema(cat: Catalog, namespace: str, keep: Keep | None = None) -> SchemaDescriptor:
    """Return the schema a namespace path names, exactly or ignoring case (module doc).

    With ``keep``, only the schemas it keeps are looked at (those the caller may see), so a
    name is neither found nor ambiguous through one it may not.

    Raises:
        NotFoundError: SCHEMA_NOT_FOUND.
        IcebergError: 400 when several schemas match ignoring case and none exactly.
    """
    name = schema_name(namespace)
    exact = cat.find_schema(name)
    schema = SecurableKind.SCHEMA
    if exact is not None and (keep is None or keep(schema, exact.id)):
        return exact
    folded = name.casefold()
    matches = [
        s
        for s in cat.schemas()
        if s.name.casefold() == folded and (keep is None or keep(schema, s.id))
    ]
    if len(matches) == 1:
        return matches[0]
    if matches:
        raise _ambiguous(f"namespace {name}", [s.name for s in matches])
    raise NotFoundError(f"Namespace does not exist: {name}", code=ErrorCode.SCHEMA_NOT_FOUND)


def resolve_table(
    cat: Catalog, namespace: str, table: str, keep: Keep | None = None
) -> tuple[SchemaDescriptor, TableDescriptor]:
    """Return the table a namespace and table path name, and its schema (see the module doc).

    A table in a missing namespace is a missing table (Iceberg's ``NoSuchTableException``),
    as the protocol's table operations answer it.

    Raises:
        NotFoundError: TABLE_NOT_FOUND.
        IcebergError: 400 when several schemas or tables match ignoring case, none exactly.
    """
    return _resolve(
        cat,
        namespace,
        table,
        (cat.find_table, cat.schema_tables, SecurableKind.TABLE),
        "Table",
        ErrorCode.TABLE_NOT_FOUND,
        keep,
    )


def resolve_view(
    cat: Catalog, namespace: str, view: str, keep: Keep | None = None
) -> tuple[SchemaDescriptor, ViewDescriptor]:
    """Return the view a namespace and view path name, and its schema (as ``resolve_table``).

    Raises:
        NotFoundError: VIEW_NOT_FOUND.
        IcebergError: 400 when several schemas or views match ignoring case, none exactly.
    """
    return _resolve(
        cat,
        namespace,
        view,
        (cat.find_view, cat.schema_views, SecurableKind.VIEW),
        "View",
        ErrorCode.VIEW_NOT_FOUND,
        keep,
    )


def _resolve(
    cat: Catalog,
    namespace: str,
    name: str,
    kind: tuple[Callable[[str, str], _Named | None], Callable[[int], list[_Named]], SecurableKind],
    what: str,
    code: ErrorCode,
    keep: Keep | None,
) -> tuple[SchemaDescriptor, _Named]:
    """Resolve ``name`` in a namespace; ``kind`` is how to find, list and judge such objects."""
    find, listing, securable = kind
    try:
        schema = resolve_schema(cat, namespace, keep)
    except NotFoundError as e:
        shown = ".".join(namespace.split(NAMESPACE_SEPARATOR))
        raise NotFoundError(
            f"{what} does not exist: {shown}.{name} ({e.message})", code=code
        ) from e
    exact = find(schema.name, name)
    if exact is not None and (keep is None or keep(securable, exact.id)):
        return schema, exact
    folded = name.casefold()
    matches = [
        t
        for t in listing(schema.id)
        if t.name.casefold() == folded and (keep is None or keep(securable, t.id))
    ]
    if len(matches) == 1:
        return schema, matches[0]
    if matches:
        raise _ambiguous(f"{what.lower()} {schema.name}.{name}", [t.name for t in matches])
    raise NotFoundError(f"{what} does not exist: {schema.name}.{name}", code=code)


def refuse_view_name(cat: Catalog, schema: str, name: str, *, renaming: str | None = None) -> None:
    """Refuse a table name that a view holds, in the words Iceberg's clients expect.

    ``renaming`` is the qualified name of the table being renamed to ``name``, if it is one.

    Raises:
        AlreadyExistsError: VIEW_EXISTS.
    """
    if cat.find_view(schema, name) is None:
        return
    if renaming is not None:
        message = f"Cannot rename {renaming} to {schema}.{name}. View already exists"
    else:
        message = f"View with same name already exists: {schema}.{name}"
    raise AlreadyExistsError(message, code=ErrorCode.VIEW_EXISTS)


def _ambiguous(what: str, names: list[str]) -> Exception:
    shown = " and ".join(sorted(names))
    return bad_request(f"{what} is ambiguous: it matches {shown} ignoring case; name one exactly")


def named_page(
    schema: str, names: list[str], token: str | None, size: int | None
) -> ListTablesResponse:
    """Return one page of a schema's tables or views (``page``), as their identifiers."""
    shown, following = page(names, token, size)
    identifiers = [TableIdentifier(namespace=[schema], name=n) for n in shown]
    return ListTablesResponse(identifiers=identifiers, next_page_token=following)


def page(names: list[str], token: str | None, size: int | None) -> tuple[list[str], str | None]:
    """Return one page of sorted ``names`` after ``token``, and the next page's token.

    Without a token every name is answered (the protocol's rule: a client that does not
    page, sends no token; one that does, starts with an empty one). The token is the last
    name of the page before, so a page stays right while names are created or dropped;
    there is a next token only when names are left.
    """
    if token is None:
        return names, None
    rest = [n for n in names if n > token]
    if size is None or len(rest) <= size:
        return rest, None
    return rest[:size], rest[size - 1]


# Any signed-in caller: each route checks its grants on the objects it touches (``visibility``;
# a reader or writer holds them everywhere). Two lists, so the pinned routes tell changes apart.
READ = [Depends(require(Role.NONE))]
WRITE = [Depends(require(Role.NONE))]

PageToken = Annotated[str | None, Query(alias="pageToken", max_length=1000)]
PageSize = Annotated[int | None, Query(alias="pageSize", ge=1, le=10_000)]
AccessDelegation = Annotated[
    str | None,
    Header(
        alias="X-Iceberg-Access-Delegation",
        max_length=1000,
        description="For a warehouse on S3: vended-credentials (short-lived keys for the "
        "table's folders) or remote-signing (the catalog signs each request); a local "
        "warehouse needs neither.",
    ),
]
