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
STRUCT<name type [NOT NULL], ...>, STRUCT<name: type>,  STRUCT            its fields
ROW(name type [NOT NULL], ...)
ARRAY<type>, type ARRAY, type[]                        ARRAY             field ``element``
MAP<key type, value type>                              MAP               ``key``, ``value``
=====================================================  ================  =====================

A parameter left out gets the catalog's default for the type (e.g. ``VARCHAR`` is 65536 long,
``CHAR`` too: there is no fixed-length string type). Nested types nest: a STRUCT's field, an
ARRAY's element and a MAP's value may be of any type. A STRUCT's field is nullable unless
``NOT NULL``; an array's element and a map's value are nullable, a map's key is not (the JSON
command ``create_table`` may make an element or a value NOT NULL).

Defaults must be constants: numbers, strings, TRUE/FALSE, NULL, ``X'..'`` (BYTES) and typed
literals such as ``DATE '2024-01-31'``.
"""

from __future__ import annotations

import decimal
import re
from collections.abc import Sequence
from dataclasses import dataclass

from sqlglot import exp

from api.sql.nodes import check_args, name_of, sql_of
from catalog.column_types import DEFAULT_FUNCTIONS, ColumnType, DefaultValue
from catalog.commands import Column
from catalog.descriptors import Collation
from catalog.descriptors.nested import ELEMENT, KEY, VALUE, path_words
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
_NESTED: dict[DType, ColumnType] = {
    DType.STRUCT: ColumnType.STRUCT,
    DType.ARRAY: ColumnType.ARRAY,
    DType.MAP: ColumnType.MAP,
}
_LENGTH_TYPES = (ColumnType.STRING, ColumnType.BYTES)
_PRECISION_TYPES = (ColumnType.TIME, ColumnType.TIMESTAMP, ColumnType.TIMESTAMP_TZ)
_INTEGER = re.compile(r"-?\d+")
_TZ_LITERAL = (ColumnType.TIMESTAMP, ColumnType.TIMESTAMP_TZ)


@dataclass(frozen=True, slots=True)
class SqlType:
    """A column type with the parameters written in SQL (None where left out).

    A STRUCT, ARRAY or MAP carries its ``fields`` (an array's ``element``, a map's ``key``
    and ``value``), each a column of its own.
    """

    type: ColumnType
    precision: int | None = None
    scale: int | None = None
    length: int | None = None
    fields: tuple[Column, ...] = ()


def column_type(dtype: exp.Expr | None, path: Sequence[str] = ()) -> SqlType:
    """Map a SQL type to the catalog's column type and its written parameters.

    ``path`` is the column or nested field the type is written for, which a refusal names
    (none: the message names only the type).

    Raises:
        ValidationError: an unsupported type, parameters the type does not take, or a STRUCT,
            ARRAY or MAP written without its fields' types.
    """
    if not isinstance(dtype, exp.DataType):
        raise ValidationError(f"{_where(path)}expected a column type")
    if dtype.this in _NESTED:
        return _nested_type(dtype, tuple(path))
    ctype = _TYPES.get(dtype.this) if isinstance(dtype.this, DType) else None
    if ctype is None:
        raise ValidationError(f"{_where(path)}unsupported column type {sql_of(dtype)}")
    check_args(dtype, {"this", "expressions"}, f"{_where(path)}column type {sql_of(dtype)}")
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


def _where(path: Sequence[str]) -> str:
    """Return how a message starts that names ``path``: a column, or a nested field."""
    if not path:
        return ""
    return f"{'column' if len(path) == 1 else 'field'} {path_words(path)}: "


def _nested_type(dtype: exp.DataType, path: tuple[str, ...]) -> SqlType:
    """Read ``STRUCT<...>`` / ``ROW(...)``, ``ARRAY<...>`` or ``MAP<...>`` and its fields."""
    ctype = _NESTED[DType(dtype.this)]
    where = _where(path)
    check_args(dtype, {"this", "expressions", "nested"}, f"{where}column type {sql_of(dtype)}")
    parts = dtype.expressions
    if ctype is ColumnType.STRUCT:
        if not parts or not all(isinstance(p, exp.ColumnDef) for p in parts):
            raise ValidationError(
                f"{where}a STRUCT names each of its fields and gives its type: "
                "STRUCT<name type, ...>, STRUCT<name: type, ...> or ROW(name type, ...)"
            )
        return SqlType(ctype, fields=tuple(_struct_field(p, path) for p in parts))
    found = f"found {len(parts)} type{'' if len(parts) == 1 else 's'}"
    if ctype is ColumnType.ARRAY:
        if len(parts) != 1:
            raise ValidationError(f"{where}an ARRAY has one element type, ARRAY<type>; {found}")
        return SqlType(ctype, fields=(_fixed_field(ELEMENT, parts[0], path, nullable=True),))
    if len(parts) != 2:
        raise ValidationError(
            f"{where}a MAP has a key type and a value type, MAP<key type, value type>; {found}"
        )
    key = _fixed_field(KEY, parts[0], path, nullable=False)
    return SqlType(ctype, fields=(key, _fixed_field(VALUE, parts[1], path, nullable=True)))


def _fixed_field(name: str, dtype: exp.Expr, parent: tuple[str, ...], *, nullable: bool) -> Column:
    """Return an array's element or a map's key or value, whose type ``dtype`` gives."""
    path = (*parent, name)
    return _field_column(path, column_type(dtype, path), nullable)


def _struct_field(defn: exp.ColumnDef, parent: tuple[str, ...]) -> Column:
    """Return a STRUCT's field: ``name type [NULL | NOT NULL]`` (no default, no key)."""
    path = (*parent, name_of(defn.this, "a STRUCT field"))
    what = f"field {path_words(path)}"
    check_args(defn, {"this", "kind", "constraints"}, what)
    sql_type = column_type(defn.args.get("kind"), path)
    nullable: bool | None = None
    for constraint in defn.args.get("constraints") or []:
        check_args(constraint, {"kind"}, what)
        body = constraint.args.get("kind")
        if not isinstance(body, exp.NotNullColumnConstraint):
            shown = sql_of(body) if isinstance(body, exp.Expr) else sql_of(constraint)
            raise ValidationError(
                f"{what}: a nested field takes only NULL or NOT NULL, not {shown}"
            )
        if nullable is not None:
            raise ValidationError(f"{what}: NULL / NOT NULL given twice")
        check_args(body, {"allow_null"}, what)
        nullable = bool(body.args.get("allow_null"))
    return _field_column(path, sql_type, nullable is not False)


