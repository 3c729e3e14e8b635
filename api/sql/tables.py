"""Schema, table, column and index statements: sqlglot's syntax tree → catalog commands.

sqlglot parses these statements itself, except for Ignite 3 clauses it does not know, which are
read from its tokens here (``CREATE TABLE``'s are in ``api.sql.create_table``):

- ``ALTER TABLE [IF EXISTS] t ADD [COLUMN] [IF NOT EXISTS] (col TYPE ..., ...)``;
- ``ALTER TABLE [IF EXISTS] t DROP [COLUMN] [IF EXISTS] a, b`` (sqlglot only reads
  ``DROP COLUMN (a, b)`` and ``DROP COLUMN a, DROP COLUMN b``).

Table statements are parsed with ``TABLE_DIALECT`` (``ROW(...)`` is a STRUCT type). A nested
field named by its path (``ALTER TABLE t DROP COLUMN s.f``) is ``api.sql.nested_alter``'s.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlglot import exp
from sqlglot.tokenizer_core import Token, TokenType

from api.sql.columns import (
    collation_of,
    column_spec,
    column_type,
    default_function,
    default_value,
)
from api.sql.create_table import table_property
from api.sql.nodes import check_args, name_of, qualified_name, schema_name, sql_of
from api.sql.tokens import TABLE_DIALECT, TokenReader, is_word, matching_paren, parse_statement
from catalog.column_types import NESTED_TYPES
from catalog.commands import (
    AddColumnsCommand,
    AlterColumnCommand,
    AlterTablePropertiesCommand,
    Column,
    CommandBase,
    CreateIndexCommand,
    CreateSchemaCommand,
    DropColumnsCommand,
    DropIndexCommand,
    DropSchemaCommand,
    DropTableCommand,
    IndexColumnSpec,
    RenameColumnCommand,
    RenameIndexCommand,
    RenameTableCommand,
)
from catalog.descriptors import IndexKind
from catalog.descriptors.nested import path_words
from catalog.descriptors.schemas import PUBLIC_SCHEMA
from catalog.errors import ErrorCode, ValidationError

ONE_KIND_OF_ACTION = (
    "unsupported ALTER TABLE form; the actions are ADD [COLUMN], DROP [COLUMN], ALTER COLUMN, "
    "RENAME COLUMN and RENAME TO, one kind of action per statement"
)
_INDEX_KINDS = {"HASH": IndexKind.HASH, "SORTED": IndexKind.SORTED, "TREE": IndexKind.SORTED}


# --- schemas -------------------------------------------------------------------------------


def create_schema(node: exp.Create) -> CommandBase:
    """``CREATE SCHEMA [IF NOT EXISTS] s``."""
    check_args(node, {"this", "kind", "exists"}, "CREATE SCHEMA")
    if_not_exists = bool(node.args.get("exists"))
    return CreateSchemaCommand(name=schema_name(node.this), if_not_exists=if_not_exists)


def drop(node: exp.Drop) -> list[CommandBase]:
    """``DROP SCHEMA | TABLE | INDEX [IF EXISTS] name [, ...]`` (CASCADE for schemas only).

    Raises:
        ValidationError: another kind of object, or an unsupported clause.
    """
    kind = str(node.args.get("kind") or "").upper()
    what = f"DROP {kind}"
    if_exists = bool(node.args.get("exists"))
    if kind == "SCHEMA":
        check_args(node, {"kind", "tables", "exists", "cascade"}, what)
        cascade = bool(node.args.get("cascade"))
        return [
            DropSchemaCommand(name=schema_name(t), cascade=cascade, if_exists=if_exists)
            for t in node.args["tables"]
        ]
    check_args(node, {"kind", "tables", "exists"}, what)
    if kind == "TABLE":
        return [
            DropTableCommand(schema=s, name=n, if_exists=if_exists)
            for s, n in (qualified_name(t, "table") for t in node.args["tables"])
        ]
    if kind == "INDEX":
        return [
            DropIndexCommand(schema=s, name=n, if_exists=if_exists)
            for s, n in (qualified_name(t, "index") for t in node.args["tables"])
        ]
    raise ValidationError(f"{what} is not supported (only SCHEMA, TABLE, INDEX and ZONE)")


# --- ALTER TABLE ---------------------------------------------------------------------------


def alter_table(node: exp.Alter) -> list[CommandBase]:
    """``ALTER TABLE``: ADD / DROP / ALTER COLUMN actions and RENAME TO, in order.

    Consecutive ADDs become one ``add_columns`` and consecutive DROPs one ``drop_columns``.

    Raises:
        ValidationError: an unsupported action or clause.
    """
    check_args(node, {"this", "kind", "actions", "exists"}, "ALTER TABLE")
    schema, table = qualified_name(node.this, "table")
    target = AlterTarget(schema, table, bool(node.args.get("exists")))
    commands: list[CommandBase] = []
    for action in node.args.get("actions") or []:
        previous = commands[-1] if commands else None
        if isinstance(action, exp.ColumnDef):
            added = target.add_columns((added_column(action),), bool(action.args.get("exists")))
            if isinstance(previous, AddColumnsCommand) and (
                previous.if_not_exists == added.if_not_exists
            ):
                columns = (*previous.columns, *added.columns)
                commands[-1] = previous.model_copy(update={"columns": columns})
            else:
                commands.append(added)
        elif isinstance(action, exp.Drop):
            dropped = _drop_columns(action, target)
            if isinstance(previous, DropColumnsCommand) and previous.if_exists == dropped.if_exists:
                names = (*previous.columns, *dropped.columns)
                commands[-1] = dropped.model_copy(update={"columns": names})
            else:
                commands.append(dropped)
        elif isinstance(action, exp.AlterColumn):
            commands.append(alter_column(action, target))
        elif isinstance(action, exp.AlterRename):
            commands.append(_rename(action, schema, table, "table", target.if_exists))
        elif isinstance(action, exp.RenameColumn):
            commands.append(_rename_column(action, target))
        else:
            raise ValidationError(f"unsupported ALTER TABLE action {sql_of(action)}")
    if not commands:
        raise ValidationError("ALTER TABLE without an action")
    return commands


@dataclass(frozen=True)
class AlterTarget:
    """The table an ``ALTER TABLE [IF EXISTS]`` changes."""

    schema: str
    table: str
    if_exists: bool

    @property
    def fields(self) -> dict[str, Any]:
        """The fields every command about this table takes."""
        return {"schema": self.schema, "table": self.table, "if_table_exists": self.if_exists}

    def add_columns(self, columns: tuple[Column, ...], if_not_exists: bool) -> AddColumnsCommand:
        """Return the command adding ``columns`` to this table."""
        return AddColumnsCommand(**self.fields, columns=columns, if_not_exists=if_not_exists)

    def drop_columns(self, names: Sequence[str], if_exists: bool) -> DropColumnsCommand:
        """Return the command dropping the columns ``names`` from this table."""
        return DropColumnsCommand(**self.fields, columns=tuple(names), if_exists=if_exists)


def added_column(defn: exp.ColumnDef, parent: Sequence[str] = ()) -> Column:
    """Return the column (or, under ``parent``, the nested field) an ADD COLUMN defines.

    Raises:
        ValidationError: a PRIMARY KEY, or a bad type or default.
    """
    spec = column_spec(defn, parent)
    if spec.primary_key:
        raise ValidationError(f"an added column ({spec.name}) cannot be a PRIMARY KEY")
    return spec.to_column()


def _drop_columns(action: exp.Drop, target: AlterTarget) -> DropColumnsCommand:
    if str(action.args.get("kind") or "").upper() != "COLUMN":
        raise ValidationError(f"unsupported ALTER TABLE action {sql_of(action)}")
    check_args(action, {"kind", "tables", "exists"}, "DROP COLUMN")
    names: list[str] = []
    for dropped in action.args.get("tables") or []:
        items = dropped.expressions if isinstance(dropped, exp.Tuple) else [dropped]
        names.extend(name_of(item, "a column") for item in items)
    return target.drop_columns(names, bool(action.args.get("exists")))


def _rename_column(action: exp.RenameColumn, target: AlterTarget) -> RenameColumnCommand:
    column = name_of(action.this, "a column")
    check_args(action, {"this", "to", "exists"}, f"RENAME COLUMN {column}")
    if action.args.get("exists"):
        raise ValidationError(
            f"RENAME COLUMN IF EXISTS {column} is not supported; "
            "ALTER TABLE IF EXISTS ... RENAME COLUMN is"
        )
    new_name = name_of(action.args["to"], "a column")
    return RenameColumnCommand(**target.fields, column=column, new_name=new_name)


def alter_column(
    action: exp.AlterColumn, target: AlterTarget, path: Sequence[str] = ()
) -> AlterColumnCommand:
    """Return the command of an ``ALTER COLUMN`` action; ``path`` names a nested field.

    With ``path`` (two names or more), the action's own column name is ignored: it stands for
    the field's last name.

    Raises:
        ValidationError: an unsupported form, or a nested type given to SET DATA TYPE.
    """
    column = name_of(action.this, "a column") if len(path) < 2 else path[0]
    nested = {"path": tuple(path[1:])} if len(path) >= 2 else {}
    what = f"ALTER COLUMN {path_words(path) if nested else column}"
    check_args(action, {"this", "dtype", "default", "drop", "allow_null"}, what)
    dtype, default = action.args.get("dtype"), action.args.get("default")
    drop_, allow_null = bool(action.args.get("drop")), action.args.get("allow_null")
    fields: dict[str, Any] = {}
    if dtype is not None:
        sql_type = column_type(dtype)
        if sql_type.type in NESTED_TYPES:
            raise ValidationError(
                f"{what}: SET DATA TYPE takes a plain type, not a {sql_type.type}; a STRUCT's "
                "fields change one by one, by their paths (ADD COLUMN S.F type, DROP COLUMN S.F, "
                "RENAME COLUMN S.F TO G, ALTER COLUMN S.F SET DATA TYPE type)",
                code=ErrorCode.UNSUPPORTED_CHANGE,
            )
        fields = {
            "type": sql_type.type,
            "precision": sql_type.precision,
            "scale": sql_type.scale,
            "length": sql_type.length,
        }
    elif allow_null is not None and drop_ == bool(allow_null):
        fields["nullable"] = bool(allow_null)  # DROP NOT NULL, or SET NOT NULL
    elif default is not None and default_function(default) is not None:
        fields["default_function"] = default_function(default)
    elif default is not None:
        fields["default"] = default_value(default, None)
    elif drop_ and allow_null is None:
        fields["default"] = None  # DROP DEFAULT
    else:
        raise ValidationError(f"unsupported {what} form")
    return AlterColumnCommand(**target.fields, column=column, **fields, **nested)


def _rename(
    action: exp.AlterRename, schema: str, name: str, what: str, if_exists: bool
) -> CommandBase:
    check_args(action, {"this"}, f"ALTER {what.upper()} RENAME")
    new_schema, new_name = qualified_name(action.this, f"new {what} name")
    target = action.this
    if isinstance(target, exp.Table) and target.args.get("db") is not None and new_schema != schema:
        raise ValidationError(f"a {what} cannot move to another schema ({new_schema})")
    if what == "index":
        return RenameIndexCommand(schema=schema, name=name, new_name=new_name, if_exists=if_exists)
    return RenameTableCommand(schema=schema, name=name, new_name=new_name, if_exists=if_exists)


def alter_index(node: exp.Alter) -> CommandBase:
    """``ALTER INDEX [IF EXISTS] [schema.]i RENAME TO j``."""
    check_args(node, {"this", "kind", "actions", "exists"}, "ALTER INDEX")
    schema, name = qualified_name(node.this, "index")
    actions = node.args.get("actions") or []
    if len(actions) != 1 or not isinstance(actions[0], exp.AlterRename):
        raise ValidationError("ALTER INDEX supports only RENAME TO")
    return _rename(actions[0], schema, name, "index", bool(node.args.get("exists")))


def token_table(reader: TokenReader) -> AlterTarget:
    """Read ``ALTER TABLE [IF EXISTS] [schema.]table``."""
    reader.expect_words("ALTER", "TABLE")
    if_exists = reader.accept_words("IF", "EXISTS")
    first = reader.name("a table name")
    if reader.accept(TokenType.DOT):
        return AlterTarget(first, reader.name("a table name"), if_exists)
    return AlterTarget(PUBLIC_SCHEMA, first, if_exists)


def _altering(toks: Sequence[Token], action: str) -> tuple[TokenReader, AlterTarget] | None:
    """Read ``ALTER TABLE [IF EXISTS] t <action>``; None if the statement starts otherwise."""
    reader = TokenReader(toks)
    if not reader.at_words("ALTER", "TABLE"):
        return None
    target = token_table(reader)
    if not reader.accept_words(action):
        return None
    return reader, target


def add_columns_in_parens(text: str, toks: Sequence[Token]) -> CommandBase | None:
    """Ignite's ``ALTER TABLE t ADD [COLUMN] (defs)``; None if the statement is not that form.

    The definitions are parsed by sqlglot, as the body of a ``CREATE TABLE``.
    """
    altering = _altering(toks, "ADD")
    if altering is None:
        return None
    reader, target = altering
    reader.accept_words("COLUMN")
    if_not_exists = reader.accept_words("IF", "NOT", "EXISTS")
    start = reader.position
    if reader.accept(TokenType.L_PAREN) is None:
        return None
    close = matching_paren(toks, start)
    if close != len(toks) - 1:
        raise ValidationError("expected end of statement after ADD COLUMN (...)")
    body = text[toks[start].end + 1 : toks[close].start]
    node = parse_statement(f"CREATE TABLE _ ({body})", TABLE_DIALECT)
    if not isinstance(node, exp.Create) or not isinstance(node.this, exp.Schema):
        raise ValidationError("cannot read the column definitions of ADD COLUMN (...)")
    columns = []
    for defn in node.this.expressions:
        if not isinstance(defn, exp.ColumnDef):
            raise ValidationError(f"ADD COLUMN: expected a column definition, got {sql_of(defn)}")
        columns.append(added_column(defn))
    return target.add_columns(tuple(columns), if_not_exists)


def set_table_properties(toks: Sequence[Token]) -> CommandBase | None:
    """``ALTER TABLE [IF EXISTS] t SET (property [, ...]) | SET property``; None: not SET."""
    altering = _altering(toks, "SET")
    if altering is None:
        return None
    reader, target = altering
    parens = reader.accept(TokenType.L_PAREN) is not None
    properties: dict[str, Any] = {}
    while True:
        if not table_property(reader, properties):
            raise ValidationError(
                "ALTER TABLE ... SET takes MIN STALE ROWS n and STALE ROWS FRACTION f"
            )
        if not parens or not reader.accept(TokenType.COMMA):
            break
    if parens:
        reader.expect(TokenType.R_PAREN, "',' or ')' after a table property")
    reader.expect_end()
    return AlterTablePropertiesCommand(**target.fields, **properties)


def drop_columns_list(toks: Sequence[Token]) -> CommandBase | None:
    """``ALTER TABLE t DROP [COLUMN] [IF EXISTS] (a, b) | a, [DROP [COLUMN]] b``; None: not DROP."""
    altering = _altering(toks, "DROP")
    if altering is None:
        return None
    reader, target = altering
    reader.accept_words("COLUMN")
    if_exists = reader.accept_words("IF", "EXISTS")
    if (reader.peek() or toks[0]).token_type is TokenType.L_PAREN:
        names = list(reader.names_in_parens("column name"))
        reader.expect_end()
        return target.drop_columns(names, if_exists)
    names = [reader.name("a column name")]
    while reader.accept(TokenType.COMMA):
        if any(reader.at_words(word) for word in ("ADD", "ALTER", "RENAME")):
            raise ValidationError(ONE_KIND_OF_ACTION)
        if reader.accept_words("DROP"):
            reader.accept_words("COLUMN")
        names.append(reader.name("a column name"))
    reader.expect_end()
    return target.drop_columns(names, if_exists)


# --- CREATE INDEX --------------------------------------------------------------------------


def create_index(node: exp.Create, toks: Sequence[Token]) -> CommandBase:
    """``CREATE [UNIQUE] INDEX [IF NOT EXISTS] i ON [s.]t [USING HASH|SORTED|TREE] (cols)``.

    Sorted (the default) columns take ``ASC|DESC [NULLS FIRST|LAST]``; as in the catalog,
    NULLs sort low unless told otherwise (``ASC`` = NULLS FIRST, ``DESC`` = NULLS LAST).

    Raises:
        ValidationError: an unknown index kind, expressions instead of columns, or ordering
            on a hash index.
    """
    check_args(node, {"this", "kind", "exists", "unique"}, "CREATE INDEX")
    index = node.this
    if not isinstance(index, exp.Index):
        raise ValidationError("cannot read this CREATE INDEX statement")
    check_args(index, {"this", "table", "params"}, "CREATE INDEX")
    if index.this is None:
        raise ValidationError("an index needs a name")
    name = name_of(index.this, "the index")
    schema, table = qualified_name(index.args.get("table"), "table")
    params = index.args.get("params")
    if not isinstance(params, exp.IndexParameters) or not params.args.get("columns"):
        raise ValidationError("expected ON [schema.]table [USING ...] (columns)")
    check_args(params, {"using", "columns"}, "CREATE INDEX")
    using = params.args.get("using")
    kind = IndexKind.SORTED
    if using is not None:
        word = (using.name if isinstance(using, exp.Expr) else str(using)).upper()
        if word not in _INDEX_KINDS:
            raise ValidationError(f"unsupported index type {word} (HASH, SORTED or TREE)")
        kind = _INDEX_KINDS[word]
    if kind is IndexKind.HASH and any(
        is_word(t, w) for t in toks for w in ("ASC", "DESC", "NULLS")
    ):
        raise ValidationError("a hash index takes no ASC/DESC/NULLS ordering")
    columns = tuple(_index_column(c) for c in params.args["columns"])
    return CreateIndexCommand(
        schema=schema,
        table=table,
        name=name,
        columns=columns,
        kind=kind,
        unique=bool(node.args.get("unique")),
        if_not_exists=bool(node.args.get("exists")),
    )


def _index_column(node: exp.Expr) -> str | IndexColumnSpec:
    if not isinstance(node, exp.Ordered):
        return name_of(node, "an index column")
    check_args(node, {"this", "desc", "nulls_first"}, "index column")
    name = name_of(node.this, "an index column")
    desc, nulls_first = node.args.get("desc"), bool(node.args.get("nulls_first"))
    if desc is None and nulls_first:
        return name  # no ordering written: the catalog's default, ASC NULLS FIRST
    return IndexColumnSpec(name=name, collation=collation_of[(bool(desc), nulls_first)])
