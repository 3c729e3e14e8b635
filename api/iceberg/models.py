"""The Iceberg REST protocol's request and response bodies this catalog serves.

Field names follow the protocol (``schema-id``, ``identifier-field-ids``); each model takes
them by that alias or by its Python name. Request bodies ignore members they do not know, so
a newer client's additions do not break it. An optional member with no value is left out of
an answer, never sent as ``null``: readers such as DuckDB refuse ``"doc": null``, and the
protocol's optional members are absent, not nullable. A commit's body
(``commits.CommitTableRequest``) is made of the kinds in ``requirements`` and ``updates``.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, SerializerFunctionWrapHandler, model_serializer

FORMAT_VERSION: Literal[2] = 2
UNPARTITIONED_SPEC_ID = 0
UNSORTED_ORDER_ID = 0
LAST_PARTITION_ID = 999
"""The last partition field id of a table that has never been partitioned (Iceberg's rule)."""

Properties = dict[str, str]
Namespace = list[str]


class IcebergModel(BaseModel):
    """Base of the protocol bodies: dashed aliases, either spelling accepted, frozen."""

    model_config = ConfigDict(
        frozen=True, populate_by_name=True, serialize_by_alias=True, extra="ignore"
    )

    # No return annotation: pydantic would document the answers by it (an opaque object)
    # instead of by their members.
    @model_serializer(mode="wrap")
    def _without_none(self, handler: SerializerFunctionWrapHandler):  # type: ignore[no-untyped-def]
        """Serialise the members, leaving out those that hold no value (see the module doc)."""
        dumped = handler(self)
        if not isinstance(dumped, dict):
            return dumped
        return {k: v for k, v in dumped.items() if v is not None}


class ErrorModel(IcebergModel):
    """What went wrong: a plain message, the exception type name and the HTTP status."""

    message: str
    type: str
    code: int = Field(ge=400, le=600)


class IcebergErrorResponse(IcebergModel):
    """The body of every error answer."""

    error: ErrorModel


class CatalogConfig(IcebergModel):
    """``GET /v1/config``: client settings and the endpoints this server implements."""

    defaults: Properties = Field(default_factory=dict)
    overrides: Properties = Field(default_factory=dict)
    endpoints: list[str] = Field(default_factory=list)


class CreateNamespaceRequest(IcebergModel):
    """``POST /v1/namespaces``."""

    namespace: Namespace
    properties: Properties = Field(default_factory=dict)


class NamespaceResponse(IcebergModel):
    """A namespace and its properties (create and load answers)."""

    namespace: Namespace
    properties: Properties = Field(default_factory=dict)


class UpdateNamespacePropertiesRequest(IcebergModel):
    """``POST /v1/namespaces/{namespace}/properties``."""

    removals: list[str] = Field(default_factory=list)
    updates: Properties = Field(default_factory=dict)


class UpdateNamespacePropertiesResponse(IcebergModel):
    """What a namespace properties change did: keys set, keys removed, removals not there."""

    updated: list[str]
    removed: list[str]
    missing: list[str] | None = None


class ListNamespacesResponse(IcebergModel):
    """``GET /v1/namespaces``."""

    namespaces: list[Namespace]
    next_page_token: str | None = Field(default=None, alias="next-page-token")


class TableIdentifier(IcebergModel):
    """A table's namespace and name."""

    namespace: Namespace
    name: str


class ListTablesResponse(IcebergModel):
    """``GET /v1/namespaces/{namespace}/tables``."""

    identifiers: list[TableIdentifier]
    next_page_token: str | None = Field(default=None, alias="next-page-token")


class RenameTableRequest(IcebergModel):
    """``POST /v1/tables/rename``."""

    source: TableIdentifier
    destination: TableIdentifier


class StructField(IcebergModel):
    """One field of a schema; its ``type`` is a primitive name or a nested type object."""

    id: int
    name: str
    required: bool
    type: str | dict[str, Any]
    doc: str | None = None


class IcebergSchema(IcebergModel):
    """A table schema: a struct with an id and the fields that identify a row."""

    type: Literal["struct"] = "struct"
    schema_id: int | None = Field(default=None, alias="schema-id")
    identifier_field_ids: list[int] = Field(default_factory=list, alias="identifier-field-ids")
    fields: list[StructField]


class PartitionSpec(IcebergModel):
    """A partition spec; each field has ``source-id``, ``field-id``, ``name``, ``transform``."""

    spec_id: int | None = Field(default=None, alias="spec-id")
    fields: list[dict[str, Any]] = Field(default_factory=list)


class SortOrder(IcebergModel):
    """A sort order; each field has ``source-id``, ``transform``, ``direction``, ``null-order``."""

    order_id: int = Field(default=UNSORTED_ORDER_ID, alias="order-id")
    fields: list[dict[str, Any]] = Field(default_factory=list)


class CreateTableRequest(IcebergModel):
    """``POST /v1/namespaces/{namespace}/tables``."""

    name: str
    location: str | None = None
    schema_: IcebergSchema = Field(alias="schema")
    partition_spec: PartitionSpec | None = Field(default=None, alias="partition-spec")
    write_order: SortOrder | None = Field(default=None, alias="write-order")
    stage_create: bool = Field(default=False, alias="stage-create")
    properties: Properties = Field(default_factory=dict)


class TableMetadata(IcebergModel):
    """Table metadata (format version 2, or 3 with row lineage), projected from a descriptor."""

    format_version: int = Field(default=FORMAT_VERSION, alias="format-version")
    table_uuid: str = Field(alias="table-uuid")
    location: str
    last_sequence_number: int = Field(default=0, alias="last-sequence-number")
    last_updated_ms: int = Field(alias="last-updated-ms")
    last_column_id: int = Field(alias="last-column-id")
    schemas: list[IcebergSchema]
    current_schema_id: int = Field(alias="current-schema-id")
    partition_specs: list[PartitionSpec] = Field(
        default_factory=lambda: [PartitionSpec(spec_id=UNPARTITIONED_SPEC_ID)],
        alias="partition-specs",
    )
    default_spec_id: int = Field(default=UNPARTITIONED_SPEC_ID, alias="default-spec-id")
    last_partition_id: int = Field(default=LAST_PARTITION_ID, alias="last-partition-id")
    properties: Properties = Field(default_factory=dict)
    snapshots: list[dict[str, Any]] = Field(default_factory=list)
    snapshot_log: list[dict[str, Any]] = Field(default_factory=list, alias="snapshot-log")
    metadata_log: list[dict[str, Any]] = Field(default_factory=list, alias="metadata-log")
    sort_orders: list[SortOrder] = Field(default_factory=lambda: [SortOrder()], alias="sort-orders")
    default_sort_order_id: int = Field(default=UNSORTED_ORDER_ID, alias="default-sort-order-id")
    refs: dict[str, dict[str, Any]] = Field(default_factory=dict)
    current_snapshot_id: int | None = Field(default=None, alias="current-snapshot-id")
    statistics: list[dict[str, Any]] = Field(default_factory=list)
    partition_statistics: list[dict[str, Any]] = Field(
        default_factory=list, alias="partition-statistics"
    )
    next_row_id: int | None = Field(default=None, alias="next-row-id")
    """Format version 3: the row id the next snapshot's first new row gets (left out before)."""


class StorageCredential(IcebergModel):
    """Keys for the files under ``prefix`` (``config``: Iceberg's FileIO settings)."""

    prefix: str
    config: Properties


class LoadTableResult(IcebergModel):
    """A loaded (or created, or renamed) table; no metadata file backs it.

    ``config`` and ``storage_credentials`` say how to reach its files on S3
    (``storage_access``); a table in a local folder has neither.
    """

    metadata_location: str | None = Field(default=None, alias="metadata-location")
    metadata: TableMetadata
    config: Properties = Field(default_factory=dict)
    storage_credentials: list[StorageCredential] | None = Field(
        default=None, alias="storage-credentials"
    )


class LoadCredentialsResponse(IcebergModel):
    """``GET .../tables/{table}/credentials``: fresh keys for the table's files."""

    storage_credentials: list[StorageCredential] = Field(alias="storage-credentials")


class CommitTableResponse(IcebergModel):
    """A commit's answer: the table's metadata after it.

    The protocol requires a metadata location here; it names the catalog version the
    commit made (``<location>/metadata/catalog-v<N>.metadata.json``), with no file behind it.
    """

    metadata_location: str = Field(alias="metadata-location")
    metadata: TableMetadata
