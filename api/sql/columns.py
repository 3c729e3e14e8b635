"""SQL column definitions: type names, type parameters and constant defaults.

=====================================================  ================  =====================
SQL type (as sqlglot reads it)                         ColumnType        parameters
=====================================================  ================  =====================
BOOLEAN, BOOL                                          BOOLEAN
TINYINT / SMALLINT / INT, INTEGER / BIGINT             INT8..INT64
REAL, FLOAT                                            FLOAT32
DOUBLE, DOUBLE PRECISION                               FLOAT64
DECIMAL, NUMERIC                                       DECIMAL           (precision[, scale])
VARCHAR, CHAR, CHARACTER VARYING, STRING, TEXT         STRING            (length)
VARBINARY, BINARY, BYTES, BLOB                         BYTES             (length)
DATE                                                   DATE
TIME                                                   TIME              (precision)
TIMESTAMP                                              TIMESTAMP         (precision)
TIMESTAMP WITH [LOCAL] TIME ZONE, TIMESTAMPTZ          TIMESTAMP_TZ      (precision)
UUID                                                   UUID
=====================================================  ================  =====================

A parameter left out gets the catalog's default for the type (e.g. ``VARCHAR`` is 65536 long,
``CHAR`` too: there is no fixed-length string type). Defaults must be constants: numbers,
strings, TRUE/FALSE, NULL, ``X'..'`` (BYTES) and typed literals such as ``DATE '2024-01-31'``.
"""

from __future__ import annotations

import decimal
import re
from dataclasses import dataclass

from sqlglot import exp

from api.sql.nodes import check_args, name_of, sql_of
from catalog.column_types import DEFAULT_FUNCTIONS, ColumnType, DefaultValue
from catalog.commands import Column
from catalog.descriptors import Collation
from catalog.errors import ValidationError

DType = exp.DType

_TYPES: dict[DType, ColumnType] = {
    DType.BOOLEAN: ColumnType.BOOLEAN,
    DType.TINYINT: ColumnType.INT8,
    DType.SMALLINT: ColumnType.INT16,
    DType.INT: ColumnType.INT32,
    DType.BIGINT: ColumnType.INT64,
    DType.FLOAT: ColumnType.FLOAT32,
    DType.DOUBLE: ColumnType.FLOAT64,
    DType.DECIMAL: ColumnType.DECIMAL,
    DType.VARCHAR: ColumnType.STRING,
    DType.CHAR: ColumnType.STRING,
    DType.NVARCHAR: ColumnType.STRING,
    DType.NCHAR: ColumnType.STRING,
    DType.TEXT: ColumnType.STRING,
    DType.VARBINARY: ColumnType.BYTES,
    DType.BINARY: ColumnType.BYTES,
    DType.DATE: ColumnType.DATE,
    DType.TIME: ColumnType.TIME,
    DType.TIMESTAMP: ColumnType.TIMESTAMP,
    DType.TIMESTAMPLTZ: ColumnType.TIMESTAMP_TZ,
    DType.TIMESTAMPTZ: ColumnType.TIMESTAMP_TZ,
    DType.UUID: ColumnType.UUID,
}
_LENGTH_TYPES = (ColumnType.STRING, ColumnType.BYTES)
_PRECISION_TYPES = (ColumnType.TIME, ColumnType.TIMESTAMP, ColumnType.TIMESTAMP_TZ)
_INTEGER = re.compile(r"-?\d+")
_TZ_LITERAL = (ColumnType.TIMESTAMP, ColumnType.TIMESTAMP_TZ)


@dataclass(frozen=True, slots=True)
class SqlType:
    """A column type with the parameters written in SQL (None where left out)."""

    type: ColumnType
    precision: int | None = None
    scale: int | None = None
    length: int | None = None