def _field_column(path: tuple[str, ...], sql_type: SqlType, nullable: bool) -> Column:
    """Return the nested field at ``path``; a refusal of its type names the path."""
    try:
        return Column(
            name=path[-1],
            type=sql_type.type,
            nullable=nullable,
            precision=sql_type.precision,
            scale=sql_type.scale,
            length=sql_type.length,
            fields=sql_type.fields,
        )
    except ValidationError as e:
        reason = str(e.details[0]["msg"]) if e.details else e.message
        raise ValidationError(f"{_where(path)}{reason}", code=e.code, details=e.details) from e


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
            fields=self.type.fields,
        )


def column_spec(defn: exp.Expr, parent: Sequence[str] = ()) -> ColumnSpec:
    """Read a column definition: name, type, NULL/NOT NULL, DEFAULT, inline PRIMARY KEY.

    ``parent`` is the path of the STRUCT a nested field is defined in (``ADD COLUMN S.F``),
    which messages name; empty for a column.

    Raises:
        ValidationError: any other constraint or clause, or one given twice.
    """
    if not isinstance(defn, exp.ColumnDef):
        raise ValidationError(f"expected a column definition, found {sql_of(defn)}")
    name = name_of(defn.this, "a column")
    path = (*parent, name)
    what = _where(path).removesuffix(": ")
    check_args(defn, {"this", "kind", "constraints", "exists"}, what)
    kind = defn.args.get("kind")
    if kind is None:
        raise ValidationError(f"{what} needs a type")
    sql_type = column_type(kind, path)
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
