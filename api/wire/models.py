"""The JSON shapes of the REST API (requests and responses), as pydantic models.

Descriptors are the catalog's own frozen models, so a client gets the same typed objects the
server holds.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from api.wire.roles import MAX_TTL_S, Role
from catalog import (
    IndexDescriptor,
    SchemaDescriptor,
    SystemViewDescriptor,
    TableDescriptor,
    TableVersion,
    ZoneDescriptor,
)
from catalog.catalog import Catalog
from catalog.commands import CatalogCommand
from catalog.data.files import DataCommit, DataFile, DataMode, FilePath
from catalog.descriptors.views import ViewDescriptor
from catalog.leases import RetentionLease
from catalog.origin import MAX_MESSAGE_CHARS, UpdateOrigin

MAX_WAIT_FOR_NODES_S = 60.0
"""The longest ``wait_for_nodes_s`` a DDL request may ask for."""

WAIT_FOR_NODES_DOC = (
    "Also wait (at most this many seconds) until every live registered node has applied the "
    "new version; the answer lists the nodes that did (nodes_synced) and did not "
    "(nodes_lagging)."
)


class _Shape(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class BatchRequest(_Shape):
    """What every DDL request may carry besides its statements."""

    request_id: str | None = Field(default=None, min_length=1, max_length=200)
    message: str | None = Field(
        default=None,
        min_length=1,
        max_length=MAX_MESSAGE_CHARS,
        description="Why, in your words: the new version records it with who asked "
        "(GET /v1/versions, the events).",
    )
    wait_for_nodes_s: float | None = Field(
        default=None,
        ge=0,
        le=MAX_WAIT_FOR_NODES_S,
        allow_inf_nan=False,
        description=WAIT_FOR_NODES_DOC,
    )


class DdlRequest(BatchRequest):
    """``POST /v1/ddl``: commands applied as one atomic batch."""

    commands: list[CatalogCommand] = Field(
        min_length=1,
        description="The commands, in order. Names in commands are exact: they are not folded "
        "to upper case as SQL and path segments fold unquoted names ('orders' is a table named "
        "orders, which a path reaches as %22orders%22).",
    )


class SqlRequest(BatchRequest):
    """``POST /v1/sql``: DDL statements applied as one atomic batch."""

    sql: str = Field(min_length=1)


class ApplyResultBody(_Shape):
    """The outcome of a DDL batch, once it is visible on every node."""

    version: int
    applied: list[bool]
    activation_ts: int
    nodes_synced: list[str] | None = Field(
        default=None, description="With wait_for_nodes_s: the nodes that applied the version."
    )
    nodes_lagging: list[str] | None = Field(
        default=None,
        description="With wait_for_nodes_s: live nodes that had not applied it in time.",
    )


class CatalogBody(_Shape):
    """A whole catalog version."""

    version: int
    activation_ts: int
    object_id_gen: int
    default_zone_id: int | None
    schemas: list[SchemaDescriptor]
    zones: list[ZoneDescriptor]
    tables: list[TableDescriptor]
    indexes: list[IndexDescriptor]
    system_views: list[SystemViewDescriptor] = Field(default_factory=list)
    views: list[ViewDescriptor] = Field(default_factory=list)

    @classmethod
    def of(cls, cat: Catalog, *, history: bool = True) -> CatalogBody:
        """Return ``cat`` as one document (decoding every table: this is O(tables)).

        Without ``history``, each table carries only its current schema version.
        """
        tables = cat.tables()
        return cls(
            version=cat.version,
            activation_ts=cat.activation_ts,
            object_id_gen=cat.object_id_gen,
            default_zone_id=cat.default_zone_id,
            schemas=cat.schemas(),
            zones=cat.zones(),
            tables=tables if history else [t.current() for t in tables],
            indexes=cat.indexes(),
            system_views=cat.system_views(),
            views=cat.views(),
        )


class TableBody(_Shape):
    """One table at a version, with its indexes and zone."""

    version: int
    activation_ts: int
    schema_: str = Field(alias="schema")
    table: TableDescriptor
    indexes: list[IndexDescriptor]
    zone: ZoneDescriptor

    model_config = ConfigDict(frozen=True, extra="forbid", populate_by_name=True)


class TableHistoryBody(_Shape):
    """A page of a table's schema versions, oldest first."""

    version: int
    table_id: int
    schema_versions: list[TableVersion]
    next_schema_version: int | None = Field(
        description="Where the next page starts; null on the last page."
    )