def column_type(dtype: exp.Expr | None) -> SqlType:
    """Map a SQL type to the catalog's column type and its written parameters.

    Raises:
        ValidationError: an unsupported type, or parameters the type does not take.
    """
    if not isinstance(dtype, exp.DataType):
        raise ValidationError("expected a column type")
    ctype = _TYPES.get(dtype.this) if isinstance(dtype.this, DType) else None
    if ctype is None:
        raise ValidationError(f"unsupported column type {sql_of(dtype)}")
    check_args(dtype, {"this", "expressions"}, f"column type {sql_of(dtype)}")
    params = [_type_param(p, dtype) for p in dtype.expressions]
    if ctype is ColumnType.DECIMAL and len(params) <= 2:
        scale = params[1] if len(params) == 2 else None
        return SqlType(ctype, precision=params[0] if params else None, scale=scale)
    if ctype in _LENGTH_TYPES and len(params) <= 1:
        return SqlType(ctype, length=params[0] if params else None)
    if ctype in _PRECISION_TYPES and len(params) <= 1:
        return SqlType(ctype, precision=params[0] if params else None)
    if params:
        raise ValidationError(f"column type {sql_of(dtype)} takes no such parameters")
    return SqlType(ctype)


def _type_param(param: exp.Expr, dtype: exp.DataType) -> int:
    node = param.this if isinstance(param, exp.DataTypeParam) else param
    if (
        isinstance(node, exp.Literal)
        and not node.is_string
        and (node.this.isascii() and node.this.isdigit())
    ):
        return int(node.this)
    raise ValidationError(f"column type {sql_of(dtype)}: parameters must be integers")


def default_value(node: exp.Expr | None, ctype: ColumnType | None) -> DefaultValue | None:
    """Return the constant a DEFAULT clause gives (None for NULL).

    ``ctype`` is the column's type when known (CREATE TABLE, ADD COLUMN): numeric literals are
    then read exactly as that type needs (a DECIMAL keeps its digits as a string). Unknown
    (ALTER COLUMN SET DEFAULT), an integer stays ``int`` and any other number is a ``float``
    unless that would lose digits, when it stays a decimal string.

    Raises:
        ValidationError: the expression is not a constant we can read.
    """
    while isinstance(node, exp.Paren):
        node = node.this
    if node is None or isinstance(node, exp.Null):
        return None
    if isinstance(node, exp.Boolean):
        return bool(node.this)
    if isinstance(node, exp.Literal) and node.is_string:
        if ctype is ColumnType.BYTES:
            raise ValidationError("a BYTES default is written as a hex literal, e.g. X'0A0B'")
        return str(node.this)
    number = _number_text(node)
    if number is not None:
        return _number(number, ctype)
    if isinstance(node, exp.HexString):
        if ctype not in (None, ColumnType.BYTES):
            raise ValidationError(f"a hex literal is a BYTES value, not a {ctype} default")
        return str(node.this)
    if isinstance(node, exp.Cast) and isinstance(node.this, exp.Literal) and node.this.is_string:
        literal_type = column_type(node.args.get("to")).type
        # A TIMESTAMP literal with an offset is how a TIMESTAMP_TZ instant is spelled.
        fits = literal_type is ctype or (literal_type, ctype) == _TZ_LITERAL
        if ctype is not None and not fits:
            raise ValidationError(f"a {literal_type} literal is not a {ctype} default")
        return str(node.this.this)
    raise ValidationError(f"DEFAULT must be a constant literal, not {sql_of(node)}")


def default_function(node: exp.Expr | None) -> str | None:
    """Return the function a DEFAULT clause names (``RAND_UUID`` or ``RAND_UUID()``), or None.

    A call (``f()``) is read as one whatever its name, for the catalog to say which functions
    it takes; a bare name only when it is one of them (else it reads as a misplaced column).
    """
    if isinstance(node, exp.Column) and not node.table and not node.this.quoted:
        name = str(node.name).upper()
        return name if name in DEFAULT_FUNCTIONS else None
    if isinstance(node, exp.Anonymous) and not node.expressions:
        return str(node.name).upper()
    return None


