"""Every stable error code, defined once with everything that follows from it.

A ``Code`` member is the wire string a problem+json answer carries in ``code`` (never renamed
or reused), and holds:

- ``status``: the HTTP status the REST API answers it with;
- ``iceberg`` and ``iceberg_status``: the Iceberg REST protocol's exception type and status
  for it, when an Iceberg route raised it;
- ``client``: the exception class the Python client raises for it (named here, defined in
  ``api.client.errors``);
- ``retry``: whether the server asks to retry (``Retry-After``) and whether the client
  retries on its own.

The server's status table, the Iceberg routes' exception table and the client's code →
exception table are all read from here. The domain's own codes are defined by the packages
that raise them (``catalog.errors.ErrorCode``, the ``code`` of the update log's and the
clock's error classes); a unit test checks that each of them is here, with the same string.

Imports the standard library only: the client, the server and the Iceberg protocol all
import it.
"""

from __future__ import annotations

import enum


class IcebergType(enum.StrEnum):
    """The Iceberg REST protocol's exception types (``ErrorModel.type``)."""

    BAD_REQUEST = "BadRequestException"
    ILLEGAL_ARGUMENT = "IllegalArgumentException"
    """What Java's client raises as ``IllegalArgumentException`` (an invalid view version)."""
    NOT_AUTHORIZED = "NotAuthorizedException"
    FORBIDDEN = "ForbiddenException"
    NOT_FOUND = "NotFoundException"
    NO_SUCH_NAMESPACE = "NoSuchNamespaceException"
    NO_SUCH_TABLE = "NoSuchTableException"
    NO_SUCH_VIEW = "NoSuchViewException"
    ALREADY_EXISTS = "AlreadyExistsException"
    NAMESPACE_NOT_EMPTY = "NamespaceNotEmptyException"
    METHOD_NOT_ALLOWED = "MethodNotAllowedException"
    COMMIT_FAILED = "CommitFailedException"
    COMMIT_STATE_UNKNOWN = "CommitStateUnknownException"
    UNSUPPORTED_OPERATION = "UnsupportedOperationException"
    TOO_MANY_REQUESTS = "TooManyRequestsException"
    SERVICE_UNAVAILABLE = "ServiceUnavailableException"
    INTERNAL = "InternalServerError"


class ClientClass(enum.StrEnum):
    """The client's exception classes a code can map to (names in ``api.client.errors``)."""

    INVALID_REQUEST = "InvalidRequestError"
    NOT_FOUND = "NotFoundError"
    CONFLICT = "ConflictError"
    ALREADY_EXISTS = "AlreadyExistsError"
    COMPACTED = "CompactedError"
    UNAVAILABLE = "UnavailableError"
    WAIT_TIMEOUT = "WaitTimeoutError"
    SERVER = "ServerError"


class Retry(enum.Enum):
    """Whether an answer with the code is worth sending again."""

    NEVER = "never"
    """Sending the same request again gets the same answer."""
    ADVISED = "advised"
    """The server says ``Retry-After``; the client leaves retrying to its caller (a wait the
    caller bounded on purpose, a stream slot)."""
    AUTOMATIC = "automatic"
    """The server says ``Retry-After``, and the client retries on its own (maybe elsewhere)."""


_I = IcebergType
_C = ClientClass


