"""A commit's updates: one model per kind of the protocol, each knowing what it asks of us.

An update is tagged by ``action`` (the protocol's ``TableUpdate``). Every kind is modelled
with its members; ``apply`` records what an update asks in a commit's ``CommitChanges``, or
refuses it: this catalog changes a table's schema (``add-schema``, ``set-current-schema``),
its properties (``set-properties``, ``remove-properties``), its partition specs and sort
orders (``add-spec``, ``set-default-spec``, ``remove-partition-specs``, ``add-sort-order``,
``set-default-sort-order``), its format version (``upgrade-format-version``), its tags and
branches other than main (``set-snapshot-ref``, ``remove-snapshot-ref``), which snapshots
loads list (``remove-snapshots``), its statistics files (``set-statistics``,
``remove-statistics``, ``set-partition-statistics``, ``remove-partition-statistics``) and
which schemas it serves (``remove-schemas``); and adds snapshots to branch main
(``add-snapshot`` and ``set-snapshot-ref`` main, a data commit: ``appends``). Every other
kind is refused by ``BaseUpdate.refused`` (400 ``BadRequestException``) and nothing is
written. An unknown ``action`` is refused when the body is read (400, naming the tag).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Annotated, Any, Literal

from pydantic import Field

from api.iceberg.creation import SERVED_FORMAT_VERSIONS, SERVED_ONLY
from api.iceberg.errors import IcebergError, bad_request
from api.iceberg.models import IcebergModel, IcebergSchema, PartitionSpec, Properties, SortOrder
from catalog.data.iceberg_refs import MAIN, RefType, SnapshotRef, StatisticsDocument

LAST_ADDED = -1
"""``set-current-schema``'s id for "the schema this commit added"."""

NOT_MADE = (
    "this catalog's Iceberg REST catalog changes a table's schema, properties, partition "
    "specs, sort orders, format version, tags, branches and statistics, adds snapshots to "
    "branch main and moves a table without snapshots; a table keeps its uuid and is not "
    "encrypted"
)


@dataclass
class CommitChanges:
    """What a commit's schema, property, spec and order updates ask for (their ``apply``)."""

    added: list[IcebergSchema] = field(default_factory=list)
    current: int | None = None
    set_properties: dict[str, str] = field(default_factory=dict)
    removed_properties: list[str] = field(default_factory=list)
    specs: list[PartitionSpec] = field(default_factory=list)
    orders: list[SortOrder] = field(default_factory=list)
    default_spec: int | None = None
    default_order: int | None = None
    removed_specs: list[int] = field(default_factory=list)
    format_version: int | None = None
    set_refs: list[SnapshotRef] = field(default_factory=list)
    removed_refs: list[str] = field(default_factory=list)
    removed_snapshots: list[int] = field(default_factory=list)
    set_statistics: list[StatisticsDocument] = field(default_factory=list)
    removed_statistics: list[int] = field(default_factory=list)
    set_partition_statistics: list[StatisticsDocument] = field(default_factory=list)
    removed_partition_statistics: list[int] = field(default_factory=list)
    removed_schemas: list[int] = field(default_factory=list)
    location: str | None = None

    def new_schema(
        self, current_schema_id: int, kept: Sequence[IcebergSchema]
    ) -> IcebergSchema | None:
        """Return the schema the commit makes current, or None when it keeps the current one.

        An earlier schema of the table (one of ``kept``) made current again is the target of
        a new schema version with its columns: the catalog's schema moves forward, so the
        table answers a new schema id for it.

        Raises:
            IcebergError: BadRequestException for a schema added but not made current, or
                a schema id the table does not have.
        """
        if self.current is None:
            if self.added:
                raise bad_request(
                    "this catalog keeps only the schemas a table has had: an added schema "
                    "must be made current in the same commit (set-current-schema)"
                )
            return None
        if self.current == LAST_ADDED:
            if not self.added:
                raise bad_request("set-current-schema -1 needs a schema added in this commit")
            return self.added[-1]
        for schema in reversed(self.added):
            if schema.schema_id == self.current:
                return schema
        if self.current == current_schema_id:
            return None
        for schema in kept:
            if schema.schema_id == self.current:
                return schema
        raise bad_request(
            f"schema {self.current} cannot be made current: the table has no such schema"
        )


