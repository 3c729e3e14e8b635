"""A new Iceberg schema's fields matched to a table's columns and nested fields by id.

``FieldTree`` holds both sides at every depth: the table's columns and nested fields (``old``)
and the schema's fields (``new``), each by id with its path and the id of the field holding it.
``check_kept`` refuses what the catalog cannot do to a field both sides have (move it to
another struct, reorder a struct, turn a struct, list or map into something else, give a
list's element or a map's key or value another id, change a map key's type), each refusal
naming the field's path. ``added_commands`` turns the added fields into ``add_columns``
commands that give them exactly the schema's ids.

Iceberg clients (Java's and PyIceberg's ``UpdateSchema``) give an added field the next id and
then its own nested fields the ids after it, a struct's own fields before theirs; the catalog
gives the fields of one command the next ids first, then their nested fields in the same order
(``catalog.commands.column_definitions``). So added fields go in the order of their ids, each
checked against the ids the catalog gives it, in one command with the fields before it when
those hold no fields of their own; a schema whose new ids no such order gives is refused,
naming the field.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from api.iceberg.errors import bad_request
from api.iceberg.models import IcebergSchema, StructField
from api.iceberg.nested_types import children, column_of, field_type
from api.iceberg.types import CatalogType, catalog_type, iceberg_type
from catalog.column_types import NESTED_TYPES, ColumnType
from catalog.commands import CommandBase
from catalog.commands.column_definitions import column_descriptors
from catalog.commands.columns import AddColumnsCommand
from catalog.descriptors import ColumnDescriptor, TableDescriptor
from catalog.descriptors.nested import KEY, Path, a_type, path_words, walk


@dataclass(frozen=True)
class OldField:
    """A column or nested field of the table: its path, itself, and the id holding it."""

    path: Path
    column: ColumnDescriptor
    parent: int | None

    @property
    def is_map(self) -> bool:
        """Whether it is a MAP (whose key never changes)."""
        return self.column.type is ColumnType.MAP


@dataclass(frozen=True)
class NewField:
    """A field of the new schema: its path, itself, its nested fields and the id holding it."""

    path: Path
    field: StructField
    children: tuple[StructField, ...]
    parent: int | None


@dataclass
class FieldTree:
    """The table's fields and the new schema's, each by id, outer fields before their own."""

    table: TableDescriptor
    old: dict[int, OldField] = field(default_factory=dict)
    new: dict[int, NewField] = field(default_factory=dict)

    @classmethod
    def of(cls, table: TableDescriptor, schema: IcebergSchema) -> FieldTree:
        """Return both sides of ``table`` and ``schema``.

        Raises:
            IcebergError: BadRequestException for a repeated field id, a type with no
                counterpart or a nested type object that cannot be read.
            ValidationError: a field nested too deep.
        """
        tree = cls(table)
        tree._add_old(table.columns, (), None)
        tree._add_new(schema.fields, (), None)
        return tree

    def _add_old(
        self, columns: Sequence[ColumnDescriptor], prefix: Path, parent: int | None
    ) -> None:
        for column in columns:
            path = (*prefix, column.name)
            self.old[column.id] = OldField(path, column, parent)
            self._add_old(column.fields, path, column.id)

    def _add_new(self, fields: Sequence[StructField], prefix: Path, parent: int | None) -> None:
        for f in fields:
            path = (*prefix, f.name)
            if f.id in self.new:
                raise bad_request(
                    f"the new schema of table {self.table.name} repeats field id {f.id} "
                    f"({path_words(self.new[f.id].path)} and {path_words(path)})"
                )
            held = tuple(children(self.table.name, f, path))
            self.new[f.id] = NewField(path, f, held, parent)
            self._add_new(held, path, f.id)

    def refuse(self, message: str) -> Exception:
        """Return the 400 refusing a change of this table."""
        return bad_request(f"table {self.table.name}: {message}")


def check_kept(tree: FieldTree) -> None:
    """Refuse what the catalog cannot do to a field both the table and the schema have.

    Raises:
        IcebergError: BadRequestException naming the field's path.
    """
    kept = [(tree.old[i], new) for i, new in tree.new.items() if i in tree.old]
    for old, new in kept:
        _check_kind(tree, old, new)
    for old, new in kept:
        if old.parent != new.parent:
            raise tree.refuse(
                f"field {path_words(old.path)} cannot move to {path_words(new.path)}: a field "
                "stays in the struct that holds it (drop it and add a new one)"
            )
    for old, new in kept:
        if old.column.type is ColumnType.STRUCT:
            held = [f.id for f in old.column.fields]
            _check_order(tree, path_words(old.path), held, [f.id for f in new.children])
        if old.parent is not None and tree.old[old.parent].is_map and old.column.name == KEY:
            _check_key(tree, old, new)


def _check_kind(tree: FieldTree, old: OldField, new: NewField) -> None:
    """Refuse a struct, list or map that becomes another kind, or a list's or map's new fields."""
    where = path_words(old.path)
    wanted = field_type(tree.table.name, new.field, new.path).type
    kind = old.column.type
    if (kind in NESTED_TYPES or wanted in NESTED_TYPES) and kind is not wanted:
        raise tree.refuse(
            f"field {where} is {a_type(kind)} and cannot become {a_type(wanted)}; drop it and add "
            "a new field"
        )
    held = [f.id for f in old.column.fields]
    if kind in (ColumnType.ARRAY, ColumnType.MAP) and held != [f.id for f in new.children]:
        names = ", ".join(f"{f.name} {f.id}" for f in old.column.fields)
        raise tree.refuse(
            f"the fields of {kind} {where} keep their ids ({names}); a new element, key or "
            "value is a new column: drop it and add a new one"
        )


def _check_order(tree: FieldTree, where: str, held: list[int], given: list[int]) -> None:
    """Refuse a struct whose fields (``held``, now ``given``) change order or follow new ones."""
    holds = set(held)
    kept = [i for i in given if i in holds]
    stays = set(kept)
    if given[: len(kept)] != kept or kept != [i for i in held if i in stays]:
        raise tree.refuse(
            f"this catalog cannot reorder the fields of struct {where}: keep its fields in "
            "their order and add new ones at its end"
        )


def served_type(column: ColumnDescriptor) -> CatalogType:
    """Return the catalog type a column's served Iceberg type reads back as (kind only, nested)."""
    if column.type in NESTED_TYPES:
        return CatalogType(column.type)
    return catalog_type(iceberg_type(column))


