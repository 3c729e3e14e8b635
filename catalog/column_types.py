"""Column types, their parameter rules, constant defaults and the allowed widenings.

Parameters follow SQL and Ignite 3: DECIMAL takes precision and scale, STRING and BYTES take
a length, TIME/TIMESTAMP/TIMESTAMP_TZ take a fractional-seconds precision; every other type
takes none. Missing parameters get the defaults below, so a stored column is always complete.

Constant defaults are kept in a canonical JSON-safe form, so that JSON, msgpack and digests
agree on one spelling:

==============  ===========================================================
type            canonical default
==============  ===========================================================
BOOLEAN         ``bool``
INT8..INT64     ``int`` within the type's range
FLOAT32/64      finite ``float`` (FLOAT32: within its range)
DECIMAL         ``str`` of the value quantized to the column's scale
STRING          ``str`` no longer than the column's length
BYTES           ``str`` of lowercase hex digits, ``len/2`` <= length
DATE            ``str`` ISO ``YYYY-MM-DD``
TIME            ``str`` ISO ``HH:MM:SS[.ffffff]``
TIMESTAMP       ``str`` ISO without offset
TIMESTAMP_TZ    ``str`` ISO in UTC with ``+00:00``
UUID            ``str`` canonical lowercase
==============  ===========================================================
"""

from __future__ import annotations

import datetime as dt
import decimal
import enum
import math
import struct
import uuid
from dataclasses import dataclass

from catalog.errors import ErrorCode, ValidationError

DefaultValue = bool | int | float | str


class ColumnType(enum.StrEnum):
    """The catalog's column types. Values are the stable wire spelling."""

    BOOLEAN = "BOOLEAN"
    INT8 = "INT8"
    INT16 = "INT16"
    INT32 = "INT32"
    INT64 = "INT64"
    FLOAT32 = "FLOAT32"
    FLOAT64 = "FLOAT64"
    DECIMAL = "DECIMAL"
    STRING = "STRING"
    BYTES = "BYTES"
    DATE = "DATE"
    TIME = "TIME"
    TIMESTAMP = "TIMESTAMP"
    TIMESTAMP_TZ = "TIMESTAMP_TZ"
    UUID = "UUID"
    STRUCT = "STRUCT"
    """Named fields, each of any type (``catalog.descriptors.nested``)."""
    ARRAY = "ARRAY"
    """A list of one element type."""
    MAP = "MAP"
    """Keys of one type to values of another."""


NESTED_TYPES = frozenset({ColumnType.STRUCT, ColumnType.ARRAY, ColumnType.MAP})
"""The types whose values hold other values: their fields are columns of their own."""
PLAIN_TYPES = tuple(t for t in ColumnType if t not in NESTED_TYPES)
"""The types of single values (every type but STRUCT, ARRAY and MAP)."""

MAX_DECIMAL_PRECISION = 38
MAX_TIME_PRECISION = 9
MAX_LENGTH = 2**31 - 1
DEFAULT_LENGTH = 65536


@dataclass(frozen=True, slots=True)
class ParamRange:
    """The accepted range of one type parameter and its default."""

    low: int
    high: int
    default: int


_PRECISION: dict[ColumnType, ParamRange] = {
    ColumnType.DECIMAL: ParamRange(1, MAX_DECIMAL_PRECISION, 18),
    ColumnType.TIME: ParamRange(0, MAX_TIME_PRECISION, 0),
    ColumnType.TIMESTAMP: ParamRange(0, MAX_TIME_PRECISION, 6),
    ColumnType.TIMESTAMP_TZ: ParamRange(0, MAX_TIME_PRECISION, 6),
}
_LENGTH: dict[ColumnType, ParamRange] = {
    ColumnType.STRING: ParamRange(1, MAX_LENGTH, DEFAULT_LENGTH),
    ColumnType.BYTES: ParamRange(1, MAX_LENGTH, DEFAULT_LENGTH),
}
_INT_RANGES: dict[ColumnType, tuple[int, int]] = {
    ColumnType.INT8: (-(2**7), 2**7 - 1),
    ColumnType.INT16: (-(2**15), 2**15 - 1),
    ColumnType.INT32: (-(2**31), 2**31 - 1),
    ColumnType.INT64: (-(2**63), 2**63 - 1),
}
_INT_ORDER = [ColumnType.INT8, ColumnType.INT16, ColumnType.INT32, ColumnType.INT64]


@dataclass(frozen=True, slots=True)
class TypeParams:
    """A type with its resolved parameters (None where the type takes none)."""

    type: ColumnType
    precision: int | None
    scale: int | None
    length: int | None


