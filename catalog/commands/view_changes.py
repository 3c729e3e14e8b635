"""How a view changes: Iceberg's rules for its schemas, versions, log and kept history.

``ViewChange`` starts from a view (or nothing, for a new one) and takes the changes an
engine or a person asks for, in order, as Java's ``ViewMetadata.Builder`` does:

- a schema equal to one the view has keeps that schema's id; another gets the next id;
- a version saying what a kept version says (its id and time aside) is that version; another
  gets the next id, never one the view used before;
- the id ``-1`` names the schema (or version) added last by the same change;
- making a version current appends to the log; a view keeps its newest
  ``version.history.num-entries`` versions (10 by default), always with the current one,
  and the newest part of its log whose versions it keeps;
- a replace may not drop a dialect the current version has, unless the view's property
  ``replace.drop-dialect.allowed`` is true as the change leaves it (a replace may set it).

``entry`` then says the change as one ``ReplaceViewEntry``, holding only what is new.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from catalog.descriptors.views import (
    ViewColumn,
    ViewDescriptor,
    ViewLogEntry,
    ViewSchema,
    ViewVersion,
    trimmed_log,
)
from catalog.entries import ReplaceViewEntry
from catalog.errors import ValidationError
from catalog.properties import Properties, changed_properties, properties_dict

LAST_ADDED = -1
"""The id that names the schema or version added last in the same change."""
HISTORY_PROPERTY = "version.history.num-entries"
DEFAULT_HISTORY = 10
DROP_DIALECT_PROPERTY = "replace.drop-dialect.allowed"


class ViewChange:
    """A view being changed; ``view`` is the result so far."""

    def __init__(self, view: ViewDescriptor, *, name: str, now_ms: int) -> None:
        self.before = view
        self.now_ms = now_ms
        self._added: set[int] = set()
        self.name = name
        self.schemas = list(view.schemas)
        self.versions = list(view.versions)
        self.current_version_id = view.current_version_id
        self.log = list(view.log)
        self.properties: Properties = view.properties
        self.location = view.location
        self._last_schema: int | None = None
        self._last_version: int | None = None
        self._next_version = 1 + max(
            [0, *(v.version_id for v in view.versions), *(e.version_id for e in view.log)]
        )

    def add_schema(self, columns: tuple[ViewColumn, ...]) -> int:
        """Add a schema (or find an equal one); return its id."""
        for schema in self.schemas:
            if schema.columns == columns:
                self._last_schema = schema.schema_id
                return schema.schema_id
        schema_id = 1 + max((s.schema_id for s in self.schemas), default=-1)
        self.schemas.append(ViewSchema(schema_id=schema_id, columns=columns))
        self._last_schema = schema_id
        return schema_id

    def add_version(self, version: ViewVersion) -> int:
        """Add a version (or find one saying the same); return its id.

        Its ``version_id`` is ignored; a ``schema_id`` of -1 names the schema added last.

        Raises:
            ValidationError: the schema is unknown, or two queries share a dialect.
        """
        schema_id = version.schema_id
        if schema_id == LAST_ADDED:
            if self._last_schema is None:
                raise ValidationError(
                    f"view {self.name}: a version names the schema added last (-1), but no "
                    "schema was added"
                )
            schema_id = self._last_schema
        if all(s.schema_id != schema_id for s in self.schemas):
            raise ValidationError(f"view {self.name}: a version names unknown schema {schema_id}")
        dialects = [r.dialect.lower() for r in version.representations]
        repeated = sorted({d for d in dialects if dialects.count(d) > 1})
        if repeated:
            raise ValidationError(
                f"view {self.name}: a version has more than one query for dialect {repeated[0]}"
            )
        version = version.model_copy(update={"schema_id": schema_id})
        for kept in self.versions:
            if kept.same_query(version):
                self._last_version = kept.version_id
                return kept.version_id
        version_id = self._next_version
        self._next_version += 1
        self.versions.append(version.model_copy(update={"version_id": version_id}))
        self._last_version = version_id
        self._added.add(version_id)
        return version_id

    def set_current(self, version_id: int) -> None:
        """Make a kept version (-1: the one added last) current, and log it.

        Raises:
            ValidationError: no such version.
        """
        if version_id == LAST_ADDED:
            if self._last_version is None:
                raise ValidationError(
                    f"view {self.name}: the version added last (-1) is made current, but no "
                    "version was added"
                )
            version_id = self._last_version
        version = next((v for v in self.versions if v.version_id == version_id), None)
        if version is None:
            raise ValidationError(f"view {self.name} has no version {version_id}")
        if version_id == self.current_version_id and self.log:
            return
        self.current_version_id = version_id
        # a version added by this change became current when it was made; an older one now
        at = version.timestamp_ms if version_id in self._added else self.now_ms
        self.log.append(ViewLogEntry(timestamp_ms=at, version_id=version_id))

    def _check_dialects_kept(self) -> None:
        """Refuse a current version without a dialect the view's current one had.

        As Java's ``ViewMetadata.Builder.build()``: once every change is made, so the
        property is the one the change leaves (a replace may set it as it drops a dialect).
        """
        if not self.before.log:  # a new view has no current version to compare with
            return
        allowed = properties_dict(self.properties).get(DROP_DIALECT_PROPERTY, "false")
        if allowed.lower() == "true":
            return
        was = self.before.current
        now = next(v for v in self.versions if v.version_id == self.current_version_id)
        kept = {r.dialect.lower() for r in now.representations}
        dropped = sorted({r.dialect.lower() for r in was.representations} - kept)
        if dropped:
            raise ValidationError(
                f"view {self.name}: the new version drops the {dropped[0]} query the current "
                f"version has; give a query for every dialect of the view, or set "
                f"{DROP_DIALECT_PROPERTY}=true"
            )

    def change_properties(self, updates: Mapping[str, str], removals: Iterable[str]) -> None:
        """Set and remove properties (removals first)."""
        self.properties = changed_properties(self.properties, updates, removals)

    def view(self) -> ViewDescriptor:
        """Return the view as changed, with only its newest versions kept.

        Raises:
            ValidationError: its current version drops a dialect (``_check_dialects_kept``).
        """
        self._check_dialects_kept()
        versions = self._kept_versions()
        return self.before.model_copy(
            update={
                "schemas": tuple(self.schemas),
                "versions": versions,
                "current_version_id": self.current_version_id,
                "log": trimmed_log(tuple(self.log), {v.version_id for v in versions}),
                "properties": self.properties,
                "location": self.location,
            }
        )

    def _kept_versions(self) -> tuple[ViewVersion, ...]:
        """Return the current version and the newest others, as the history property says.

        Every version this change added is kept, however small the history.
        """
        text = properties_dict(self.properties).get(HISTORY_PROPERTY)
        try:
            history = DEFAULT_HISTORY if text is None else int(text)
        except ValueError:
            raise ValidationError(
                f"view {self.name}: {HISTORY_PROPERTY} must be a whole number, not {text!r}"
            ) from None
        if history < 1:
            raise ValidationError(f"view {self.name}: {HISTORY_PROPERTY} must be at least 1")
        keep = max(history, len(self._added | {self.current_version_id}))
        if len(self.versions) <= keep:
            return tuple(self.versions)
        newest = sorted(
            v.version_id for v in self.versions if v.version_id != self.current_version_id
        )
        kept = {self.current_version_id, *newest[len(newest) - (keep - 1) :]}
        return tuple(v for v in self.versions if v.version_id in kept)

    def entry(self, view_id: int) -> ReplaceViewEntry | None:
        """Return the change as an entry holding only what is new (None: nothing changed)."""
        after = self.view()
        before = self.before
        known_schemas = {s.schema_id for s in before.schemas}
        known_versions = {v.version_id for v in before.versions}
        kept = {v.version_id for v in after.versions}
        entry = ReplaceViewEntry(
            view_id=view_id,
            added_schemas=tuple(s for s in after.schemas if s.schema_id not in known_schemas),
            added_versions=tuple(v for v in after.versions if v.version_id not in known_versions),
            forgotten_versions=tuple(i for i in sorted(known_versions) if i not in kept),
            current_version_id=after.current_version_id,
            log=tuple(self.log[len(before.log) :]),
            properties_changed=after.properties != before.properties,
            properties=after.properties if after.properties != before.properties else (),
            location=None if after.location == before.location else after.location,
        )
        unchanged = (
            not entry.added_schemas
            and not entry.added_versions
            and not entry.forgotten_versions
            and not entry.log
            and not entry.properties_changed
            and entry.location is None
        )
        return None if unchanged else entry