def _check_key(tree: FieldTree, old: OldField, new: NewField) -> None:
    wanted = field_type(tree.table.name, new.field, new.path)
    if wanted != served_type(old.column):
        raise tree.refuse(
            f"the key of map {path_words(old.path[:-1])} cannot change its type: a map keeps "
            "its keys as they are (make a new map field)"
        )


def refuse_reused(tree: FieldTree, replace: bool) -> None:
    """Refuse an added field whose id the table gave out before.

    A replace may give a dropped column's id back, with its nested fields' ids; a field added
    to a struct always takes a new id.

    Raises:
        IcebergError: BadRequestException naming the field.
    """
    after = tree.table.next_column_id
    for i, new in tree.new.items():
        if i in tree.old or i >= after:
            continue
        top = tree.new[_top(tree, i)]
        if replace and top.field.id not in tree.old:
            continue  # inside a column the replace adds: its ids are given as they are
        if replace:
            raise tree.refuse(
                f"field {path_words(new.path)} has id {i}, given out before; a field added to "
                "an existing struct takes a new id (after last-column-id "
                f"{after - 1})"
            )
        raise bad_request(
            f"field {path_words(new.path)} of table {tree.table.name} has id {i}, given out "
            "before to a column or field since dropped; this catalog never reuses a column id "
            "(an earlier schema cannot be made current again once one of its columns is "
            "dropped)"
        )


def _top(tree: FieldTree, field_id: int) -> int:
    parent = tree.new[field_id].parent
    while parent is not None:
        field_id, parent = parent, tree.new[parent].parent
    return field_id


