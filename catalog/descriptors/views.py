"""``ViewDescriptor``: a view, a stored query per SQL dialect with the columns it yields.

A view follows Iceberg's view spec: it has versions, each a query text per dialect (its
representations), the default catalog and namespace its names resolve in, and the schema of
its rows; one version is current, and a log says when each became current. The catalog
stores a view's text exactly as given and never runs it: the engine that reads the view
does.
"""

from __future__ import annotations

from catalog.column_types import ColumnType
from catalog.model import Model
from catalog.properties import Properties

VIEW_FORMAT_VERSION = 1
"""The Iceberg view format version every view is kept in (the spec's only one)."""


class ViewColumn(Model):
    """One column of a view's schema: an Iceberg field id, a name, a type and a comment."""

    id: int
    name: str
    type: ColumnType
    nullable: bool = True
    precision: int | None = None
    scale: int | None = None
    length: int | None = None
    doc: str | None = None


class ViewSchema(Model):
    """The columns of one schema of a view, under its id (numbered from 0, as Iceberg does)."""

    schema_id: int
    columns: tuple[ViewColumn, ...]


class ViewRepresentation(Model):
    """A view's query in one SQL dialect (``spark``, ``trino``, ...), as it was given."""

    dialect: str
    sql: str


class ViewVersion(Model):
    """One version of a view: its query texts, the names they resolve in, and its schema."""

    version_id: int
    timestamp_ms: int
    schema_id: int
    representations: tuple[ViewRepresentation, ...]
    default_namespace: tuple[str, ...]
    default_catalog: str | None = None
    summary: Properties = ()
    """What made the version (Iceberg's ``summary``: ``engine-name``, ``engine-version``...)."""

    def same_query(self, other: ViewVersion) -> bool:
        """Return True if ``other`` says the same as this version, its id and time aside."""
        return (
            self.schema_id,
            self.representations,
            self.default_namespace,
            self.default_catalog,
            self.summary,
        ) == (
            other.schema_id,
            other.representations,
            other.default_namespace,
            other.default_catalog,
            other.summary,
        )


class ViewLogEntry(Model):
    """When a version of a view became its current one."""

    timestamp_ms: int
    version_id: int


def trimmed_log(log: tuple[ViewLogEntry, ...], kept: set[int]) -> tuple[ViewLogEntry, ...]:
    """Return the newest part of ``log`` whose versions are all still kept (Iceberg's rule)."""
    start = len(log)
    while start > 0 and log[start - 1].version_id in kept:
        start -= 1
    return log[start:]


class ViewDescriptor(Model):
    """A view in a schema: its kept versions, the current one, and its schemas and properties.

    Views and tables share their schema's names: a view cannot take a table's name, nor a
    table a view's. ``versions`` keeps the newest versions (``version.history.num-entries``
    of its properties, 10 by default, always with the current one); ``log`` says when each
    version became current.
    """

    id: int
    schema_id: int
    name: str
    uuid: str
    location: str | None
    current_version_id: int
    versions: tuple[ViewVersion, ...]
    schemas: tuple[ViewSchema, ...]
    log: tuple[ViewLogEntry, ...]
    properties: Properties = ()
    update_ts: int = 0
    """The activation timestamp of the version that last changed it (the causality token)."""

    @property
    def current(self) -> ViewVersion:
        """Return the current version."""
        return self.version(self.current_version_id)

    def version(self, version_id: int) -> ViewVersion:
        """Return one of the kept versions.

        Raises:
            KeyError: the view keeps no version of that id.
        """
        for version in self.versions:
            if version.version_id == version_id:
                return version
        raise KeyError(f"view {self.name} keeps no version {version_id}")

    def schema_of(self, schema_id: int) -> ViewSchema:
        """Return the schema of ``schema_id``.

        Raises:
            KeyError: the view has no schema of that id.
        """
        for schema in self.schemas:
            if schema.schema_id == schema_id:
                return schema
        raise KeyError(f"view {self.name} has no schema {schema_id}")

    @property
    def columns(self) -> tuple[ViewColumn, ...]:
        """Return the columns of the current version's schema."""
        return self.schema_of(self.current.schema_id).columns
