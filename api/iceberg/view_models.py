"""The Iceberg REST protocol's view bodies: view metadata, and what creates and changes a view.

A replace (``CommitViewRequest``) is made of the update kinds below; the view's
requirement is ``assert-view-uuid``. Field names follow the protocol, as in ``models``.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from api.iceberg.models import IcebergModel, IcebergSchema, Namespace, Properties, TableIdentifier


class SQLViewRepresentation(IcebergModel):
    """A view's query in one dialect."""

    type: Literal["sql"] = "sql"
    sql: str
    dialect: str


class ViewVersionBody(IcebergModel):
    """One version of a view (``version-id`` -1 in a request: the server numbers it)."""

    version_id: int = Field(alias="version-id")
    timestamp_ms: int = Field(alias="timestamp-ms")
    schema_id: int = Field(alias="schema-id")
    summary: Properties = Field(default_factory=dict)
    representations: list[SQLViewRepresentation]
    default_catalog: str | None = Field(default=None, alias="default-catalog")
    default_namespace: Namespace = Field(alias="default-namespace")


class ViewHistoryEntry(IcebergModel):
    """When a version became current."""

    version_id: int = Field(alias="version-id")
    timestamp_ms: int = Field(alias="timestamp-ms")


class ViewMetadata(IcebergModel):
    """A view's whole metadata, as its metadata file holds it."""

    view_uuid: str = Field(alias="view-uuid")
    format_version: int = Field(alias="format-version")
    location: str
    current_version_id: int = Field(alias="current-version-id")
    versions: list[ViewVersionBody]
    version_log: list[ViewHistoryEntry] = Field(alias="version-log")
    schemas: list[IcebergSchema]
    properties: Properties = Field(default_factory=dict)


class LoadViewResult(IcebergModel):
    """A view's metadata and the file holding it."""

    metadata_location: str = Field(alias="metadata-location")
    metadata: ViewMetadata
    config: Properties = Field(default_factory=dict)


class CreateViewRequest(IcebergModel):
    """``POST /v1/namespaces/{namespace}/views``."""

    name: str = Field(min_length=1)
    location: str | None = None
    schema_: IcebergSchema = Field(alias="schema")
    view_version: ViewVersionBody = Field(alias="view-version")
    properties: Properties = Field(default_factory=dict)


class AssertViewUUID(IcebergModel):
    """The view must be the one of this uuid (not one dropped and created again)."""

    type: Literal["assert-view-uuid"]
    uuid: str


class AssignUUIDUpdate(IcebergModel):
    """Give the view a uuid (the catalog gives every view one; only the same one is kept)."""

    action: Literal["assign-uuid"]
    uuid: str


class UpgradeFormatVersionUpdate(IcebergModel):
    """Move the view to a format version (1 is the only one)."""

    action: Literal["upgrade-format-version"]
    format_version: int = Field(alias="format-version")


class AddSchemaUpdate(IcebergModel):
    """Add a schema to the view."""

    action: Literal["add-schema"]
    schema_: IcebergSchema = Field(alias="schema")
    last_column_id: int | None = Field(default=None, alias="last-column-id")


class SetLocationUpdate(IcebergModel):
    """Move the view's location."""

    action: Literal["set-location"]
    location: str = Field(min_length=1)


class SetPropertiesUpdate(IcebergModel):
    """Set properties."""

    action: Literal["set-properties"]
    updates: Properties


class RemovePropertiesUpdate(IcebergModel):
    """Remove properties."""

    action: Literal["remove-properties"]
    removals: list[str]


class AddViewVersionUpdate(IcebergModel):
    """Add a version (``schema-id`` -1: the schema added last in this commit)."""

    action: Literal["add-view-version"]
    view_version: ViewVersionBody = Field(alias="view-version")


class SetCurrentViewVersionUpdate(IcebergModel):
    """Make a version current (-1: the one added last in this commit)."""

    action: Literal["set-current-view-version"]
    view_version_id: int = Field(alias="view-version-id")


ViewUpdate = Annotated[
    AssignUUIDUpdate
    | UpgradeFormatVersionUpdate
    | AddSchemaUpdate
    | SetLocationUpdate
    | SetPropertiesUpdate
    | RemovePropertiesUpdate
    | AddViewVersionUpdate
    | SetCurrentViewVersionUpdate,
    Field(discriminator="action"),
]


class CommitViewRequest(IcebergModel):
    """``POST /v1/namespaces/{namespace}/views/{view}``: requirements, then updates."""

    identifier: TableIdentifier | None = None
    requirements: list[AssertViewUUID] = Field(default_factory=list)
    updates: list[ViewUpdate] = Field(default_factory=list)