class BaseUpdate(IcebergModel):
    """What every update does: record itself in a commit's changes, or be refused."""

    action: str

    def refused(self) -> IcebergError:
        """Return the refusal of an update this catalog does not make."""
        return bad_request(f"update {self.action} is refused: {NOT_MADE}")

    def apply(self, changes: CommitChanges) -> None:
        """Record what this update asks in ``changes``; a kind the catalog makes overrides it.

        Raises:
            IcebergError: BadRequestException, the update is refused.
        """
        raise self.refused()


class AssignUUIDUpdate(BaseUpdate):
    """Give the table a uuid: taken by a create transaction (``staging``), else refused."""

    action: Literal["assign-uuid"] = "assign-uuid"
    uuid: str


class UpgradeFormatVersionUpdate(BaseUpdate):
    """Upgrade the table's format version (to one served: 2, or 3 with row lineage)."""

    action: Literal["upgrade-format-version"] = "upgrade-format-version"
    format_version: int = Field(alias="format-version")

    def apply(self, changes: CommitChanges) -> None:
        """Record the format version; one not served is refused (and one below, by the state)."""
        if self.format_version not in SERVED_FORMAT_VERSIONS:
            raise bad_request(f"upgrade-format-version {self.format_version}: {SERVED_ONLY}")
        changes.format_version = self.format_version


class AddSchemaUpdate(BaseUpdate):
    """Add a schema; made current by a ``set-current-schema`` of the same commit."""

    action: Literal["add-schema"] = "add-schema"
    schema_: IcebergSchema = Field(alias="schema")
    last_column_id: int | None = Field(default=None, alias="last-column-id")
    """Deprecated by the protocol; the catalog assigns column ids itself."""

    def apply(self, changes: CommitChanges) -> None:
        """Record the added schema."""
        changes.added.append(self.schema_)


class SetCurrentSchemaUpdate(BaseUpdate):
    """Make schema ``schema-id`` current (-1: the last added in this commit)."""

    action: Literal["set-current-schema"] = "set-current-schema"
    schema_id: int = Field(alias="schema-id")

    def apply(self, changes: CommitChanges) -> None:
        """Record the schema to make current."""
        changes.current = self.schema_id


class AddPartitionSpecUpdate(BaseUpdate):
    """Add a partition spec."""

    action: Literal["add-spec"] = "add-spec"
    spec: PartitionSpec

    def apply(self, changes: CommitChanges) -> None:
        """Record the added spec."""
        changes.specs.append(self.spec)


class SetDefaultSpecUpdate(BaseUpdate):
    """Make spec ``spec-id`` the default (-1: the last added in this commit)."""

    action: Literal["set-default-spec"] = "set-default-spec"
    spec_id: int = Field(alias="spec-id")

    def apply(self, changes: CommitChanges) -> None:
        """Record the default spec."""
        changes.default_spec = self.spec_id


class AddSortOrderUpdate(BaseUpdate):
    """Add a sort order."""

    action: Literal["add-sort-order"] = "add-sort-order"
    sort_order: SortOrder = Field(alias="sort-order")

    def apply(self, changes: CommitChanges) -> None:
        """Record the added order."""
        changes.orders.append(self.sort_order)


class SetDefaultSortOrderUpdate(BaseUpdate):
    """Make order ``sort-order-id`` the default (-1: the last added in this commit)."""

    action: Literal["set-default-sort-order"] = "set-default-sort-order"
    sort_order_id: int = Field(alias="sort-order-id")

    def apply(self, changes: CommitChanges) -> None:
        """Record the default order."""
        changes.default_order = self.sort_order_id