def _fail(message: str, code: ErrorCode = ErrorCode.VALIDATION_ERROR) -> ValidationError:
    return ValidationError(message, code=code)


def _check(name: str, value: int | None, rng: ParamRange | None, ctype: ColumnType) -> int | None:
    if rng is None:
        if value is not None:
            raise _fail(f"column type {ctype} does not take a {name}")
        return None
    if value is None:
        return rng.default
    if not rng.low <= value <= rng.high:
        raise _fail(f"{name} of {ctype} must be within [{rng.low}, {rng.high}], got {value}")
    return value


def resolve_params(
    ctype: ColumnType, precision: int | None, scale: int | None, length: int | None
) -> TypeParams:
    """Check a type's parameters and fill in the defaults.

    Raises:
        ValidationError: a parameter the type does not take, or one out of range.
    """
    p = _check("precision", precision, _PRECISION.get(ctype), ctype)
    ln = _check("length", length, _LENGTH.get(ctype), ctype)
    if ctype is ColumnType.DECIMAL:
        assert p is not None
        s = 0 if scale is None else scale
        if not 0 <= s <= p:
            raise _fail(f"scale of DECIMAL({p}) must be within [0, {p}], got {s}")
    elif scale is not None:
        raise _fail(f"column type {ctype} does not take a scale")
    else:
        s = None
    return TypeParams(ctype, p, s, ln)


def normalize_default(params: TypeParams, value: object) -> DefaultValue:
    """Check a constant default against its column type and return its canonical form.

    Raises:
        ValidationError: the value does not fit the type.
    """
    ctype = params.type
    if ctype in NESTED_TYPES:
        raise _fail(f"a {ctype} column takes no default")
    try:
        return _normalize(params, value)
    except (ValueError, TypeError, ArithmeticError) as e:
        # decimal's own message is a list of its signal classes: say it in words.
        reason = "not a decimal number" if isinstance(e, decimal.InvalidOperation) else e
        raise _fail(f"default {value!r} does not fit column type {ctype}: {reason}") from e


def _normalize(params: TypeParams, value: object) -> DefaultValue:
    ctype = params.type
    if ctype is ColumnType.BOOLEAN:
        if not isinstance(value, bool):
            raise TypeError("expected a boolean")
        return value
    if isinstance(value, bool):
        raise TypeError("a boolean is not a value of this type")
    if ctype in _INT_RANGES:
        if not isinstance(value, int):
            raise TypeError("expected an integer")
        low, high = _INT_RANGES[ctype]
        if not low <= value <= high:
            raise ValueError(f"out of range [{low}, {high}]")
        return value
    if ctype in (ColumnType.FLOAT32, ColumnType.FLOAT64):
        if not isinstance(value, int | float):
            raise TypeError("expected a number")
        f = float(value)
        if not math.isfinite(f):
            raise ValueError("must be finite")
        if ctype is ColumnType.FLOAT32:
            struct.pack("<f", f)  # OverflowError beyond FLOAT32's range
        return f
    if ctype is ColumnType.DECIMAL:
        return _normalize_decimal(params, value)
    if ctype is ColumnType.STRING:
        if not isinstance(value, str):
            raise TypeError("expected a string")
        assert params.length is not None
        if len(value) > params.length:
            raise ValueError(f"longer than {params.length} characters")
        return value
    if ctype is ColumnType.BYTES:
        raw = value if isinstance(value, bytes) else bytes.fromhex(_as_str(value))
        assert params.length is not None
        if len(raw) > params.length:
            raise ValueError(f"longer than {params.length} bytes")
        return raw.hex()
    if ctype is ColumnType.DATE:
        d = value if isinstance(value, dt.date) else dt.date.fromisoformat(_as_str(value))
        if isinstance(d, dt.datetime):
            raise TypeError("expected a date, not a timestamp")
        return d.isoformat()
    if ctype is ColumnType.TIME:
        t = value if isinstance(value, dt.time) else dt.time.fromisoformat(_as_str(value))
        if t.tzinfo is not None:
            raise ValueError("TIME takes no time zone")
        _check_fraction(t.microsecond, params.precision)
        return t.isoformat()
    if ctype in (ColumnType.TIMESTAMP, ColumnType.TIMESTAMP_TZ):
        ts = value if isinstance(value, dt.datetime) else dt.datetime.fromisoformat(_as_str(value))
        _check_fraction(ts.microsecond, params.precision)
        if ctype is ColumnType.TIMESTAMP:
            if ts.tzinfo is not None:
                raise ValueError("TIMESTAMP takes no offset; use TIMESTAMP_TZ")
            return ts.isoformat()
        if ts.tzinfo is None:
            raise ValueError("TIMESTAMP_TZ needs an offset, e.g. +00:00")
        return ts.astimezone(dt.UTC).isoformat()
    if ctype is ColumnType.UUID:
        u = value if isinstance(value, uuid.UUID) else uuid.UUID(_as_str(value))
        return str(u)
    raise TypeError(f"unknown column type {ctype}")  # pragma: no cover - exhaustive enum


