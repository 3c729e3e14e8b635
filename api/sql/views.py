"""``CREATE [OR REPLACE] VIEW``, ``DROP VIEW`` and ``ALTER VIEW ... RENAME TO``, in SQL.

``CREATE [OR REPLACE] VIEW [IF NOT EXISTS] [s.]v [(a [COMMENT 'c'], ...)] AS query`` keeps the
query's text exactly as written. The catalog's SQL is the core Spark and Trino share, so the
text becomes the view's query for both dialects (``spark`` and ``trino``); a view whose
engines need different texts is made with the JSON command ``create_view``, one text per
dialect. The text must parse as one query in each of those dialects.

The view's columns are what the query yields, typed against the catalog the statement applies
to (the latest, with the script's earlier statements applied): every table or view the query
reads must exist, every column it yields must have a name and a type the catalog knows. The
query is analysed, never run.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import sqlglot
from sqlglot import exp
from sqlglot.dialects.dialect import NormalizationStrategy
from sqlglot.errors import OptimizeError, ParseError
from sqlglot.optimizer.annotate_types import annotate_types
from sqlglot.optimizer.qualify import qualify
from sqlglot.schema import MappingSchema
from sqlglot.tokenizer_core import Token, TokenType

from api.sql.nodes import check_args, name_of, qualified_name, sql_of
from api.sql.tokens import DIALECT, IgniteDialect, is_word
from catalog.catalog import Catalog
from catalog.column_types import MAX_DECIMAL_PRECISION, NESTED_TYPES, ColumnType
from catalog.commands import (
    CommandBase,
    CreateViewCommand,
    DropViewCommand,
    RenameViewCommand,
    ViewColumnSpec,
    ViewQuery,
    ViewVersionSpec,
)
from catalog.descriptors import ColumnDescriptor, ViewColumn
from catalog.errors import ValidationError
from catalog.identifiers import fold

SHARED_DIALECTS = ("spark", "trino")
"""The dialects a view made by the catalog's SQL keeps its one text for."""
_NAMES_AS_GIVEN = IgniteDialect(normalization_strategy=NormalizationStrategy.CASE_SENSITIVE)
"""The catalog's dialect for typing a query whose names are folded already: the alias sqlglot
gives a table ``T`` is ``T`` (not ``t``), so that ``T.ID`` finds it."""

_TO_SQLGLOT = {
    ColumnType.BOOLEAN: "BOOLEAN",
    ColumnType.INT8: "TINYINT",
    ColumnType.INT16: "SMALLINT",
    ColumnType.INT32: "INT",
    ColumnType.INT64: "BIGINT",
    ColumnType.FLOAT32: "FLOAT",
    ColumnType.FLOAT64: "DOUBLE",
    ColumnType.STRING: "VARCHAR",
    ColumnType.BYTES: "VARBINARY",
    ColumnType.DATE: "DATE",
    ColumnType.TIME: "TIME",
    ColumnType.TIMESTAMP: "TIMESTAMP",
    ColumnType.TIMESTAMP_TZ: "TIMESTAMPTZ",
    ColumnType.UUID: "UUID",
}
_T = exp.DataType.Type
_FROM_SQLGLOT = {
    _T.BOOLEAN: ColumnType.BOOLEAN,
    _T.TINYINT: ColumnType.INT8,
    _T.SMALLINT: ColumnType.INT16,
    _T.INT: ColumnType.INT32,
    _T.BIGINT: ColumnType.INT64,
    _T.FLOAT: ColumnType.FLOAT32,
    _T.DOUBLE: ColumnType.FLOAT64,
    _T.DECIMAL: ColumnType.DECIMAL,
    _T.VARCHAR: ColumnType.STRING,
    _T.CHAR: ColumnType.STRING,
    _T.TEXT: ColumnType.STRING,
    _T.VARBINARY: ColumnType.BYTES,
    _T.BINARY: ColumnType.BYTES,
    _T.DATE: ColumnType.DATE,
    _T.TIME: ColumnType.TIME,
    _T.TIMESTAMP: ColumnType.TIMESTAMP,
    _T.TIMESTAMPTZ: ColumnType.TIMESTAMP_TZ,
    _T.TIMESTAMPLTZ: ColumnType.TIMESTAMP_TZ,
    _T.UUID: ColumnType.UUID,
}


def is_view_statement(toks: Sequence[Token]) -> bool:
    """Return whether the statement is ``CREATE [OR REPLACE] VIEW``, ``DROP`` or ``ALTER VIEW``."""
    words = [t for t in toks[:4] if t.token_type is not TokenType.STRING]
    if len(words) >= 2 and is_word(words[0], "CREATE"):
        rest = words[3:4] if len(words) > 3 and is_word(words[1], "OR") else words[1:2]
        return bool(rest) and rest[0].token_type is TokenType.VIEW
    return (
        len(words) >= 2
        and words[0].token_type in (TokenType.DROP, TokenType.ALTER)
        and (words[1].token_type is TokenType.VIEW)
    )