class AddedSnapshot(IcebergModel):
    """The snapshot an ``add-snapshot`` update adds."""

    snapshot_id: int = Field(alias="snapshot-id")
    parent_snapshot_id: int | None = Field(default=None, alias="parent-snapshot-id")
    sequence_number: int | None = Field(default=None, alias="sequence-number")
    timestamp_ms: int = Field(alias="timestamp-ms", ge=0)
    manifest_list: str = Field(alias="manifest-list", min_length=1, max_length=4096)
    summary: Properties = Field(default_factory=dict)
    schema_id: int | None = Field(default=None, alias="schema-id")
    first_row_id: int | None = Field(default=None, alias="first-row-id", ge=0, le=2**63 - 1)
    """Format version 3: the row id of the snapshot's first new row (the table's next-row-id)."""
    added_rows: int | None = Field(default=None, alias="added-rows", ge=0, le=2**63 - 1)
    """Format version 3: how many row ids the snapshot assigned."""


class SnapshotUpdate(BaseUpdate):
    """An update of a table's data history: a data commit (``appends``) makes these only."""

    def apply(self, changes: CommitChanges) -> None:
        """Refuse it among schema and property changes.

        Raises:
            IcebergError: BadRequestException, always.
        """
        raise bad_request(
            "a commit that adds a snapshot makes no other change: commit schema and property "
            "changes on their own"
        )


class AddSnapshotUpdate(SnapshotUpdate):
    """Add a snapshot, made on the table's current one or on one added before it."""

    action: Literal["add-snapshot"] = "add-snapshot"
    snapshot: AddedSnapshot


class SetSnapshotRefUpdate(BaseUpdate):
    """Point branch or tag ``ref-name`` at a snapshot.

    Branch ``main`` is moved only by a commit that adds snapshots (``appends``); any other
    ref is kept in the table's Iceberg state, a catalog version.
    """

    action: Literal["set-snapshot-ref"] = "set-snapshot-ref"
    ref_name: str = Field(alias="ref-name")
    type: Literal["tag", "branch"]
    snapshot_id: int = Field(alias="snapshot-id")
    max_ref_age_ms: int | None = Field(default=None, alias="max-ref-age-ms")
    max_snapshot_age_ms: int | None = Field(default=None, alias="max-snapshot-age-ms")
    min_snapshots_to_keep: int | None = Field(default=None, alias="min-snapshots-to-keep")

    def apply(self, changes: CommitChanges) -> None:
        """Record a tag or branch to set; main without a new snapshot is refused."""
        if self.ref_name == MAIN:
            raise bad_request(
                "set-snapshot-ref main without a new snapshot (a rollback) is refused: branch "
                "main is the table's data history, at its latest data commit, and moves forward "
                "only"
            )
        changes.set_refs.append(self.ref())

    def ref(self) -> SnapshotRef:
        """Return the tag or branch as the table's Iceberg state keeps it.

        Raises:
            ValidationError: a name or retention the state refuses.
        """
        return SnapshotRef(
            name=self.ref_name,
            snapshot_id=self.snapshot_id,
            type=RefType(self.type),
            max_ref_age_ms=self.max_ref_age_ms,
            max_snapshot_age_ms=self.max_snapshot_age_ms,
            min_snapshots_to_keep=self.min_snapshots_to_keep,
        )

    @classmethod
    def of(cls, name: str, ref: Mapping[str, Any]) -> SnapshotRef:
        """Return a metadata ``refs`` entry (``snapshot-id``, ``type``, retention) as a ref.

        Raises:
            pydantic.ValidationError: a member missing or of the wrong kind.
            ValidationError: a name or retention the state refuses.
        """
        return cls.model_validate({**ref, "ref-name": name}).ref()


