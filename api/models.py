"""The JSON shapes of the REST API (requests and responses), as pydantic models.

Descriptors are the catalog's own frozen models, so a client gets the same typed objects the
server holds.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from catalog import IndexDescriptor, SchemaDescriptor, TableDescriptor, ZoneDescriptor
from catalog.commands import CatalogCommand


class _Shape(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class DdlRequest(_Shape):
    """``POST /v1/ddl``: commands applied as one atomic batch."""

    commands: list[CatalogCommand] = Field(min_length=1)
    request_id: str | None = Field(default=None, min_length=1, max_length=200)


class SqlRequest(_Shape):
    """``POST /v1/sql``: DDL statements applied as one atomic batch."""

    sql: str = Field(min_length=1)
    request_id: str | None = Field(default=None, min_length=1, max_length=200)


class ApplyResultBody(_Shape):
    """The outcome of a DDL batch, once it is visible on every node."""

    version: int
    applied: list[bool]
    activation_ts: int


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


class TableBody(_Shape):
    """One table at a version, with its indexes and zone."""

    version: int
    activation_ts: int
    schema_: str = Field(alias="schema")
    table: TableDescriptor
    indexes: list[IndexDescriptor]
    zone: ZoneDescriptor

    model_config = ConfigDict(frozen=True, extra="forbid", populate_by_name=True)


class IndexBody(_Shape):
    """One index at a version."""

    version: int
    index: IndexDescriptor


class ZoneBody(_Shape):
    """One zone at a version, with the tables it holds (ids)."""

    version: int
    zone: ZoneDescriptor
    table_ids: list[int]


class VersionInfo(_Shape):
    """A retained version and when it becomes active."""

    version: int
    activation_ts: int


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


class ChangeBody(_Shape):
    """One object that differs between two versions."""

    object_type: str
    id: int
    name: str
    change: str
    before: dict[str, Any] | None
    after: dict[str, Any] | None


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


class NodeInfo(_Shape):
    """A catalog node and how far it has applied the log."""

    name: str
    address: str | None
    applied_version: int
    heartbeat_ms: int | None


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