def _number_text(node: exp.Expr) -> str | None:
    if isinstance(node, exp.Neg):
        inner = _number_text(node.this)
        return None if inner is None else inner[1:] if inner.startswith("-") else f"-{inner}"
    if isinstance(node, exp.Literal) and not node.is_string:
        return str(node.this)
    return None


def _number(text: str, ctype: ColumnType | None) -> DefaultValue:
    if ctype is ColumnType.DECIMAL:
        return text
    if _INTEGER.fullmatch(text):
        return int(text)
    value = float(text)
    if ctype is None and decimal.Decimal(repr(value)) != decimal.Decimal(text):
        return text
    return value


@dataclass(frozen=True, slots=True)
class ColumnSpec:
    """A column definition as written: ``nullable`` is None unless NULL/NOT NULL was given."""

    name: str
    type: SqlType
    nullable: bool | None
    default: DefaultValue | None
    primary_key: bool
    default_function: str | None = None

    def to_column(self, *, key: bool = False) -> Column:
        """Return the command's column; a primary-key column (``key``) is NOT NULL.

        Raises:
            ValidationError: a key column declared NULL, or a bad type or default.
        """
        if key and self.nullable:
            raise ValidationError(f"primary-key column {self.name} cannot be NULL")
        nullable = False if key else self.nullable is not False
        return Column(
            name=self.name,
            type=self.type.type,
            nullable=nullable,
            precision=self.type.precision,
            scale=self.type.scale,
            length=self.type.length,
            default=self.default,
            default_function=self.default_function,
        )


def column_spec(defn: exp.Expr) -> ColumnSpec:
    """Read a column definition: name, type, NULL/NOT NULL, DEFAULT, inline PRIMARY KEY.

    Raises:
        ValidationError: any other constraint or clause, or one given twice.
    """
    if not isinstance(defn, exp.ColumnDef):
        raise ValidationError(f"expected a column definition, found {sql_of(defn)}")
    name = name_of(defn.this, "a column")
    what = f"column {name}"
    check_args(defn, {"this", "kind", "constraints", "exists"}, what)
    kind = defn.args.get("kind")
    if kind is None:
        raise ValidationError(f"{what} needs a type")
    sql_type = column_type(kind)
    nullable: bool | None = None
    default: DefaultValue | None = None
    function: str | None = None
    has_default = primary_key = False
    for constraint in defn.args.get("constraints") or []:
        check_args(constraint, {"kind"}, what)
        body = constraint.args.get("kind")
        if isinstance(body, exp.NotNullColumnConstraint):
            check_args(body, {"allow_null"}, what)
            if nullable is not None:
                raise ValidationError(f"{what}: NULL / NOT NULL given twice")
            nullable = bool(body.args.get("allow_null"))
        elif isinstance(body, exp.DefaultColumnConstraint):
            if has_default:
                raise ValidationError(f"{what}: DEFAULT given twice")
            has_default = True
            function = default_function(body.this)
            try:
                default = None if function else default_value(body.this, sql_type.type)
            except ValidationError as e:
                raise ValidationError(f"{what}: {e.message}") from e
        elif isinstance(body, exp.PrimaryKeyColumnConstraint):
            check_args(body, (), what)
            primary_key = True
        else:
            shown = sql_of(body) if isinstance(body, exp.Expr) else sql_of(constraint)
            raise ValidationError(f"{what}: unsupported column constraint {shown}")
    return ColumnSpec(name, sql_type, nullable, default, primary_key, function)


collation_of = {
    (False, True): Collation.ASC_NULLS_FIRST,
    (False, False): Collation.ASC_NULLS_LAST,
    (True, True): Collation.DESC_NULLS_FIRST,
    (True, False): Collation.DESC_NULLS_LAST,
}
"""The collation of an ordering: ``(descending, nulls_first)`` → ``Collation``."""