class RemoveSnapshotsUpdate(BaseUpdate):
    """Remove snapshots: the oldest ones, up to the newest named (an expiry mark)."""

    action: Literal["remove-snapshots"] = "remove-snapshots"
    snapshot_ids: list[int] = Field(alias="snapshot-ids")

    def apply(self, changes: CommitChanges) -> None:
        """Record the snapshots to remove."""
        changes.removed_snapshots += self.snapshot_ids


class RemoveSnapshotRefUpdate(BaseUpdate):
    """Remove a branch or tag (never main)."""

    action: Literal["remove-snapshot-ref"] = "remove-snapshot-ref"
    ref_name: str = Field(alias="ref-name")

    def apply(self, changes: CommitChanges) -> None:
        """Record the ref to remove."""
        changes.removed_refs.append(self.ref_name)


class SetLocationUpdate(BaseUpdate):
    """Move the table (``catalog.data.locations``' rules; a table with snapshots stays)."""

    action: Literal["set-location"] = "set-location"
    location: str

    def apply(self, changes: CommitChanges) -> None:
        """Record the new location."""
        changes.location = self.location


class SetPropertiesUpdate(BaseUpdate):
    """Set table properties (each must be one the catalog keeps)."""

    action: Literal["set-properties"] = "set-properties"
    updates: Properties

    def apply(self, changes: CommitChanges) -> None:
        """Record the properties to set."""
        changes.set_properties.update(self.updates)


class RemovePropertiesUpdate(BaseUpdate):
    """Remove table properties (each goes back to the catalog's default)."""

    action: Literal["remove-properties"] = "remove-properties"
    removals: list[str]

    def apply(self, changes: CommitChanges) -> None:
        """Record the properties to remove."""
        changes.removed_properties += self.removals


class BlobMetadata(IcebergModel):
    """One blob of a statistics file."""

    type: str
    snapshot_id: int = Field(alias="snapshot-id")
    sequence_number: int = Field(alias="sequence-number")
    fields: list[int]
    properties: Properties = Field(default_factory=dict)


class StatisticsFile(IcebergModel):
    """A Puffin file of a snapshot's table statistics."""

    snapshot_id: int = Field(alias="snapshot-id")
    statistics_path: str = Field(alias="statistics-path")
    file_size_in_bytes: int = Field(alias="file-size-in-bytes")
    file_footer_size_in_bytes: int = Field(alias="file-footer-size-in-bytes")
    blob_metadata: list[BlobMetadata] = Field(alias="blob-metadata")


class PartitionStatisticsFile(IcebergModel):
    """A file of a snapshot's partition statistics."""

    snapshot_id: int = Field(alias="snapshot-id")
    statistics_path: str = Field(alias="statistics-path")
    file_size_in_bytes: int = Field(alias="file-size-in-bytes")


def _document(snapshot_id: int, body: IcebergModel) -> StatisticsDocument:
    """Return a statistics file as kept: its JSON as given (by alias, compact, keys sorted)."""
    text = json.dumps(body.model_dump(by_alias=True), separators=(",", ":"), sort_keys=True)
    return StatisticsDocument(snapshot_id=snapshot_id, document=text)


class SetStatisticsUpdate(BaseUpdate):
    """Set a snapshot's statistics file (kept verbatim)."""

    action: Literal["set-statistics"] = "set-statistics"
    snapshot_id: int | None = Field(default=None, alias="snapshot-id")
    """Deprecated by the protocol for ``statistics.snapshot-id``."""
    statistics: StatisticsFile

    def apply(self, changes: CommitChanges) -> None:
        """Record the statistics file."""
        snapshot_id = self.statistics.snapshot_id
        changes.set_statistics.append(_document(snapshot_id, self.statistics))