def view_commands(
    text: str, toks: Sequence[Token], catalog: Callable[[], Catalog | None]
) -> list[CommandBase]:
    """Turn a view statement into its command; ``catalog`` gives the catalog it applies to.

    Raises:
        ValidationError: an unsupported form or clause, or a query that cannot be typed.
    """
    try:
        node = sqlglot.parse_one(text, dialect=DIALECT)
    except ParseError as e:
        found = e.errors[0]["description"] if e.errors else str(e)
        raise ValidationError(f"syntax error: {found}") from None
    if isinstance(node, exp.Drop):
        check_args(node, {"kind", "tables", "exists"}, "DROP VIEW")
        return [
            DropViewCommand(schema=s, name=n, if_exists=bool(node.args.get("exists")))
            for s, n in (qualified_name(t, "view") for t in node.args["tables"])
        ]
    if isinstance(node, exp.Alter):
        return [_rename(node)]
    if isinstance(node, exp.Create):
        return [_create(text, toks, node, catalog())]
    raise ValidationError("expected CREATE VIEW, DROP VIEW or ALTER VIEW ... RENAME TO")


def _rename(node: exp.Alter) -> CommandBase:
    check_args(node, {"this", "kind", "exists", "actions"}, "ALTER VIEW")
    actions = node.args.get("actions") or []
    if len(actions) != 1 or not isinstance(actions[0], exp.AlterRename):
        raise ValidationError("ALTER VIEW supports RENAME TO [schema.]name only")
    schema, name = qualified_name(node.this, "view")
    target = actions[0].this
    new_schema, new_name = qualified_name(target, "view")
    moved = isinstance(target, exp.Table) and target.args.get("db") is not None
    return RenameViewCommand(
        schema=schema,
        name=name,
        new_name=new_name,
        new_schema=new_schema if moved else None,
        if_exists=bool(node.args.get("exists")),
    )


def _create(text: str, toks: Sequence[Token], node: exp.Create, cat: Catalog | None) -> CommandBase:
    check_args(node, {"this", "kind", "replace", "expression", "exists"}, "CREATE VIEW")
    target, listed = node.this, None
    if isinstance(target, exp.Schema):  # v (a, b): the names of the query's columns
        target, listed = target.this, target.expressions
    schema, name = qualified_name(target, "view")
    query = node.expression
    if not isinstance(query, exp.Query):
        raise ValidationError(f"view {name}: AS must be followed by a query")
    sql = _query_text(text, toks)
    quoted = next((i for i in query.find_all(exp.Identifier) if i.quoted), None)
    if quoted is not None:
        raise ValidationError(
            f"view {name}: its query quotes the name {sql_of(quoted)}; Spark and Trino quote "
            "names differently, so a text both read names them unquoted (each engine finds a "
            "name whatever its case), or give each engine its own text with the JSON command "
            "create_view"
        )
    for dialect in SHARED_DIALECTS:
        try:
            sqlglot.parse_one(sql, dialect=dialect)
        except ParseError as e:
            raise ValidationError(
                f"view {name}: its query does not read as {dialect} SQL ({e}); give each engine "
                "its own text with the JSON command create_view"
            ) from None
    if cat is None:
        raise ValidationError("CREATE VIEW is typed against the catalog; send it to a server")
    columns = _typed_columns(name, query, cat, schema, named=listed is not None)
    if listed is not None:
        columns = _renamed(name, columns, listed)
    return CreateViewCommand(
        schema=schema,
        name=name,
        columns=tuple(columns),
        version=ViewVersionSpec(
            queries=tuple(ViewQuery(dialect=d, sql=sql) for d in SHARED_DIALECTS)
        ),
        or_replace=bool(node.args.get("replace")),
        if_not_exists=bool(node.args.get("exists")),
    )


def _query_text(text: str, toks: Sequence[Token]) -> str:
    """Return the text after the statement's first top-level ``AS``, as written."""
    depth = 0
    for token in toks:
        if token.token_type is TokenType.L_PAREN:
            depth += 1
        elif token.token_type is TokenType.R_PAREN:
            depth -= 1
        elif depth == 0 and token.token_type is TokenType.ALIAS:
            return text[token.end + 1 :].strip()
    raise ValidationError("CREATE VIEW needs AS followed by its query")


def _renamed(
    view: str, columns: list[ViewColumnSpec], listed: list[exp.Expr]
) -> list[ViewColumnSpec]:
    if len(listed) != len(columns):
        raise ValidationError(
            f"view {view} names {len(listed)} columns but its query yields {len(columns)}"
        )
    renamed = []
    for column, given in zip(columns, listed, strict=True):
        comment = None
        if isinstance(given, exp.ColumnDef):
            check_args(given, {"this", "constraints"}, f"a column of view {view}")
            for constraint in given.args.get("constraints") or []:
                kind = constraint.args.get("kind")
                if not isinstance(kind, exp.CommentColumnConstraint):
                    raise ValidationError(
                        f"view {view}: a column takes only COMMENT, not {sql_of(constraint)}"
                    )
                comment = kind.this.name
            given = given.this
        renamed.append(
            column.model_copy(
                update={"name": name_of(given, f"a column of view {view}"), "doc": comment}
            )
        )
    return renamed