class IndexBody(_Shape):
    """One index at a version."""

    version: int
    index: IndexDescriptor


class ZoneBody(_Shape):
    """One zone at a version, with the tables it holds (ids)."""

    version: int
    zone: ZoneDescriptor
    table_ids: list[int]


class SchemasBody(_Shape):
    """Every schema at a version."""

    version: int
    schemas: list[SchemaDescriptor]


class SchemaBody(_Shape):
    """One schema at a version, with the names of its tables and (alive) indexes."""

    version: int
    schema_: SchemaDescriptor = Field(alias="schema")
    tables: list[str]
    indexes: list[str]

    model_config = ConfigDict(frozen=True, extra="forbid", populate_by_name=True)


class ZonesBody(_Shape):
    """Every zone at a version, and which one tables without a zone go to."""

    version: int
    default_zone: str | None
    zones: list[ZoneDescriptor]


class SystemViewsBody(_Shape):
    """The system views at a version (all in ``SYSTEM``), as the nodes registered them."""

    version: int
    system_views: list[SystemViewDescriptor]


class ViewsBody(_Shape):
    """The views at a version: all, or one schema's."""

    version: int
    views: list[ViewDescriptor]


class ViewBody(_Shape):
    """One view at a version: its kept versions, the current one, its schemas."""

    version: int
    view: ViewDescriptor


class IndexesBody(_Shape):
    """Indexes at a version: all, a schema's, or a table's."""

    version: int
    indexes: list[IndexDescriptor]


class VersionInfo(_Shape):
    """A retained version, when it becomes active, what changed in it, and who asked."""

    version: int
    activation_ts: int
    entries: list[str] = Field(
        default_factory=list,
        description="The update entries' types, in order (empty for the snapshot version).",
    )
    changes: list[str] = Field(
        default_factory=list,
        description='What the version changed, in words, one phrase per change ("created table '
        'SALES.ORDERS, 3 columns"; "added column SHIPPED to SALES.ORDERS").',
    )
    origins: list[UpdateOrigin] = Field(
        default_factory=list,
        description="One per request the version holds, in the order of their entries "
        "(empty for version 1, the snapshot version, and versions from before origins).",
    )


class VersionsBody(_Shape):
    """Retained versions (a page of them), earliest and latest."""

    earliest: int
    latest: int
    versions: list[VersionInfo]


class ReadyBody(_Shape):
    """``GET /v1/versions/{N}/ready``: the version is applied on this node."""

    version: int
    ready: bool
    activation_ts: int | None


class FieldChangeBody(_Shape):
    """One property of an object or a column that changed, with its values before and after."""

    field: str
    before: Any
    after: Any


class _DifferenceBody(_Shape):
    id: int
    name: str
    change: str
    before: dict[str, Any] | None = None
    after: dict[str, Any] | None = None
    fields: list[FieldChangeBody] = []


class ColumnChangeBody(_DifferenceBody):
    """One column, or one nested field, of an altered table.

    ``added`` carries the column in ``after``, ``dropped`` in ``before``; ``altered`` carries
    ``fields``, its properties that changed (a rename changes ``name``). A field added or
    dropped with its column or struct is not listed apart.
    """

    name: str = Field(
        description="The column's name, or a nested field's path: its names joined by dots, "
        "through an array or a map by their fields' names (PAYLOAD.ITEMS.element.PRICE)."
    )


class ChangeBody(_DifferenceBody):
    """One object that differs between two versions.

    ``added`` carries the new object in ``after`` and ``dropped`` the old one in ``before``;
    ``altered`` carries only what changed: ``fields`` (a rename changes ``name``; a table's
    ``schema_version`` moves when its columns change) and, for a table, ``columns``.
    """

    object_type: str
    columns: list[ColumnChangeBody] = []


