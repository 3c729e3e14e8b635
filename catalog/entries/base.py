"""The contract every update entry follows: a pure ``apply`` and the event it fires.

Most entries put one descriptor, remove one object by id, or change one object found by id.
``PutEntry``, ``RemoveEntry`` and ``ChangeEntry`` do that once for every kind of object; a
concrete entry declares its wire tag and its fields in its body, names its event and the
``kind`` of object it is about as class keywords, and, for a change, says what it changes::

    class DropTableEntry(RemoveEntry, event=CatalogEvent.TABLE_DROP, kind=TABLES):
        type: Literal["drop_table"] = "drop_table"
        table_id: int
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar, Generic, TypeVar

from catalog.catalog import Catalog
from catalog.descriptors import Descriptor
from catalog.events import CatalogEvent
from catalog.model import Model

_D = TypeVar("_D", bound=Descriptor)


class EntryBase(Model):
    """One small, self-contained change to a catalog.

    Subclasses declare a stable wire tag ``type: Literal[...]`` (never renamed or reused), name
    the ``event`` they fire as a class keyword (none for internal bookkeeping), and implement
    ``apply``.
    """

    event: ClassVar[CatalogEvent | None] = None

    def __init_subclass__(cls, **constants: Any) -> None:
        """Set each class constant named as a class keyword, such as ``event=...``.

        A base declares every such constant, with its type, as a ``ClassVar``; a constant that
        a subclass does not name keeps its base's value.

        Raises:
            TypeError: a keyword names no ``ClassVar`` of the class.
        """
        unknown = sorted(constants.keys() - cls.__class_vars__)
        if unknown:
            raise TypeError(f"{cls.__name__} has no class constant {', '.join(unknown)}")
        super().__init_subclass__()
        for name, value in constants.items():
            setattr(cls, name, value)

    def apply(self, catalog: Catalog) -> Catalog:
        """Return ``catalog`` with this change applied. Pure: ``catalog`` is not modified."""
        raise NotImplementedError(type(self).__name__)  # every concrete entry overrides it

    def subject(self, before: Catalog, after: Catalog) -> Descriptor | None:
        """Return the descriptor the event is about: the new one, or the removed one for drops."""
        return None


@dataclass(frozen=True, slots=True)
class ObjectKind(Generic[_D]):
    """A kind of catalog object as entries put it whole."""

    field: str
    """The entry attribute that holds a whole descriptor (``table``)."""
    put: Callable[[Catalog, _D], Catalog]
    """Return the catalog with the descriptor added or replaced (by id)."""


@dataclass(frozen=True, slots=True)
class ObjectKindById(ObjectKind[_D]):
    """A kind of catalog object that entries also find and remove by id."""

    id_field: str
    """The entry attribute that holds an object's id (``table_id``)."""
    by_id: Callable[[Catalog, int], _D]
    """Return the object of that id, or raise its NOT_FOUND error."""
    remove: Callable[[Catalog, int], Catalog]
    """Return the catalog without the object of that id."""


SCHEMAS = ObjectKindById(
    "schema_", Catalog.with_schema, "schema_id", Catalog.schema_by_id, Catalog.without_schema
)
TABLES = ObjectKindById(
    "table", Catalog.with_table, "table_id", Catalog.table_by_id, Catalog.without_table
)
INDEXES = ObjectKindById(
    "index", Catalog.with_index, "index_id", Catalog.index_by_id, Catalog.without_index
)
ZONES = ObjectKindById(
    "zone", Catalog.with_zone, "zone_id", Catalog.zone_by_id, Catalog.without_zone
)
SYSTEM_VIEWS = ObjectKind("system_view", Catalog.with_system_view)
VIEWS = ObjectKindById(
    "view", Catalog.with_view, "view_id", Catalog.view_by_id, Catalog.without_view
)
PRINCIPALS = ObjectKindById(
    "principal",
    Catalog.with_principal,
    "principal_id",
    Catalog.principal_by_id,
    Catalog.without_principal,
)
ROLES = ObjectKindById(
    "role", Catalog.with_role, "role_id", Catalog.role_by_id, Catalog.without_role
)
GRANTS = ObjectKindById(
    "grant", Catalog.with_grant, "grant_id", Catalog.grant_by_id, Catalog.without_grant
)


class PutEntry(EntryBase):
    """Put the descriptor it holds, in place of any object of its kind and id."""

    kind: ClassVar[ObjectKind[Any]]

    def apply(self, catalog: Catalog) -> Catalog:  # noqa: D102
        kind = self.kind
        return kind.put(catalog, getattr(self, kind.field))

    def subject(self, before: Catalog, after: Catalog) -> Descriptor | None:  # noqa: D102
        descriptor: Descriptor = getattr(self, self.kind.field)
        return descriptor


class _ByIdEntry(EntryBase):
    kind: ClassVar[ObjectKindById[Any]]

    def found_in(self, catalog: Catalog) -> Descriptor:
        """Return the object of the id this entry holds, as it is in ``catalog``."""
        kind = self.kind
        found: Descriptor = kind.by_id(catalog, getattr(self, kind.id_field))
        return found


class RemoveEntry(_ByIdEntry):
    """Remove the object of the id it holds; its event is about the object removed."""

    def apply(self, catalog: Catalog) -> Catalog:  # noqa: D102
        kind = self.kind
        return kind.remove(catalog, getattr(self, kind.id_field))

    def subject(self, before: Catalog, after: Catalog) -> Descriptor | None:  # noqa: D102
        return self.found_in(before)


class ChangeEntry(_ByIdEntry):
    """Change the object of the id it holds; its event is about the object as changed.

    The change is a copy made by ``changed`` and put in the object's place.
    """

    def apply(self, catalog: Catalog) -> Catalog:  # noqa: D102
        return self.kind.put(catalog, self.changed(self.found_in(catalog)))

    @abstractmethod
    def changed(self, descriptor: Any) -> Descriptor:
        """Return ``descriptor`` (the object as it is) with this entry's change made."""

    def subject(self, before: Catalog, after: Catalog) -> Descriptor | None:  # noqa: D102
        return self.found_in(after)
