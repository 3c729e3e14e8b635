"""The contract every command follows, and the checks commands share.

A command is validated in two steps, as in Ignite 3: its shape when it is built (pydantic
validators: names, duplicates, ranges), and its meaning against the catalog in ``entries``.
"""

from __future__ import annotations

import unicodedata
from abc import abstractmethod
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, Generic, TypeVar

from pydantic import AfterValidator

from catalog.catalog import Catalog
from catalog.descriptors import IndexDescriptor, SchemaDescriptor, TableDescriptor
from catalog.descriptors.schemas import SYSTEM_SCHEMAS
from catalog.entries.base import EntryBase
from catalog.errors import AlreadyExistsError, ErrorCode, NotFoundError, ValidationError
from catalog.model import Model

R = TypeVar("R")

MAX_NAME_LENGTH = 128


_REFUSED_CATEGORIES = {
    "Cc": "a control character",
    "Cf": "an invisible formatting character (zero-width or bidirectional)",
    "Cs": "a lone surrogate",
    "Co": "a private-use character",
    "Cn": "an unassigned character",
    "Zl": "a line separator",
    "Zp": "a paragraph separator",
}


def check_name(name: str) -> str:
    """Check an object name and return it in Unicode normal form C.

    A name holds 1..128 characters, is not blank, and holds no ``/`` (it would not fit in a
    REST path) and no control, invisible formatting (zero-width, bidirectional), surrogate,
    private-use or unassigned characters. Names are case-sensitive; two spellings of one
    text (composed or decomposed accents) are one name.

    Raises:
        ValidationError: the name breaks one of these rules; the message says which.
    """
    if not name:
        raise ValidationError("a name must not be empty")
    name = unicodedata.normalize("NFC", name)
    if name.isspace():
        # Ignite's validateIdentifier refuses blank names too.
        raise ValidationError("a name must not be blank")
    if len(name) > MAX_NAME_LENGTH:
        raise ValidationError(
            f"a name must be at most {MAX_NAME_LENGTH} characters, this one has {len(name)}"
        )
    if "/" in name:
        raise ValidationError(f"a name must not contain '/': {name}")
    for position, ch in enumerate(name, start=1):
        refused = _REFUSED_CATEGORIES.get(unicodedata.category(ch))
        if refused is not None:
            shown = name.encode("ascii", "backslashreplace").decode()
            raise ValidationError(
                f"a name must not contain {refused} (U+{ord(ch):04X} at position {position}):"
                f" {shown}"
            )
    return name


Name = Annotated[str, AfterValidator(check_name)]
"""An object name, checked by ``check_name``."""


def unique(values: tuple[str, ...], what: str) -> tuple[str, ...]:
    """Return ``values`` if they hold no duplicates.

    Raises:
        ValidationError: a value occurs twice.
    """
    seen: set[str] = set()
    for v in values:
        if v in seen:
            raise ValidationError(f"duplicate {what}: {v}")
        seen.add(v)
    return values


@dataclass(frozen=True, slots=True)
class UpdateContext:
    """What a command sees: the catalog before its batch and the one updated so far.

    ``catalog`` already holds the effects of the earlier commands of the same batch;
    ``base`` does not (an index created in the same batch as its table starts AVAILABLE).
    ``warehouse`` is the cluster's warehouse folder, in which a new table records its
    location (None: the cluster has none, and new tables record no location).
    """

    base: Catalog
    catalog: Catalog
    warehouse: str | None = None


class CommandBase(Model):
    """A DDL command. Subclasses declare a stable ``op: Literal[...]`` tag and ``entries``."""

    def entries(self, ctx: UpdateContext) -> list[EntryBase]:
        """Validate against ``ctx.catalog`` and return the update entries (empty: no-op).

        Raises:
            CatalogError: with a stable code, when the command does not fit the catalog.
        """
        raise NotImplementedError(type(self).__name__)  # every concrete command overrides it


class ExistingObjectCommand(CommandBase, Generic[R]):
    """A command that changes or drops one object: ``find`` looks it up, ``entries_for`` acts.

    With IF EXISTS, ``find`` gives None for a missing object and the command is a no-op (as
    in Ignite).
    """

    def entries(self, ctx: UpdateContext) -> list[EntryBase]:  # noqa: D102
        found = self.find(ctx)
        return [] if found is None else self.entries_for(ctx, found)

    @abstractmethod
    def find(self, ctx: UpdateContext) -> R | None:
        """Return the object, or None when it is missing and the command allows that.

        Raises:
            CatalogError: the object, or what holds it, is missing and the command needs it.
        """

    @abstractmethod
    def entries_for(self, ctx: UpdateContext, found: R) -> list[EntryBase]:
        """Validate against ``ctx.catalog`` and return the entries changing ``found``.

        Raises:
            CatalogError: with a stable code, when the command does not fit the catalog.
        """


