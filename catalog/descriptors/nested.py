"""Nested fields: the shape of STRUCT, ARRAY and MAP columns, their paths and their limits.

A nested column's ``fields`` are columns of their own (``ColumnDescriptor``): a ``STRUCT``'s
named fields, an ``ARRAY``'s one field named ``element``, a ``MAP``'s ``key`` and ``value``
(Iceberg's names). Every field has an id from its table's id space, given out once and never
reused, so a rename or a drop inside a struct is as safe as one of a top-level column.

A field is named by its path from the top-level column: ``PAYLOAD.SOURCE``, and through
arrays and maps by their fields' names, ``PAYLOAD.ITEMS.element.PRICE``. Paths are tuples of
names here (a name may itself hold a dot); ``path_words`` spells one for people.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence

from catalog.column_types import NESTED_TYPES, ColumnType
from catalog.descriptors.tables import ColumnDescriptor
from catalog.errors import ErrorCode, ValidationError

ELEMENT = "element"
"""The name of an array's element field."""
KEY = "key"
"""The name of a map's key field."""
VALUE = "value"
"""The name of a map's value field."""

MAX_DEPTH = 16
"""The deepest a field may sit: a top-level column is at depth 1, a field of its struct at 2.
Deeper schemas are refused with the field's path; engines' own limits (Spark's and Parquet's
readers recurse per level) make deeper ones a risk to every reader for no known use."""

Path = tuple[str, ...]


def path_words(path: Sequence[str]) -> str:
    """Return a path as people read it: its names joined by dots."""
    return ".".join(path)


def a_type(ctype: ColumnType) -> str:
    """Return a type's name after its article: ``a STRUCT``, ``an ARRAY``, ``an INT32``."""
    return f"{'an' if ctype.value[0] in 'AEIOU' else 'a'} {ctype}"


def fixed_names(ctype: ColumnType) -> tuple[str, ...] | None:
    """Return the names an ARRAY's or a MAP's fields must have; None for any other type."""
    if ctype is ColumnType.ARRAY:
        return (ELEMENT,)
    if ctype is ColumnType.MAP:
        return (KEY, VALUE)
    return None


def check_shape(path: Path, ctype: ColumnType, names: Sequence[str], key_nullable: bool) -> None:
    """Check that a field of type ``ctype`` at ``path`` has fields named ``names``.

    ``key_nullable`` says whether a map's key field is nullable (it must not be).

    Raises:
        ValidationError: a primitive with fields, a struct without any or with a name twice,
            an array or a map whose fields are not ``element`` / ``key, value``, a nullable
            map key, or a field deeper than ``MAX_DEPTH``.
    """
    where = path_words(path)
    if len(path) > MAX_DEPTH:
        raise ValidationError(
            f"field {where} is nested {len(path)} levels deep; a field sits at most "
            f"{MAX_DEPTH} levels deep",
            code=ErrorCode.NESTED_TOO_DEEP,
        )
    if ctype not in NESTED_TYPES:
        if names:
            raise ValidationError(f"field {where}: {a_type(ctype)} has no fields")
        return
    fixed = fixed_names(ctype)
    if fixed is None:
        if not names:
            raise ValidationError(f"field {where}: a STRUCT needs at least one field")
        seen: set[str] = set()
        for name in names:
            if name in seen:
                raise ValidationError(f"field {where}: the STRUCT has two fields named {name}")
            seen.add(name)
        return
    if tuple(names) != fixed:
        spelled = ", ".join(fixed)
        raise ValidationError(
            f"field {where}: {a_type(ctype)} has exactly the field(s) {spelled}, in that order; "
            f"got {', '.join(names) or 'none'}"
        )
    if ctype is ColumnType.MAP and key_nullable:
        raise ValidationError(f"field {where}.{KEY}: a map's key cannot be null; make it NOT NULL")


def walk(
    columns: Sequence[ColumnDescriptor], prefix: Path = ()
) -> Iterator[tuple[Path, ColumnDescriptor]]:
    """Yield every column and nested field with its path, each before its own fields."""
    for column in columns:
        path = (*prefix, column.name)
        yield path, column
        if column.fields:
            yield from walk(column.fields, path)


def field_count(columns: Sequence[ColumnDescriptor]) -> int:
    """Return the number of columns and nested fields (what the column limit counts)."""
    return sum(1 for _ in walk(columns))


def all_ids(columns: Sequence[ColumnDescriptor]) -> set[int]:
    """Return the ids of every column and nested field."""
    return {c.id for _, c in walk(columns)}


def find_path(columns: Sequence[ColumnDescriptor], path: Sequence[str]) -> ColumnDescriptor | None:
    """Return the column or nested field at ``path``, if any."""
    found: ColumnDescriptor | None = None
    level: Sequence[ColumnDescriptor] = columns
    for name in path:
        found = next((c for c in level if c.name == name), None)
        if found is None:
            return None
        level = found.fields
    return found


def find_id(columns: Sequence[ColumnDescriptor], field_id: int) -> tuple[Path, ColumnDescriptor]:
    """Return the path and the column or nested field with id ``field_id``.

    Raises:
        KeyError: no column or field has that id.
    """
    for path, column in walk(columns):
        if column.id == field_id:
            return path, column
    raise KeyError(field_id)


def replaced(
    columns: tuple[ColumnDescriptor, ...],
    changes: Mapping[int, Callable[[ColumnDescriptor], ColumnDescriptor | None]],
) -> tuple[ColumnDescriptor, ...]:
    """Return ``columns`` with the fields of the ids in ``changes`` (at any depth) changed.

    Each change returns the new field, or None to remove it. One pass over the columns;
    columns and fields off the way to a change are kept as the same objects.
    """
    out: list[ColumnDescriptor] = []
    same = True
    for column in columns:
        change = changes.get(column.id)
        new: ColumnDescriptor | None = column
        if change is not None:
            new = change(column)
        elif column.fields:
            fields = replaced(column.fields, changes)
            if fields is not column.fields:
                new = column.model_copy(update={"fields": fields})
        same = same and new is column
        if new is not None:
            out.append(new)
    return columns if same else tuple(out)


Held = tuple[ColumnDescriptor, ColumnDescriptor]
"""A nested field's holder (the column or field it is a field of) and the field."""


def parents(columns: Sequence[ColumnDescriptor]) -> dict[Path, Held]:
    """Return every nested field by its path, with the column or field that holds it."""
    found: dict[Path, Held] = {}
    for path, column in walk(columns):
        for f in column.fields:
            found[(*path, f.name)] = (column, f)
    return found
