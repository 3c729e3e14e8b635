"""A commit's requirements: one model per kind, each checked against the table's metadata.

A requirement is tagged by ``type`` and asserts one thing of the table as the client read
it (the protocol's ``TableRequirement``). ``check`` raises ``CommitFailedException`` when it
no longer holds, so a client that read a table before another writer's change fails its
commit instead of overwriting that change. An unknown ``type`` is refused when the body is
read (400 ``BadRequestException`` naming the tag), before anything is checked.
"""

from __future__ import annotations

from abc import abstractmethod
from typing import Annotated, ClassVar, Literal

from pydantic import Field

from api.iceberg.errors import commit_failed
from api.iceberg.models import IcebergModel, TableMetadata


class BaseRequirement(IcebergModel):
    """What every requirement does: hold of a table's metadata, or fail the commit."""

    type: str
    CHANGED: ClassVar[str]
    """What no longer holds, in the words of Iceberg's own ``UpdateRequirement`` (clients and
    Iceberg's catalog tests read them after ``Requirement failed:``)."""

    def check(self, metadata: TableMetadata, table: str) -> None:
        """Check this requirement against ``table``'s current metadata.

        Raises:
            IcebergError: CommitFailedException saying why it does not hold.
        """
        reason = self.failure(metadata)
        if reason is not None:
            raise commit_failed(
                f"Requirement failed: {self.changed()} ({self.type} of table {table}: "
                f"{reason}); nothing was written: load the table again and retry"
            )

    def changed(self) -> str:
        """Return what no longer holds (``CHANGED``)."""
        return self.CHANGED

    @abstractmethod
    def failure(self, metadata: TableMetadata) -> str | None:
        """Return why this requirement does not hold of ``metadata``, or None when it holds."""


def _differs(member: str, actual: int, asked: int) -> str | None:
    return None if asked == actual else f"{member} is {actual}, not {asked}"


class AssertCreate(BaseRequirement):
    """The table must not exist yet (a create transaction's; ``staging`` handles those)."""

    type: Literal["assert-create"] = "assert-create"
    CHANGED: ClassVar[str] = "table already exists"

    def failure(self, metadata: TableMetadata) -> str | None:
        """Fail always: a commit checked against a table's metadata finds the table exists."""
        return "the table already exists"


class AssertTableUUID(BaseRequirement):
    """The table's uuid must be ``uuid`` (it was not dropped and created again)."""

    type: Literal["assert-table-uuid"] = "assert-table-uuid"
    CHANGED: ClassVar[str] = "UUID does not match"
    uuid: str

    def failure(self, metadata: TableMetadata) -> str | None:
        """Fail when the table has another uuid."""
        return None if self.uuid == metadata.table_uuid else f"table uuid is {metadata.table_uuid}"


class AssertRefSnapshotId(BaseRequirement):
    """Branch or tag ``ref`` must be at ``snapshot-id``; when that is null, must not exist."""

    type: Literal["assert-ref-snapshot-id"] = "assert-ref-snapshot-id"
    CHANGED: ClassVar[str] = "branch or tag has changed"
    ref: str
    snapshot_id: int | None = Field(default=None, alias="snapshot-id")

    def changed(self) -> str:
        """Return Iceberg's words for a moved, missing or concurrently created ref."""
        return f"branch or tag {self.ref} has changed"

    def failure(self, metadata: TableMetadata) -> str | None:
        """Fail when the ref is elsewhere, or exists when it should not, or not when it should."""
        at = metadata.refs.get(self.ref, {}).get("snapshot-id")
        if at == self.snapshot_id:
            return None
        if at is None:
            return f"branch or tag {self.ref} does not exist (the table has no snapshot on it)"
        if self.snapshot_id is None:
            return f"branch {self.ref} exists, at snapshot {at}"
        return f"branch {self.ref} is at snapshot {at}, not {self.snapshot_id}"


class AssertLastAssignedFieldId(BaseRequirement):
    """The table's last assigned column id must be ``last-assigned-field-id``."""

    type: Literal["assert-last-assigned-field-id"] = "assert-last-assigned-field-id"
    CHANGED: ClassVar[str] = "last assigned field id changed"
    last_assigned_field_id: int = Field(alias="last-assigned-field-id")

    def failure(self, metadata: TableMetadata) -> str | None:
        """Fail when a column was added since the client read the table."""
        return _differs(
            "last-assigned-field-id", metadata.last_column_id, self.last_assigned_field_id
        )


class AssertCurrentSchemaId(BaseRequirement):
    """The table's current schema must be ``current-schema-id``."""

    type: Literal["assert-current-schema-id"] = "assert-current-schema-id"
    CHANGED: ClassVar[str] = "current schema changed"
    current_schema_id: int = Field(alias="current-schema-id")

    def failure(self, metadata: TableMetadata) -> str | None:
        """Fail when the schema changed since the client read the table."""
        return _differs("current-schema-id", metadata.current_schema_id, self.current_schema_id)


class AssertLastAssignedPartitionId(BaseRequirement):
    """The table's last assigned partition field id must be ``last-assigned-partition-id``."""

    type: Literal["assert-last-assigned-partition-id"] = "assert-last-assigned-partition-id"
    CHANGED: ClassVar[str] = "last assigned partition id changed"
    last_assigned_partition_id: int = Field(alias="last-assigned-partition-id")

    def failure(self, metadata: TableMetadata) -> str | None:
        """Fail when the id differs (a table keeps the id of the unpartitioned spec)."""
        return _differs(
            "last-assigned-partition-id",
            metadata.last_partition_id,
            self.last_assigned_partition_id,
        )


class AssertDefaultSpecId(BaseRequirement):
    """The table's default partition spec must be ``default-spec-id``."""

    type: Literal["assert-default-spec-id"] = "assert-default-spec-id"
    CHANGED: ClassVar[str] = "default partition spec changed"
    default_spec_id: int = Field(alias="default-spec-id")

    def failure(self, metadata: TableMetadata) -> str | None:
        """Fail when the id differs (a table keeps its one unpartitioned spec)."""
        return _differs("default-spec-id", metadata.default_spec_id, self.default_spec_id)


class AssertDefaultSortOrderId(BaseRequirement):
    """The table's default sort order must be ``default-sort-order-id``."""

    type: Literal["assert-default-sort-order-id"] = "assert-default-sort-order-id"
    CHANGED: ClassVar[str] = "default sort order id changed"
    default_sort_order_id: int = Field(alias="default-sort-order-id")

    def failure(self, metadata: TableMetadata) -> str | None:
        """Fail when the id differs (a table keeps its one unsorted order)."""
        return _differs(
            "default-sort-order-id", metadata.default_sort_order_id, self.default_sort_order_id
        )


TableRequirement = Annotated[
    AssertCreate
    | AssertTableUUID
    | AssertRefSnapshotId
    | AssertLastAssignedFieldId
    | AssertCurrentSchemaId
    | AssertLastAssignedPartitionId
    | AssertDefaultSpecId
    | AssertDefaultSortOrderId,
    Field(discriminator="type"),
]
"""Any requirement of the protocol, told apart by its ``type``."""