def _schema_of(cat: Catalog, read: set[tuple[str, str]]) -> MappingSchema:
    """The columns of the tables and views a query reads, by schema and name, as sqlglot types."""
    mapping: dict[str, object] = {}
    for schema, name in read:
        found = cat.find_table(schema, name) or cat.find_view(schema, name)
        if found is not None:
            tables = mapping.setdefault(schema, {})
            assert isinstance(tables, dict)
            tables[name] = {c.name: _sqlglot_type(c) for c in found.columns}
    return MappingSchema(mapping, normalize=False)


def _sqlglot_type(column: ColumnDescriptor | ViewColumn) -> str:
    """Return a column's type as sqlglot spells it; a STRUCT, ARRAY or MAP with its fields.

    A view's column declared STRUCT, ARRAY or MAP (by the JSON command) gives no fields: its
    type is unknown to the typing, and so is any column of a view that selects it.
    """
    ctype = column.type
    if ctype is ColumnType.DECIMAL:
        return f"DECIMAL({column.precision}, {column.scale})"
    fields = column.fields if isinstance(column, ColumnDescriptor) else ()
    if ctype in NESTED_TYPES and not fields:
        return "UNKNOWN"
    if ctype is ColumnType.STRUCT:
        named = (
            f"{exp.to_identifier(f.name, quoted=True).sql()} {_sqlglot_type(f)}" for f in fields
        )
        return f"STRUCT<{', '.join(named)}>"
    if ctype is ColumnType.ARRAY:
        return f"ARRAY<{_sqlglot_type(fields[0])}>"
    if ctype is ColumnType.MAP:
        return f"MAP<{_sqlglot_type(fields[0])}, {_sqlglot_type(fields[1])}>"
    return _TO_SQLGLOT[ctype]


def _folded(node: exp.Expr) -> exp.Expr:
    """Unquoted names stand for their upper-case spelling, as in the rest of the catalog's SQL."""
    if isinstance(node, exp.Identifier) and not node.quoted:
        return exp.Identifier(this=fold(str(node.this), quoted=False), quoted=True)
    return node


def _typed_columns(
    view: str, query: exp.Query, cat: Catalog, home: str, *, named: bool
) -> list[ViewColumnSpec]:
    """Return the columns ``query`` yields, typed; ``named``: the statement names them."""
    folded = query.copy().transform(_folded)
    if not isinstance(folded, exp.Query):
        raise ValidationError(f"view {view}: AS must be followed by a query")
    query = folded
    ctes = {cte.alias for cte in query.find_all(exp.CTE)}
    read: set[tuple[str, str]] = set()
    for table in query.find_all(exp.Table):
        # ``catalog.schema.table``: the first part is the name the reading engine gives this
        # catalog (Trino needs it where a view names no default catalog), not part of the name
        table.set("catalog", None)
        schema = table.db or home
        if not table.db and table.name in ctes:
            continue  # a WITH clause's query
        if cat.find_table(schema, table.name) is None and cat.find_view(schema, table.name) is None:
            raise ValidationError(
                f"view {view} reads {schema}.{table.name}, which is no table or view of the catalog"
            )
        read.add((schema, table.name))
    schema_map = _schema_of(cat, read)
    try:
        home_db = exp.to_identifier(home, quoted=True).sql()
        qualified = qualify(query, schema=schema_map, db=home_db, dialect=_NAMES_AS_GIVEN)
        typed = annotate_types(qualified, schema=schema_map)
    except OptimizeError as e:
        raise ValidationError(f"view {view}: {e}") from None
    columns = []
    for position, select in enumerate(typed.selects, start=1):
        name = select.alias_or_name
        if not named and (not name or name.startswith("_col_")):
            raise ValidationError(
                f"view {view}: its column {position} ({sql_of(select)}) has no name; name it "
                "with AS"
            )
        data_type = select.type
        mapped = None if data_type is None else _FROM_SQLGLOT.get(data_type.this)
        if mapped is ColumnType.INT32 and _beyond_int32(select.unalias()):
            mapped = ColumnType.INT64  # as Spark and Trino type such a literal
        if mapped is None or data_type is None:
            shown = "an unknown type" if data_type is None else data_type.sql()
            raise ValidationError(
                f"view {view}: column {name} has {shown}, which the catalog cannot type; cast it "
                "(CAST(... AS type)), or give the view's columns with the JSON command create_view"
            )
        precision = scale = None
        if mapped is ColumnType.DECIMAL:
            params = [int(p.name) for p in data_type.expressions]
            precision, scale = (params + [MAX_DECIMAL_PRECISION, 0][len(params) :])[:2]
        columns.append(ViewColumnSpec(name=name, type=mapped, precision=precision, scale=scale))
    return columns


def _beyond_int32(node: exp.Expr) -> bool:
    """Return whether ``node`` is a whole-number literal too large for a 32-bit integer."""
    if not isinstance(node, exp.Literal) or node.is_string:
        return False
    try:
        return abs(int(node.name)) > 2**31 - 1
    except ValueError:
        return False