def _as_str(value: object) -> str:
    if not isinstance(value, str):
        raise TypeError("expected a string")
    return value


def _check_fraction(microsecond: int, precision: int | None) -> None:
    assert precision is not None
    if precision < 6 and microsecond % (10 ** (6 - precision)):
        raise ValueError(f"more fractional digits than precision {precision}")


def _normalize_decimal(params: TypeParams, value: object) -> str:
    if isinstance(value, float):
        # A float literal is read through its shortest repr, so 0.1 means 0.1, not 0.1000...0555.
        value = repr(value)
    if not isinstance(value, int | str):
        raise TypeError("expected a decimal string or a number")
    d = decimal.Decimal(value)
    if not d.is_finite():
        raise ValueError("must be finite")
    assert params.precision is not None and params.scale is not None
    quantum = decimal.Decimal(1).scaleb(-params.scale)
    ctx = decimal.Context(prec=MAX_DECIMAL_PRECISION + 2, traps=[decimal.Inexact])
    try:
        q = d.quantize(quantum, context=ctx)
    except decimal.Inexact as e:
        raise ValueError(f"more than {params.scale} fractional digits") from e
    digits = len(q.as_tuple().digits) if q != 0 else 1
    integral_digits = max(digits - params.scale, 0)
    if integral_digits > params.precision - params.scale:
        raise ValueError(f"does not fit DECIMAL({params.precision}, {params.scale})")
    if q == 0:
        q = q.copy_abs()  # SQL decimals have no negative zero: "-0.00" is spelled "0.00"
    return format(q, "f")


def check_widening(old: TypeParams, new: TypeParams) -> None:
    """Check that changing a column from ``old`` to ``new`` only widens it.

    Allowed: INT8→INT16→INT32→INT64, FLOAT32→FLOAT64, a longer STRING or BYTES, a DECIMAL
    with more precision and the same scale, or no change at all.

    Raises:
        ValidationError: code UNSUPPORTED_CHANGE for any other change.
    """
    if old == new:
        return
    unsupported = ErrorCode.UNSUPPORTED_CHANGE
    if old.type in _INT_RANGES and new.type in _INT_RANGES:
        if _INT_ORDER.index(new.type) > _INT_ORDER.index(old.type):
            return
        raise _fail(f"cannot narrow {old.type} to {new.type}", unsupported)
    if old.type is ColumnType.FLOAT32 and new.type is ColumnType.FLOAT64:
        return
    if old.type is not new.type:
        raise _fail(f"cannot change column type {old.type} to {new.type}", unsupported)
    if old.type in _LENGTH:
        assert old.length is not None and new.length is not None
        if new.length < old.length:
            raise _fail(f"cannot shorten {old.type} from {old.length} to {new.length}", unsupported)
        return
    if old.type is ColumnType.DECIMAL:
        assert old.precision is not None and new.precision is not None
        if new.scale != old.scale:
            raise _fail("cannot change the scale of a DECIMAL column", unsupported)
        if new.precision < old.precision:
            raise _fail("cannot decrease the precision of a DECIMAL column", unsupported)
        return
    raise _fail(f"cannot change the precision of a {old.type} column", unsupported)


RAND_UUID = "RAND_UUID"
"""The default function that gives each new row a random (version 4) UUID."""
DEFAULT_FUNCTIONS: dict[str, ColumnType] = {RAND_UUID: ColumnType.UUID}
"""Functions a primary-key column may take its default from, with the type each returns."""


def check_default_function(column: str, column_type: ColumnType, function: str) -> str:
    """Return ``function`` (upper case) if it may give column ``column`` its default.

    Raises:
        ValidationError: an unknown function, or one whose result has another type.
    """
    name = function.upper()
    returns = DEFAULT_FUNCTIONS.get(name)
    if returns is None:
        known = ", ".join(DEFAULT_FUNCTIONS)
        raise ValidationError(
            f"column {column}: {function} cannot be a default (the default functions: {known})"
        )
    if returns is not column_type:
        raise ValidationError(
            f"column {column}: {name} gives a {returns} value, the column is {column_type}; "
            f"use {name} on a {returns} column"
        )
    return name


def functional_default_refused(column: str) -> ValidationError:
    """Return the refusal of a default function on a column outside the primary key."""
    return ValidationError(
        f"column {column}: only primary-key columns take a default function; give a constant"
    )
