"""Reads that skip work: predicates on one column, judged on a file's bounds and on its rows.

A ``Predicate`` is one condition of a read's WHERE (all of them hold for a row to be read). A
file is skipped when its ``Bounds`` for a column prove no row can pass; a file that is read
has its rows filtered exactly as Spark would (SQL's three-valued logic: a row is kept only
when every predicate is true, never when one is null).

Nothing here knows where bounds come from: today the statistics each data commit records for
its files (``spark.statistics``); any other source (a table format's manifests) only has to
give the same ``Bounds`` per column. Doubt never skips: unknown bounds, or bounds that do not
compare with the predicate's values, keep the file.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import pyarrow as pa
import pyarrow.compute as pc

from catalog.descriptors import ColumnDescriptor
from spark.types import arrow_type

Op = Literal[
    "eq",
    "lt",
    "le",
    "gt",
    "ge",
    "in",
    "is_null",
    "not_null",
    "starts_with",
    "ends_with",
    "contains",
]


@dataclass(frozen=True, slots=True)
class Bounds:
    """What is known of one column's values in one file.

    Attributes:
        rows: the file's rows.
        nulls: how many of them are null (None: unknown).
        lower: no value is below it (None: unknown), in ``statistics.comparable`` form.
        upper: no value is above it (None: unknown).
    """

    rows: int
    nulls: int | None
    lower: Any
    upper: Any


@dataclass(frozen=True)
class Predicate:
    """One condition on one column.

    Attributes:
        column: the column, as of the version read.
        op: the comparison; ``in`` is true for any of ``values``.
        values: the operands, Python values of the column's type (none for the null tests).
        keys: the same values in the form bounds are compared in.
        negated: the condition is NOT(op), true when op is false (still null when it is null).
        exact: the rows it keeps are exactly those Spark keeps, so Spark need not filter again
            (false for floating-point columns, whose NaN Spark orders above every number).
    """

    column: ColumnDescriptor
    op: Op
    values: tuple[Any, ...] = ()
    keys: tuple[Any, ...] = ()
    negated: bool = False
    exact: bool = True


def _all_null(bounds: Bounds) -> bool:
    return bounds.nulls is not None and bounds.nulls >= bounds.rows


def _compared(op: Op, key: Any, bounds: Bounds) -> bool:
    low, high = bounds.lower, bounds.upper
    if op in ("eq", "in"):
        return (low is None or key >= low) and (high is None or key <= high)
    if op == "lt":
        return low is None or low < key
    if op == "le":
        return low is None or low <= key
    if op == "gt":
        return high is None or high > key
    if op == "ge":
        return high is None or high >= key
    if op == "starts_with":
        return (high is None or high >= key) and (low is None or low[: len(key)] <= key)
    return True  # ends_with, contains: bounds say nothing


def may_match(predicate: Predicate, bounds: Bounds | None) -> bool:
    """Return False only when no row with these bounds can satisfy ``predicate``."""
    if bounds is None:
        return True
    op = predicate.op
    if op in ("is_null", "not_null"):
        wants_null = (op == "is_null") != predicate.negated
        return bounds.nulls != 0 if wants_null else not _all_null(bounds)
    if _all_null(bounds):
        return False  # every comparison with null is null: no row passes
    try:
        if predicate.negated:
            # NOT (x = v) fails on every row only when every value is v.
            only = bounds.lower is not None and bounds.lower == bounds.upper
            return not (op == "eq" and only and bounds.lower == predicate.keys[0])
        return any(_compared(op, key, bounds) for key in predicate.keys)
    except TypeError:
        return True  # bounds of another kind than the values: never skip on doubt


def file_may_match(
    predicates: Sequence[Predicate], bounds: Callable[[ColumnDescriptor], Bounds | None]
) -> bool:
    """Return False when ``bounds`` (a file's, per column) prove one predicate false."""
    return all(may_match(p, bounds(p.column)) for p in predicates)


def _condition(
    predicate: Predicate, field: pc.Expression, column_type: pa.DataType
) -> pc.Expression:
    op = predicate.op
    if op == "is_null":
        return field.is_null()
    if op == "not_null":
        return field.is_valid()
    if op == "in":
        return field.isin(pa.array(predicate.values, type=column_type))
    if op in ("starts_with", "ends_with", "contains"):
        function = {"starts_with": pc.starts_with, "ends_with": pc.ends_with}
        return function.get(op, pc.match_substring)(field, pattern=predicate.values[0])
    value = pa.scalar(predicate.values[0], type=column_type)
    if op == "eq":
        return field == value
    if op == "lt":
        return field < value
    if op == "le":
        return field <= value
    return field > value if op == "gt" else field >= value


def row_filter(
    predicates: Sequence[Predicate],
    name: Callable[[ColumnDescriptor], str | None],
    kind: Callable[[ColumnDescriptor], pa.DataType] = arrow_type,
) -> pc.Expression | None:
    """Return the Arrow expression keeping the rows every predicate holds for, or None.

    Args:
        predicates: the conditions (all must hold).
        name: the field name of a column in the data filtered; None leaves out the column's
            predicates (the data lacks the column, or holds it in a form they do not apply to).
        kind: the Arrow type of a column in the data filtered (by default its type in
            batches); the predicate's values become scalars of it, so it must hold them
            exactly (a TIME's microseconds as ``int64`` or ``time64[us]``).
    """
    combined: pc.Expression | None = None
    for predicate in predicates:
        field_name = name(predicate.column)
        if field_name is None:
            continue
        field = pc.field(field_name)
        condition = _condition(predicate, field, kind(predicate.column))
        if predicate.negated:
            # NOT of a null-test is never null; NOT of a comparison is null where the value is.
            null_test = predicate.op in ("is_null", "not_null")
            condition = ~condition if null_test else field.is_valid() & ~condition
        combined = condition if combined is None else combined & condition
    return combined