class TableCommand(ExistingObjectCommand[TableDescriptor]):
    """A command about the table ``schema_.table``; with ``if_table_exists`` it may be missing."""

    if TYPE_CHECKING:
        # Each command declares these fields itself, where its wire form (its fields in
        # declaration order) has them; fields of a base class would come first.
        schema_: str
        table: str
        if_table_exists: bool

    def find(self, ctx: UpdateContext) -> TableDescriptor | None:  # noqa: D102
        return existing_table(ctx.catalog, self.schema_, self.table, self.if_table_exists)


def check_not_system(name: str) -> None:
    """Refuse user DDL about an object of a system schema, whether that schema exists or not.

    Raises:
        ValidationError: ``name`` is a reserved system schema (``SYSTEM_SCHEMAS``).
    """
    if name in SYSTEM_SCHEMAS:
        raise ValidationError(f"objects in system schema {name} cannot be changed")


def user_schema(catalog: Catalog, name: str) -> SchemaDescriptor:
    """Return schema ``name`` for user DDL: it must exist and not be a system schema.

    Raises:
        NotFoundError: SCHEMA_NOT_FOUND.
        ValidationError: the schema is a system schema.
    """
    check_not_system(name)
    return catalog.schema(name)


def existing_table(
    catalog: Catalog, schema: str, name: str, if_exists: bool
) -> TableDescriptor | None:
    """Return table ``schema.name`` for a command that changes or drops it.

    With IF EXISTS, a missing table, or a missing schema, is None (as in Ignite).

    Raises:
        NotFoundError: SCHEMA_NOT_FOUND, or TABLE_NOT_FOUND without IF EXISTS.
        ValidationError: the schema is a system schema.
    """
    return _existing(catalog, schema, name, if_exists, catalog.find_table, "table")


def existing_index(
    catalog: Catalog, schema: str, name: str, if_exists: bool
) -> IndexDescriptor | None:
    """Return the alive index ``schema.name`` to change (see ``existing_table``)."""
    return _existing(catalog, schema, name, if_exists, catalog.find_index, "index")


def _existing(
    catalog: Catalog,
    schema_name: str,
    name: str,
    if_exists: bool,
    find: Callable[[str, str], R | None],
    what: str,
) -> R | None:
    if if_exists and catalog.find_schema(schema_name) is None:
        check_not_system(schema_name)
        return None
    schema = user_schema(catalog, schema_name)
    found = find(schema.name, name)
    if found is None and not if_exists:
        raise NotFoundError(
            f"{what} {schema.name}.{name} not found", code=ErrorCode(f"{what.upper()}_NOT_FOUND")
        )
    return found


def ensure_relation_name_free(catalog: Catalog, schema: SchemaDescriptor, name: str) -> None:
    """Check that no table, alive index or view of ``schema`` is named ``name`` (one namespace).

    Raises:
        AlreadyExistsError: TABLE_EXISTS, INDEX_EXISTS or VIEW_EXISTS, after what holds the name.
    """
    if catalog.find_table(schema.name, name) is not None:
        raise AlreadyExistsError(
            f"table {schema.name}.{name} already exists", code=ErrorCode.TABLE_EXISTS
        )
    if catalog.find_index(schema.name, name) is not None:
        raise AlreadyExistsError(
            f"index {schema.name}.{name} already exists", code=ErrorCode.INDEX_EXISTS
        )
    if catalog.view_id(schema.id, name) is not None:
        raise AlreadyExistsError(
            f"view {schema.name}.{name} already exists", code=ErrorCode.VIEW_EXISTS
        )


def schema_for_new(
    catalog: Catalog,
    schema_name: str,
    name: str,
    if_not_exists: bool,
    find: Callable[[str, str], object | None],
) -> SchemaDescriptor | None:
    """Return the user schema a new table or index ``name`` goes in, the name free there.

    With IF NOT EXISTS, None when ``find`` already finds ``name`` there: the command is a no-op.

    Raises:
        NotFoundError: SCHEMA_NOT_FOUND.
        ValidationError: the schema is a system schema.
        AlreadyExistsError: TABLE_EXISTS or INDEX_EXISTS (see ``ensure_relation_name_free``).
    """
    schema = user_schema(catalog, schema_name)
    if if_not_exists and find(schema.name, name) is not None:
        return None
    ensure_relation_name_free(catalog, schema, name)
    return schema


def pk_index_name(table_name: str) -> str:
    """Return the name of a table's primary-key index, ``<TABLE>_PK``.

    Raises:
        ValidationError: the resulting name would be longer than the name limit.
    """
    return check_name(f"{table_name}_PK")