class RemoveStatisticsUpdate(BaseUpdate):
    """Remove a snapshot's statistics file."""

    action: Literal["remove-statistics"] = "remove-statistics"
    snapshot_id: int = Field(alias="snapshot-id")

    def apply(self, changes: CommitChanges) -> None:
        """Record the statistics file to remove."""
        changes.removed_statistics.append(self.snapshot_id)


class SetPartitionStatisticsUpdate(BaseUpdate):
    """Set a snapshot's partition statistics file (kept verbatim)."""

    action: Literal["set-partition-statistics"] = "set-partition-statistics"
    partition_statistics: PartitionStatisticsFile = Field(alias="partition-statistics")

    def apply(self, changes: CommitChanges) -> None:
        """Record the partition statistics file."""
        snapshot_id = self.partition_statistics.snapshot_id
        changes.set_partition_statistics.append(_document(snapshot_id, self.partition_statistics))


class RemovePartitionStatisticsUpdate(BaseUpdate):
    """Remove a snapshot's partition statistics file."""

    action: Literal["remove-partition-statistics"] = "remove-partition-statistics"
    snapshot_id: int = Field(alias="snapshot-id")

    def apply(self, changes: CommitChanges) -> None:
        """Record the partition statistics file to remove."""
        changes.removed_partition_statistics.append(self.snapshot_id)


class RemovePartitionSpecsUpdate(BaseUpdate):
    """Remove partition specs other than the default."""

    action: Literal["remove-partition-specs"] = "remove-partition-specs"
    spec_ids: list[int] = Field(alias="spec-ids")

    def apply(self, changes: CommitChanges) -> None:
        """Record the specs to remove."""
        changes.removed_specs += self.spec_ids


class RemoveSchemasUpdate(BaseUpdate):
    """Stop serving old schemas (never the current one); the catalog still keeps them."""

    action: Literal["remove-schemas"] = "remove-schemas"
    schema_ids: list[int] = Field(alias="schema-ids")

    def apply(self, changes: CommitChanges) -> None:
        """Record the schemas to stop serving."""
        changes.removed_schemas += self.schema_ids


class EncryptedKey(IcebergModel):
    """An encryption key, itself encrypted (``encrypted-key-metadata`` in base64)."""

    key_id: str = Field(alias="key-id")
    encrypted_key_metadata: str = Field(alias="encrypted-key-metadata")
    encrypted_by_id: str | None = Field(default=None, alias="encrypted-by-id")
    properties: Properties = Field(default_factory=dict)


class AddEncryptionKeyUpdate(BaseUpdate):
    """Add an encryption key (refused: tables are not encrypted)."""

    action: Literal["add-encryption-key"] = "add-encryption-key"
    encryption_key: EncryptedKey = Field(alias="encryption-key")


class RemoveEncryptionKeyUpdate(BaseUpdate):
    """Remove an encryption key (refused)."""

    action: Literal["remove-encryption-key"] = "remove-encryption-key"
    key_id: str = Field(alias="key-id")


TableUpdate = Annotated[
    AssignUUIDUpdate
    | UpgradeFormatVersionUpdate
    | AddSchemaUpdate
    | SetCurrentSchemaUpdate
    | AddPartitionSpecUpdate
    | SetDefaultSpecUpdate
    | AddSortOrderUpdate
    | SetDefaultSortOrderUpdate
    | AddSnapshotUpdate
    | SetSnapshotRefUpdate
    | RemoveSnapshotsUpdate
    | RemoveSnapshotRefUpdate
    | SetLocationUpdate
    | SetPropertiesUpdate
    | RemovePropertiesUpdate
    | SetStatisticsUpdate
    | RemoveStatisticsUpdate
    | SetPartitionStatisticsUpdate
    | RemovePartitionStatisticsUpdate
    | RemovePartitionSpecsUpdate
    | RemoveSchemasUpdate
    | AddEncryptionKeyUpdate
    | RemoveEncryptionKeyUpdate,
    Field(discriminator="action"),
]
"""Any table update of the protocol, told apart by its ``action``."""