def dropped_paths(tree: FieldTree, *, after_renames: bool) -> list[Path]:
    """Return the paths of the nested fields dropped from structs that stay.

    A field under a dropped field goes with it. With ``after_renames`` (a replace's drops
    run last), the path names the fields holding it by their new names.
    """
    paths = []
    for i, old in tree.old.items():
        if i in tree.new or old.parent is None or old.parent not in tree.new:
            continue
        holder = tree.new[old.parent].path if after_renames else old.path[:-1]
        paths.append((*holder, old.column.name))
    return paths


@dataclass
class _Run:
    """Added fields of one struct (or the table: ``parent`` empty) that one command adds."""

    parent: Path
    fields: list[StructField]
    flat: bool
    """Whether no field of the run holds fields of its own (so the next may join it)."""


def added_commands(tree: FieldTree, target: dict[str, Any], replace: bool) -> list[CommandBase]:
    """Return the commands adding the schema's new fields with the schema's ids.

    A replace's columns that take back a dropped id are added first, by one command naming
    every id. Every other added field goes in the order of its id, each checked to get from
    the catalog the ids the schema gives it; a field joins the command of the one before it
    (``_Run``) when both are of one struct (or the table's own) and no field of that command
    holds fields of its own, since the catalog numbers one command's fields before their
    nested fields.

    Raises:
        IcebergError: BadRequestException for new ids in no order the catalog gives them.
    """
    name = tree.table.name
    units: list[tuple[Path, StructField]] = []
    for i, new in tree.new.items():
        if i in tree.old or (new.parent is not None and new.parent not in tree.old):
            continue  # kept, or inside an added field
        units.append((() if new.parent is None else tree.new[new.parent].path, new.field))
    commands: list[CommandBase] = []
    next_id = tree.table.next_column_id
    given = [f for parent, f in units if not parent and _reuses(tree, f)] if replace else []
    if given:
        top = [f for parent, f in units if not parent]
        units = [(parent, f) for parent, f in units if parent]
        commands.append(
            AddColumnsCommand(
                **target,
                columns=[column_of(name, f, keep_ids=True) for f in top],
                column_ids=[f.id for f in top],
                replaces_rows=True,
            )
        )
        next_id = max(next_id, *(i + 1 for t in top for i in _subtree(tree, t.id)))
    runs: list[_Run] = []
    for parent, f in sorted(units, key=lambda u: u[1].id):
        column = column_of(name, f, prefix=parent)
        stored, _ = column_descriptors([column], [next_id], next_id + 1, parent)
        expected = [c.id for _, c in walk(stored)]
        ids = _subtree(tree, f.id)
        if expected != ids:
            raise _out_of_order(name, (*parent, f.name), next_id, expected, ids)
        last = runs[-1] if runs else None
        if last is not None and last.parent == parent and last.flat:
            last.fields.append(f)
            last.flat = len(ids) == 1
        else:
            runs.append(_Run(parent, [f], flat=len(ids) == 1))
        next_id = max(next_id, *(i + 1 for i in ids))
    for run in runs:
        columns = [column_of(name, f, prefix=run.parent) for f in run.fields]
        replaces = replace and any(f.required for f in run.fields)
        more = {"parent": run.parent} if run.parent else {}
        commands.append(
            AddColumnsCommand(**target, columns=columns, replaces_rows=replaces, **more)
        )
    return commands


def _subtree(tree: FieldTree, field_id: int) -> list[int]:
    """Return the ids of a new field and of every field under it, each before its own."""
    ids = [field_id]
    for child in tree.new[field_id].children:
        ids += _subtree(tree, child.id)
    return ids


def _reuses(tree: FieldTree, top: StructField) -> bool:
    after = tree.table.next_column_id
    return any(i < after for i in _subtree(tree, top.id))


def _out_of_order(
    table: str, path: Path, first: int, expected: list[int], ids: list[int]
) -> Exception:
    return bad_request(
        f"new fields of table {table} take the ids after last-column-id {first - 1} in order "
        "(a field's nested fields right after it, a struct's own fields first): field "
        f"{path_words(path)} would get {', '.join(map(str, expected))}; this schema gives "
        f"{', '.join(map(str, ids))}"
    )
