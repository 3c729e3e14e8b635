"""Spark's pushed filters as ``pruning.Predicate``s: which ones a read takes over, and how.

Spark hands a Python data source the simple conditions of a WHERE (``DataSourceReader.
pushFilters``): comparisons of one top-level column with a literal, IN lists, null tests,
string prefix/suffix/substring tests, and NOT of one of them. A filter on a STRUCT, ARRAY or
MAP column, or on a field inside one, is left to Spark. A filter becomes a predicate when
its value is exactly a value of the column's type; the predicate always serves to skip files,
and the read takes the filter over (Spark does not apply it again) only when Arrow keeps
exactly the rows Spark would. Every other filter is left to Spark.
"""

from __future__ import annotations

from collections.abc import Sequence

from pyspark.sql.datasource import (
    EqualNullSafe,
    EqualTo,
    Filter,
    GreaterThan,
    GreaterThanOrEqual,
    In,
    IsNotNull,
    IsNull,
    LessThan,
    LessThanOrEqual,
    Not,
    StringContains,
    StringEndsWith,
    StringStartsWith,
)

from catalog.column_types import NESTED_TYPES, ColumnType
from catalog.descriptors import ColumnDescriptor
from spark.pruning import Op, Predicate
from spark.statistics import NotComparableError, comparable, typed_scalar

_COMPARISONS: dict[type[Filter], Op] = {
    EqualTo: "eq",
    EqualNullSafe: "eq",
    GreaterThan: "gt",
    GreaterThanOrEqual: "ge",
    LessThan: "lt",
    LessThanOrEqual: "le",
}
_STRING_TESTS: dict[type[Filter], Op] = {
    StringStartsWith: "starts_with",
    StringEndsWith: "ends_with",
    StringContains: "contains",
}
_NULL_TESTS: dict[type[Filter], Op] = {IsNull: "is_null", IsNotNull: "not_null"}
_FLOATS = (ColumnType.FLOAT32, ColumnType.FLOAT64)


def _column(filter_: Filter, columns: dict[str, ColumnDescriptor]) -> ColumnDescriptor | None:
    path: tuple[str, ...] = getattr(filter_, "attribute", ())
    column = columns.get(path[0]) if len(path) == 1 else None
    return None if column is None or column.type in NESTED_TYPES else column


def _operands(op: Op, column: ColumnDescriptor, filter_: Filter) -> tuple[object, ...] | None:
    value = getattr(filter_, "value", None)
    if op in _STRING_TESTS.values():
        strings = column.type in (ColumnType.STRING, ColumnType.UUID)
        return (value,) if strings and isinstance(value, str) else None
    if op == "in":
        values = tuple(value) if isinstance(value, list | tuple) else ()
        return values if values and all(v is not None for v in values) else None
    return (value,)


def _leaf(filter_: Filter, columns: dict[str, ColumnDescriptor]) -> Predicate | None:
    column = _column(filter_, columns)
    if column is None:
        return None
    kind = type(filter_)
    if kind in _NULL_TESTS or (kind is EqualNullSafe and getattr(filter_, "value", 0) is None):
        return Predicate(column, _NULL_TESTS.get(kind, "is_null"))
    op = _COMPARISONS.get(kind) or _STRING_TESTS.get(kind) or ("in" if kind is In else None)
    operands = None if op is None else _operands(op, column, filter_)
    if op is None or operands is None:
        return None
    if op in _STRING_TESTS.values():
        return Predicate(column, op, operands, operands)
    try:
        scalars = [typed_scalar(column, v) for v in dict.fromkeys(operands)]
    except (NotComparableError, TypeError):
        return None
    return Predicate(
        column,
        op,
        tuple(s.as_py() for s in scalars),
        tuple(comparable(column, s) for s in scalars),
        exact=column.type not in _FLOATS,
    )


def predicate_of(filter_: Filter, columns: dict[str, ColumnDescriptor]) -> Predicate | None:
    """Return the predicate of one pushed filter, or None when the read cannot use it.

    Args:
        filter_: a filter Spark pushes.
        columns: the read's columns by name.
    """
    if isinstance(filter_, Not):
        if isinstance(filter_.child, EqualNullSafe | Not):
            return None  # NOT of a null-safe test is true on nulls: left to Spark
        inner = _leaf(filter_.child, columns)
        return None if inner is None else _negated(inner)
    return _leaf(filter_, columns)


def _negated(predicate: Predicate) -> Predicate:
    return Predicate(
        predicate.column,
        predicate.op,
        predicate.values,
        predicate.keys,
        negated=True,
        exact=predicate.exact,
    )


def push(
    filters: Sequence[Filter], columns: Sequence[ColumnDescriptor]
) -> tuple[list[Predicate], list[Filter]]:
    """Split pushed filters into the read's predicates and the filters Spark must still apply.

    Returns:
        Every usable filter's predicate (inexact ones only skip files), and the filters that
        have no predicate or an inexact one, by reference as Spark requires.
    """
    by_name = {c.name: c for c in columns}
    predicates: list[Predicate] = []
    left: list[Filter] = []
    for filter_ in filters:
        predicate = predicate_of(filter_, by_name)
        if predicate is not None:
            predicates.append(predicate)
        if predicate is None or not predicate.exact:
            left.append(filter_)
    return predicates, left