class DiffBody(_Shape):
    """``GET /v1/diff``."""

    from_version: int
    to_version: int
    changes: list[ChangeBody]


class TimeBody(_Shape):
    """The node's hybrid clock."""

    now: int
    physical_ms: int


class SchemaSyncBody(_Shape):
    """``POST /v1/schema-sync/wait``: metadata is complete at ``at``."""

    at: int
    version: int


class DataCommitRequest(_Shape):
    """``POST /v1/data/commits``: make written files of a table visible at one timestamp."""

    table_id: int = Field(ge=0, le=2**63 - 1)
    schema_version: int = Field(ge=1, le=2**31 - 1)
    mode: DataMode
    files: list[DataFile] = Field(max_length=100_000)
    request_id: str = Field(min_length=1, max_length=200)
    expected_seq: int | None = Field(
        default=None,
        ge=0,
        le=2**63 - 1,
        description="Commit only if the table's latest data commit is still this one (0: none "
        "yet); otherwise 409 PRECONDITION_FAILED and nothing is committed.",
    )
    removed: list[FilePath] = Field(
        default_factory=list,
        max_length=100_000,
        description="Paths of files visible as of expected_seq (which it needs) that the commit "
        "removes: files written again without rows an upsert or a delete replaced or removed.",
    )


class DataCommitsBody(_Shape):
    """``GET /v1/data/commits``: a table's commits visible at ``at``."""

    table_id: int
    at: int
    commits: list[DataCommit]


class TokenRequest(_Shape):
    """``POST /v1/tokens``: a token for a role."""

    role: Role
    ttl_s: int = Field(default=3600, ge=1, le=MAX_TTL_S)
    subject: str = Field(default="catalog", min_length=1, max_length=200)


class TokenBody(_Shape):
    """A new bearer token; it is shown once."""

    token: str
    role: Role
    expires_at: int = Field(description="Unix seconds.")


class RotatedBody(_Shape):
    """``POST /v1/tokens/rotate``: the new signing key."""

    key_id: str


class NodeInfo(_Shape):
    """A live catalog node (from the node registry) and how far it has applied the log."""

    name: str
    address: str | None
    applied_version: int
    heartbeat_ms: int | None = Field(description="The node's clock (ms) at its last heartbeat.")
    safe_time: int | None = Field(
        default=None, description="The safe time the node has observed (hybrid timestamp)."
    )
    heartbeat_age_ms: int | None = Field(
        default=None, description="How long ago the last heartbeat was, by the answering node."
    )
    started_ms: int | None = Field(default=None, description="When the node started (ms).")


class NodesBody(_Shape):
    """``GET /v1/cluster/nodes``."""

    nodes: list[NodeInfo]


class Problem(_Shape):
    """An error (``application/problem+json``)."""

    type: str
    title: str
    status: int
    code: str
    detail: str
    errors: list[dict[str, Any]] | None = None
    statement: int | None = Field(
        default=None,
        description="The refused statement of a batch, 1-based (the command's number in a "
        "list of commands).",
    )
    line: int | None = Field(default=None, description="Where that statement starts (SQL).")
    column: int | None = Field(default=None, description="Its column on that line (SQL).")


class LeaseRequest(_Shape):
    """``POST /v1/leases``: keep what a read as of ``at`` needs for ``ttl_s`` seconds."""

    at: str = Field(
        min_length=1,
        max_length=64,
        description="The moment reads stay answerable at: an RFC 3339 time with an offset, or "
        "a hybrid timestamp.",
    )
    ttl_s: float = Field(gt=0, description="How long the lease holds, in seconds (at most a week).")
    owner: str = Field(min_length=1, max_length=200, description="Who holds it: a job's name.")


class LeasesBody(_Shape):
    """``GET /v1/leases``: the retention leases that hold, earliest moment first."""

    leases: list[RetentionLease]
