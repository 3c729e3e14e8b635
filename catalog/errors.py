"""Errors raised by the catalog.

::

    CatalogError
    ├── ValidationError          VALIDATION_ERROR, UNSUPPORTED_CHANGE, SCHEMA_NOT_EMPTY,
    │                            ZONE_IN_USE, INDEX_STATUS_CONFLICT, PRIMARY_KEY_VIOLATION,
    │                            BACKUP_INVALID, ROLE_CYCLE, LAST_CATALOG_OWNER
    ├── NotFoundError            SCHEMA_NOT_FOUND, TABLE_NOT_FOUND, COLUMN_NOT_FOUND,
    │                            INDEX_NOT_FOUND, ZONE_NOT_FOUND, VERSION_NOT_FOUND,
    │                            VIEW_NOT_FOUND, PRINCIPAL_NOT_FOUND,
    │                            ROLE_NOT_FOUND, GRANT_NOT_FOUND
    ├── AlreadyExistsError       SCHEMA_EXISTS, TABLE_EXISTS, COLUMN_EXISTS, INDEX_EXISTS,
    │                            ZONE_EXISTS, VIEW_EXISTS, PRINCIPAL_EXISTS,
    │                            ROLE_EXISTS
    ├── ConcurrentUpdateError    CONCURRENT_UPDATE, PRECONDITION_FAILED
    ├── AccessDeniedError        FORBIDDEN
    ├── VersionCompactedError    VERSION_COMPACTED
    └── NodeStoppingError        NODE_STOPPING

Every error carries a stable machine-readable ``code`` (an ``ErrorCode``); the REST layer maps
codes to HTTP statuses in one table. Codes are never renamed or reused.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any


class ErrorCode(enum.StrEnum):
    """Stable error codes of the catalog domain."""

    VALIDATION_ERROR = "VALIDATION_ERROR"
    UNSUPPORTED_CHANGE = "UNSUPPORTED_CHANGE"
    TOO_MANY_COLUMNS = "TOO_MANY_COLUMNS"
    NESTED_TOO_DEEP = "NESTED_TOO_DEEP"
    SCHEMA_NOT_EMPTY = "SCHEMA_NOT_EMPTY"
    ZONE_IN_USE = "ZONE_IN_USE"
    INDEX_STATUS_CONFLICT = "INDEX_STATUS_CONFLICT"
    SCHEMA_NOT_FOUND = "SCHEMA_NOT_FOUND"
    TABLE_NOT_FOUND = "TABLE_NOT_FOUND"
    COLUMN_NOT_FOUND = "COLUMN_NOT_FOUND"
    INDEX_NOT_FOUND = "INDEX_NOT_FOUND"
    ZONE_NOT_FOUND = "ZONE_NOT_FOUND"
    SCHEMA_EXISTS = "SCHEMA_EXISTS"
    TABLE_EXISTS = "TABLE_EXISTS"
    COLUMN_EXISTS = "COLUMN_EXISTS"
    INDEX_EXISTS = "INDEX_EXISTS"
    ZONE_EXISTS = "ZONE_EXISTS"
    CONCURRENT_UPDATE = "CONCURRENT_UPDATE"
    VERSION_COMPACTED = "VERSION_COMPACTED"
    VERSION_NOT_FOUND = "VERSION_NOT_FOUND"
    REQUEST_ID_REUSED = "REQUEST_ID_REUSED"
    NODE_STOPPING = "NODE_STOPPING"
    PRECONDITION_FAILED = "PRECONDITION_FAILED"
    PRIMARY_KEY_VIOLATION = "PRIMARY_KEY_VIOLATION"
    LEASE_NOT_FOUND = "LEASE_NOT_FOUND"
    TOO_MANY_LEASES = "TOO_MANY_LEASES"
    VIEW_NOT_FOUND = "VIEW_NOT_FOUND"
    VIEW_EXISTS = "VIEW_EXISTS"
    BACKUP_INVALID = "BACKUP_INVALID"
    PRINCIPAL_NOT_FOUND = "PRINCIPAL_NOT_FOUND"
    PRINCIPAL_EXISTS = "PRINCIPAL_EXISTS"
    ROLE_NOT_FOUND = "ROLE_NOT_FOUND"
    ROLE_EXISTS = "ROLE_EXISTS"
    GRANT_NOT_FOUND = "GRANT_NOT_FOUND"
    ROLE_CYCLE = "ROLE_CYCLE"
    LAST_CATALOG_OWNER = "LAST_CATALOG_OWNER"
    FORBIDDEN = "FORBIDDEN"


@dataclass(frozen=True, slots=True)
class BatchPosition:
    """Where in a batch a refused statement stands.

    Attributes:
        statement: its 1-based number (the command's, in a list of commands).
        line: the 1-based line of the SQL text it starts on, where there is a text.
        column: the 1-based column it starts at on that line.
    """

    statement: int
    line: int | None = None
    column: int | None = None


class CatalogError(Exception):
    """Root of every error the catalog raises on purpose.

    Attributes:
        position: the refused statement of a batch, when the error belongs to one.
    """

    default_code: ErrorCode = ErrorCode.VALIDATION_ERROR

    def __init__(self, message: str, *, code: ErrorCode | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.code: ErrorCode = code or self.default_code
        self.position: BatchPosition | None = None

    def __str__(self) -> str:
        return f"[{self.code}] {self.message}"


class ValidationError(CatalogError, ValueError):
    """A command is invalid by itself or against the current catalog.

    Attributes:
        details: per-field problems when the error comes from the shape of the input, each
            ``{"loc": [...], "msg": "..."}``.
    """

    default_code = ErrorCode.VALIDATION_ERROR

    def __init__(
        self,
        message: str,
        *,
        code: ErrorCode | None = None,
        details: Iterable[Mapping[str, Any]] = (),
    ) -> None:
        super().__init__(message, code=code)
        self.details: list[dict[str, Any]] = [dict(d) for d in details]


class NotFoundError(CatalogError):
    """A named or numbered object does not exist."""

    default_code = ErrorCode.TABLE_NOT_FOUND


class AlreadyExistsError(CatalogError):
    """An object with that name already exists in that namespace."""

    default_code = ErrorCode.TABLE_EXISTS


class AccessDeniedError(CatalogError):
    """The caller does not hold a privilege the request takes, on the catalog it is judged on."""

    default_code = ErrorCode.FORBIDDEN


class ConcurrentUpdateError(CatalogError):
    """Concurrent writers kept winning the compare-and-set; the bounded retries ran out.

    With PRECONDITION_FAILED: the catalog no longer holds what the request was built on (its
    precondition failed); read again and build the request anew.
    """

    default_code = ErrorCode.CONCURRENT_UPDATE


class VersionCompactedError(CatalogError):
    """The requested catalog version is older than the snapshot and no longer kept."""

    default_code = ErrorCode.VERSION_COMPACTED

    def __init__(self, version: int, earliest_version: int) -> None:
        super().__init__(
            f"catalog version {version} was compacted; the earliest kept is {earliest_version}"
        )
        self.version = version
        self.earliest_version = earliest_version


class NodeStoppingError(CatalogError):
    """This node is stopping and gave up what waited on it (see the message for what).

    Another node can serve the request. A command refused so was not run; a wait for a
    version says nothing of that version, which other nodes apply as usual.
    """

    default_code = ErrorCode.NODE_STOPPING

    def __init__(self, node_name: str, what: str) -> None:
        super().__init__(f"node {node_name} is stopping: {what}; ask another node")
        self.node_name = node_name