class Code(enum.StrEnum):
    """A stable error code with its HTTP status, Iceberg exception, client class and retry.

    ``Code.TABLE_EXISTS == "TABLE_EXISTS"``; ``Code.TABLE_EXISTS.status == 409``.
    """

    status: int
    iceberg: IcebergType
    iceberg_status: int
    client: ClientClass
    retry: Retry

    def __new__(
        cls,
        value: str,
        status: int,
        iceberg: IcebergType,
        iceberg_status: int,
        client: ClientClass,
        retry: Retry = Retry.NEVER,
    ) -> Code:
        """Make the member whose wire string is ``value``, with what follows from it."""
        member = str.__new__(cls, value)
        member._value_ = value
        member.status = status
        member.iceberg = iceberg
        member.iceberg_status = iceberg_status
        member.client = client
        member.retry = retry
        return member

    # fmt: off
    # The catalog's (catalog.errors.ErrorCode).
    VALIDATION_ERROR = "VALIDATION_ERROR", 422, _I.BAD_REQUEST, 400, _C.INVALID_REQUEST
    UNSUPPORTED_CHANGE = "UNSUPPORTED_CHANGE", 422, _I.BAD_REQUEST, 400, _C.INVALID_REQUEST
    TOO_MANY_COLUMNS = "TOO_MANY_COLUMNS", 422, _I.BAD_REQUEST, 400, _C.INVALID_REQUEST
    NESTED_TOO_DEEP = "NESTED_TOO_DEEP", 422, _I.BAD_REQUEST, 400, _C.INVALID_REQUEST
    SCHEMA_NOT_EMPTY = "SCHEMA_NOT_EMPTY", 409, _I.NAMESPACE_NOT_EMPTY, 409, _C.CONFLICT
    ZONE_IN_USE = "ZONE_IN_USE", 409, _I.COMMIT_FAILED, 409, _C.CONFLICT
    INDEX_STATUS_CONFLICT = "INDEX_STATUS_CONFLICT", 409, _I.COMMIT_FAILED, 409, _C.CONFLICT
    SCHEMA_NOT_FOUND = "SCHEMA_NOT_FOUND", 404, _I.NO_SUCH_NAMESPACE, 404, _C.NOT_FOUND
    TABLE_NOT_FOUND = "TABLE_NOT_FOUND", 404, _I.NO_SUCH_TABLE, 404, _C.NOT_FOUND
    COLUMN_NOT_FOUND = "COLUMN_NOT_FOUND", 404, _I.COMMIT_FAILED, 409, _C.NOT_FOUND
    INDEX_NOT_FOUND = "INDEX_NOT_FOUND", 404, _I.NOT_FOUND, 404, _C.NOT_FOUND
    ZONE_NOT_FOUND = "ZONE_NOT_FOUND", 404, _I.NOT_FOUND, 404, _C.NOT_FOUND
    VERSION_NOT_FOUND = "VERSION_NOT_FOUND", 404, _I.NOT_FOUND, 404, _C.NOT_FOUND
    SCHEMA_EXISTS = "SCHEMA_EXISTS", 409, _I.ALREADY_EXISTS, 409, _C.ALREADY_EXISTS
    TABLE_EXISTS = "TABLE_EXISTS", 409, _I.ALREADY_EXISTS, 409, _C.ALREADY_EXISTS
    COLUMN_EXISTS = "COLUMN_EXISTS", 409, _I.COMMIT_FAILED, 409, _C.ALREADY_EXISTS
    INDEX_EXISTS = "INDEX_EXISTS", 409, _I.ALREADY_EXISTS, 409, _C.ALREADY_EXISTS
    ZONE_EXISTS = "ZONE_EXISTS", 409, _I.COMMIT_FAILED, 409, _C.ALREADY_EXISTS
    # A lost compare-and-set wrote nothing: Iceberg's commit failed (409, the client reloads
    # and retries), never 503, which a Java client takes as "commit state unknown".
    CONCURRENT_UPDATE = (
        "CONCURRENT_UPDATE", 503, _I.COMMIT_FAILED, 409, _C.UNAVAILABLE, Retry.AUTOMATIC
    )
    PRECONDITION_FAILED = "PRECONDITION_FAILED", 409, _I.COMMIT_FAILED, 409, _C.CONFLICT
    PRIMARY_KEY_VIOLATION = "PRIMARY_KEY_VIOLATION", 409, _I.COMMIT_FAILED, 409, _C.CONFLICT
    VERSION_COMPACTED = "VERSION_COMPACTED", 410, _I.SERVICE_UNAVAILABLE, 410, _C.COMPACTED
    REQUEST_ID_REUSED = "REQUEST_ID_REUSED", 422, _I.BAD_REQUEST, 400, _C.INVALID_REQUEST
    LEASE_NOT_FOUND = "LEASE_NOT_FOUND", 404, _I.NOT_FOUND, 404, _C.NOT_FOUND
    TOO_MANY_LEASES = "TOO_MANY_LEASES", 409, _I.COMMIT_FAILED, 409, _C.CONFLICT
    VIEW_NOT_FOUND = "VIEW_NOT_FOUND", 404, _I.NO_SUCH_VIEW, 404, _C.NOT_FOUND
    VIEW_EXISTS = "VIEW_EXISTS", 409, _I.ALREADY_EXISTS, 409, _C.ALREADY_EXISTS
    BACKUP_INVALID = "BACKUP_INVALID", 422, _I.BAD_REQUEST, 400, _C.INVALID_REQUEST
    PRINCIPAL_NOT_FOUND = "PRINCIPAL_NOT_FOUND", 404, _I.NOT_FOUND, 404, _C.NOT_FOUND
    PRINCIPAL_EXISTS = "PRINCIPAL_EXISTS", 409, _I.ALREADY_EXISTS, 409, _C.ALREADY_EXISTS
    ROLE_NOT_FOUND = "ROLE_NOT_FOUND", 404, _I.NOT_FOUND, 404, _C.NOT_FOUND
    ROLE_EXISTS = "ROLE_EXISTS", 409, _I.ALREADY_EXISTS, 409, _C.ALREADY_EXISTS
    GRANT_NOT_FOUND = "GRANT_NOT_FOUND", 404, _I.NOT_FOUND, 404, _C.NOT_FOUND
    ROLE_CYCLE = "ROLE_CYCLE", 422, _I.BAD_REQUEST, 400, _C.INVALID_REQUEST
    LAST_CATALOG_OWNER = "LAST_CATALOG_OWNER", 409, _I.COMMIT_FAILED, 409, _C.CONFLICT
    NODE_STOPPING = (
        "NODE_STOPPING", 503, _I.SERVICE_UNAVAILABLE, 503, _C.UNAVAILABLE, Retry.AUTOMATIC
    )

    # The clock's (schemasync.errors).
    SCHEMA_SYNC_ERROR = "SCHEMA_SYNC_ERROR", 500, _I.SERVICE_UNAVAILABLE, 500, _C.SERVER
    TIMESTAMP_IN_FUTURE = "TIMESTAMP_IN_FUTURE", 422, _I.BAD_REQUEST, 422, _C.INVALID_REQUEST

    # The update log's (updatelog.errors).
    UPDATE_LOG_ERROR = "UPDATE_LOG_ERROR", 500, _I.SERVICE_UNAVAILABLE, 500, _C.SERVER
    STORAGE_UNAVAILABLE = (
        "STORAGE_UNAVAILABLE", 503, _I.SERVICE_UNAVAILABLE, 503, _C.UNAVAILABLE, Retry.AUTOMATIC
    )
    FORMAT_ERROR = "FORMAT_ERROR", 503, _I.SERVICE_UNAVAILABLE, 503, _C.UNAVAILABLE
    # The warehouse's S3 store (or its STS) did not answer, or refused the catalog's keys.
    OBJECT_STORE_UNAVAILABLE = (
        "OBJECT_STORE_UNAVAILABLE", 503, _I.SERVICE_UNAVAILABLE, 503, _C.UNAVAILABLE,
        Retry.ADVISED,
    )
    SETTINGS_MISMATCH = "SETTINGS_MISMATCH", 503, _I.SERVICE_UNAVAILABLE, 503, _C.UNAVAILABLE
    # The store went back under the node: nothing was written, and nothing will be until the
    # node is restarted (no automatic retry: an operator acts).
    # Nothing was written; another node (one restarted against the store) may serve it.
    STORE_REGRESSED = (
        "STORE_REGRESSED", 503, _I.SERVICE_UNAVAILABLE, 503, _C.UNAVAILABLE, Retry.AUTOMATIC
    )
    STORE_NOT_EMPTY = "STORE_NOT_EMPTY", 409, _I.COMMIT_FAILED, 409, _C.CONFLICT
    VERSION_CONFLICT = "VERSION_CONFLICT", 409, _I.COMMIT_FAILED, 409, _C.CONFLICT
    UPDATE_TOO_LARGE = "UPDATE_TOO_LARGE", 413, _I.BAD_REQUEST, 413, _C.INVALID_REQUEST
    STORE_QUOTA_EXCEEDED = "STORE_QUOTA_EXCEEDED", 507, _I.SERVICE_UNAVAILABLE, 507, _C.SERVER
    INVALID_STORE_URL = "INVALID_STORE_URL", 500, _I.SERVICE_UNAVAILABLE, 500, _C.SERVER

    # The API layer's own.
    MALFORMED_REQUEST = "MALFORMED_REQUEST", 400, _I.BAD_REQUEST, 400, _C.INVALID_REQUEST
    UNKNOWN_PARAMETER = "UNKNOWN_PARAMETER", 400, _I.BAD_REQUEST, 400, _C.INVALID_REQUEST
    REQUEST_TOO_LARGE = "REQUEST_TOO_LARGE", 413, _I.BAD_REQUEST, 413, _C.INVALID_REQUEST
    TIMEOUT = "TIMEOUT", 504, _I.SERVICE_UNAVAILABLE, 504, _C.WAIT_TIMEOUT, Retry.ADVISED
    NOT_READY = (
        "NOT_READY", 503, _I.SERVICE_UNAVAILABLE, 503, _C.UNAVAILABLE, Retry.AUTOMATIC
    )
    NOT_FOUND = "NOT_FOUND", 404, _I.NOT_FOUND, 404, _C.NOT_FOUND
    METHOD_NOT_ALLOWED = (
        "METHOD_NOT_ALLOWED", 405, _I.METHOD_NOT_ALLOWED, 405, _C.INVALID_REQUEST
    )
    UNSUPPORTED_MEDIA_TYPE = (
        "UNSUPPORTED_MEDIA_TYPE", 415, _I.BAD_REQUEST, 400, _C.INVALID_REQUEST
    )
    INTERNAL_ERROR = "INTERNAL_ERROR", 500, _I.SERVICE_UNAVAILABLE, 500, _C.SERVER
    UNAUTHENTICATED = "UNAUTHENTICATED", 401, _I.NOT_AUTHORIZED, 401, _C.SERVER
    FORBIDDEN = "FORBIDDEN", 403, _I.FORBIDDEN, 403, _C.SERVER
    HOST_NOT_ALLOWED = "HOST_NOT_ALLOWED", 403, _I.FORBIDDEN, 403, _C.SERVER
    AUTH_DISABLED = "AUTH_DISABLED", 409, _I.COMMIT_FAILED, 409, _C.CONFLICT
    TOO_MANY_COMMANDS = "TOO_MANY_COMMANDS", 413, _I.BAD_REQUEST, 413, _C.INVALID_REQUEST
    TOO_MANY_SUBSCRIBERS = (
        "TOO_MANY_SUBSCRIBERS", 503, _I.SERVICE_UNAVAILABLE, 503, _C.UNAVAILABLE, Retry.ADVISED
    )
    TOO_MANY_REQUESTS = (
        "TOO_MANY_REQUESTS", 429, _I.TOO_MANY_REQUESTS, 429, _C.SERVER, Retry.AUTOMATIC
    )
    # Only ever in an event stream's error frame.
    SUBSCRIBER_TOO_SLOW = "SUBSCRIBER_TOO_SLOW", 503, _I.SERVICE_UNAVAILABLE, 503, _C.UNAVAILABLE
    # fmt: on


def code_of(value: str) -> Code | None:
    """Return the registered code whose wire string is ``value``, or None for another string."""
    member = Code._value2member_map_.get(value)
    return member if isinstance(member, Code) else None
