"""``parse_sql``: DDL text → the same catalog commands ``POST /v1/ddl`` takes.

One or more ``;``-separated statements make one batch (all or nothing, like a command list).
Statements are parsed with sqlglot's default dialect (plus Ignite's ``X'..'`` and ``BYTES``);
the Ignite 3 syntax sqlglot does not know is read from its tokens (see ``api.sql.tables``,
``api.sql.create_table``, ``api.sql.zones`` and ``api.sql.grants``). Supported:

- ``CREATE SCHEMA [IF NOT EXISTS] s``; ``DROP SCHEMA [IF EXISTS] s [CASCADE]``
- ``CREATE TABLE [IF NOT EXISTS] [s.]t (col TYPE [NULL | NOT NULL] [DEFAULT const |
  DEFAULT RAND_UUID] [PRIMARY KEY], ..., [CONSTRAINT c] PRIMARY KEY [USING HASH | SORTED]
  (a [ASC | DESC] [NULLS FIRST | LAST], ...)) [COLOCATE [BY] (a, ...)] [ZONE z]
  [STORAGE PROFILE 'p'] [WITH (MIN STALE ROWS n, STALE ROWS FRACTION f | PRIMARY_ZONE = 'z')]``;
  ``DROP TABLE [IF EXISTS]``
- ``ALTER TABLE [IF EXISTS] [s.]t`` ``ADD [COLUMN] [IF NOT EXISTS] def`` (or ``(def, ...)``),
  ``DROP [COLUMN] [IF EXISTS] c`` (or ``(c, ...)`` or ``c, ...``),
  ``ALTER [COLUMN] c SET DATA TYPE T`` / ``TYPE T``, ``... DROP NOT NULL``, ``... SET NOT NULL``,
  ``... SET DEFAULT v``, ``... DROP DEFAULT``, ``RENAME COLUMN c TO d``, ``RENAME TO u``,
  ``SET (MIN STALE ROWS n, STALE ROWS FRACTION f)``; a column's type may be ``STRUCT<...>``,
  ``ROW(...)``, ``ARRAY<...>`` or ``MAP<..., ...>`` (``api.sql.columns``), and ADD, DROP,
  RENAME and ALTER COLUMN name a nested field by its path, ``PAYLOAD.ITEMS.element.PRICE``
  (``api.sql.nested_alter``)
- ``CREATE [UNIQUE] INDEX [IF NOT EXISTS] i ON [s.]t [USING HASH | SORTED | TREE]
  (a [ASC | DESC] [NULLS FIRST | LAST], ...)``; ``DROP INDEX [IF EXISTS] [s.]i``;
  ``ALTER INDEX [IF EXISTS] [s.]i RENAME TO j``
- ``CREATE [OR REPLACE] VIEW [IF NOT EXISTS] [s.]v [(a [COMMENT 'c'], ...)] AS query``,
  ``DROP VIEW [IF EXISTS] [s.]v``, ``ALTER VIEW [IF EXISTS] [s.]v RENAME TO [s.]w``
  (``api.sql.views``: typed against the catalog, the text kept as written)
- ``CREATE ZONE`` (Ignite 3.1's ``(PARTITIONS n, ...) STORAGE PROFILES ['p']`` or ``WITH
  option = value``), ``ALTER ZONE [IF EXISTS] ... SET (...) | RENAME TO | SET DEFAULT``,
  ``DROP ZONE``
- ``CREATE ROLE [IF NOT EXISTS] r``; ``DROP ROLE [IF EXISTS] r``
- ``GRANT priv [, ...] ON CATALOG | ON SCHEMA s | ON [TABLE] [s.]t | ON VIEW [s.]v TO USER u |
  TO ROLE r``, where priv is USAGE, SELECT, MODIFY, CREATE, ALTER, DROP, MANAGE GRANTS
  (or MANAGE_GRANTS) or OWNERSHIP, or ``ALL [PRIVILEGES]`` (every one the object may be
  granted); ``GRANT ROLE r TO USER u | TO ROLE r2``; ``REVOKE`` the same with ``FROM``
  (``api.sql.grants``; a principal's name is an identifier too: ``TO USER "alice"``)

``SHOW GRANTS [ON object | TO USER u | TO ROLE r]`` is a read, not a command: ``show_grants``
reads it when it is the whole text, and a batch refuses it.

Unquoted identifiers are upper-cased (``orders`` is ``ORDERS``), quoted ones keep their case;
the schema defaults to PUBLIC. Anything else is refused with a ``ValidationError`` naming the
statement by its number and text.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass

from sqlglot import exp
from sqlglot.errors import TokenError
from sqlglot.tokenizer_core import Token, TokenType

from api.sql import create_table, grants, tables, views
from api.sql.nested_alter import nested_alter
from api.sql.script_shape import MAX_NESTING, ScriptShape
from api.sql.tokens import DIALECT, TABLE_DIALECT, parse_statement, tokenize
from api.sql.zones import is_zone_statement, zone_command
from catalog.catalog import Catalog
from catalog.commands import CommandBase
from catalog.commands.base import UpdateContext
from catalog.descriptors.nested import MAX_DEPTH
from catalog.errors import BatchPosition, CatalogError, ErrorCode, ValidationError

MAX_SHOWN = 80
"""How many characters of a refused statement its error message quotes."""

SUPPORTED = (
    "CREATE/DROP SCHEMA, CREATE/ALTER/DROP TABLE, CREATE/ALTER/DROP INDEX, CREATE/ALTER/DROP ZONE, "
    "CREATE/ALTER/DROP VIEW, CREATE/DROP ROLE, GRANT, REVOKE"
)


@dataclass(frozen=True, slots=True)
class Statement:
    """One statement of a script: its 1-based number, its text and where it starts (1-based)."""

    number: int
    text: str
    line: int = 1
    column: int = 1

    def position(self) -> BatchPosition:
        """Return where this statement stands, for an error that belongs to it."""
        return BatchPosition(self.number, self.line, self.column)


def _line_column(text: str, offset: int) -> tuple[int, int]:
    return text.count("\n", 0, offset) + 1, offset - (text.rfind("\n", 0, offset) + 1) + 1


def split_statements(text: str) -> list[Statement]:
    """Split ``text`` at its top-level ``;`` (not inside strings or comments); drop empty ones.

    Raises:
        ValidationError: the text cannot be tokenized (e.g. an unterminated string), naming
            the statement where that happened.
    """
    tokenizer = DIALECT.tokenizer()
    try:
        toks = tokenizer.tokenize(text)
    except TokenError as e:
        # The tokens read before the error say which statement it is in.
        partial: list[Token] = tokenizer.tokens
        groups = _groups(partial)
        unfinished = groups.pop()[0] if groups and groups[-1][1] is None else None
        after_last = partial[-1].end + 1 if partial else 0
        start = unfinished[0].start if unfinished else after_last
        shown = _shown(text[start:].strip())
        # sqlglot reports an unterminated block comment as an IndexError.
        cause = e.__cause__ or e
        reason = "unterminated comment or literal" if isinstance(cause, IndexError) else cause
        refused = ValidationError(f"statement {len(groups) + 1} {shown}: cannot read SQL: {reason}")
        refused.position = BatchPosition(len(groups) + 1, *_line_column(text, start))
        raise refused from e
    return [
        Statement(
            i + 1,
            text[group[0].start : len(text) if end is None else end.start].strip(),
            *_line_column(text, group[0].start),
        )
        for i, (group, end) in enumerate(_groups(toks))
    ]


def _groups(toks: list[Token]) -> list[tuple[list[Token], Token | None]]:
    """Return the non-empty runs of tokens between semicolons, each with its ``;`` (or None)."""
    groups: list[tuple[list[Token], Token | None]] = []
    current: list[Token] = []
    for token in toks:
        if token.token_type is TokenType.SEMICOLON:
            if current:
                groups.append((current, token))
            current = []
        else:
            current.append(token)
    if current:
        groups.append((current, None))
    return groups


def parse_sql(text: str, catalog: Catalog | None = None) -> list[CommandBase]:
    """Turn DDL statements into catalog commands, in order, as one batch (see ``parse_script``).

    Raises:
        ValidationError: as ``parse_script``.
    """
    return parse_script(text, catalog)[0]


def catalog_after(base: Catalog, commands: list[CommandBase]) -> Catalog:
    """Return ``base`` with ``commands`` applied, as far as they apply (for typing a view)."""
    current = base
    for command in commands:
        try:
            entries = command.entries(UpdateContext(base, current))
        except CatalogError:
            return current  # the batch will be refused at that command anyway
        for entry in entries:
            current = entry.apply(current)
    return current


def parse_script(
    text: str, catalog: Catalog | None = None
) -> tuple[list[CommandBase], list[Statement]]:
    """Turn DDL statements into catalog commands, in order, as one batch.

    Args:
        text: one or more statements separated by ``;``.
        catalog: the catalog the batch applies to; a ``CREATE VIEW`` is typed against it with
            the script's earlier statements applied (None: views are refused).

    Returns:
        The commands, ready for ``CatalogManager.execute`` or ``catalog.prepare``, and the
        statement each command came from.

    Raises:
        ValidationError: no statement, parentheses nested deeper than ``MAX_NESTING``, an
            unsupported statement or clause, a syntax error, or a command whose shape is
            invalid; the message starts with ``statement N "<text>"``, ``position`` says
            where it stands, and the underlying code and details are kept.
    """
    shape = ScriptShape.of(text)
    if shape.depth > MAX_NESTING:
        raise ValidationError(
            f"the SQL nests parentheses {shape.depth} deep; at most {MAX_NESTING} are accepted"
        )
    statements = split_statements(text)
    if not statements:
        raise ValidationError("no SQL statement to run")
    commands: list[CommandBase] = []
    origins: list[Statement] = []
    for statement in statements:
        try:
            made = statement_commands(statement.text, _typing_catalog(catalog, list(commands)))
        except ValidationError as e:
            refused = ValidationError(
                f"statement {statement.number} {_shown(statement.text)}: {e.message}",
                code=e.code,
                details=e.details,
            )
            refused.position = statement.position()
            raise refused from e
        commands.extend(made)
        origins.extend([statement] * len(made))
    return commands, origins


def _typing_catalog(
    catalog: Catalog | None, earlier: list[CommandBase]
) -> Callable[[], Catalog | None]:
    """Return how a statement finds the catalog it applies to (made only when asked for)."""
    return lambda: None if catalog is None else catalog_after(catalog, earlier)


def refused_statement(error: CatalogError, origins: list[Statement]) -> CatalogError:
    """Return ``error`` (a refusal of command N of ``parse_script``'s batch) as its statement's.

    The copy's message starts with ``statement N "<text>"`` and its ``position`` gives the
    statement's number, line and column; an error of no command is returned as it is.
    """
    if error.position is None or not 1 <= error.position.statement <= len(origins):
        return error
    statement = origins[error.position.statement - 1]
    located = copy.copy(error)
    located.message = f"statement {statement.number} {_shown(statement.text)}: {error.message}"
    located.position = statement.position()
    return located


def _shown(text: str) -> str:
    flat = " ".join(text.split())
    if len(flat) > MAX_SHOWN:
        flat = flat[: MAX_SHOWN - 3] + "..."
    return f'"{flat}"'


def statement_commands(
    text: str, catalog: Callable[[], Catalog | None] = lambda: None
) -> list[CommandBase]:
    """Turn one statement (no ``;``) into its commands (``catalog``: what a view is typed on).

    Raises:
        ValidationError: the statement is not supported or not valid.
    """
    toks = tokenize(text)
    if grants.is_grant_statement(toks):
        return grants.grant_commands(toks)
    if is_zone_statement(toks):
        return [zone_command(toks)]
    if views.is_view_statement(toks):
        return views.view_commands(text, toks, catalog)
    is_table = len(toks) >= 2 and toks[1].token_type is TokenType.TABLE
    if is_table:
        _check_type_nesting(toks)
    if is_table and toks[0].token_type is TokenType.CREATE:
        return [create_table.create_table_from_text(text, toks)]
    if is_table and toks[0].token_type is TokenType.ALTER:
        nested = nested_alter(text, toks, catalog)
        if nested is not None:
            return nested
    added = tables.add_columns_in_parens(text, toks) or tables.set_table_properties(toks)
    if added is not None:
        return [added]
    node = parse_statement(text, TABLE_DIALECT if is_table else DIALECT)
    if isinstance(node, exp.Command) or node.find(exp.Command) is not None:
        dropped = tables.drop_columns_list(toks)
        if dropped is not None:
            return [dropped]
        if isinstance(node, exp.Alter) or (toks[0].token_type is TokenType.ALTER and is_table):
            raise ValidationError(tables.ONE_KIND_OF_ACTION)
        raise ValidationError(f"unsupported statement (supported: {SUPPORTED})")
    return _commands(node, toks)


def _check_type_nesting(toks: list[Token]) -> None:
    """Refuse a table statement whose types nest ``<`` deeper than the parser is asked to go.

    Parentheses are measured for the whole script (``ScriptShape``); angle brackets only here,
    where nothing but a type writes them (elsewhere ``<`` is a comparison). The catalog then
    measures the fields' depth exactly (``MAX_DEPTH``), naming the field.

    Raises:
        ValidationError: NESTED_TOO_DEEP, ``<`` nested deeper than ``MAX_NESTING``.
    """
    depth = deepest = 0
    for token in toks:
        if token.token_type is TokenType.LT:
            depth += 1
            deepest = max(deepest, depth)
        elif token.token_type is TokenType.GT:
            depth -= 1
    if deepest > MAX_NESTING:
        raise ValidationError(
            f"the column types nest {deepest} deep; a field sits at most {MAX_DEPTH} levels deep",
            code=ErrorCode.NESTED_TOO_DEEP,
        )


def _commands(node: exp.Expr, toks: list[Token]) -> list[CommandBase]:
    kind = str(node.args.get("kind") or "").upper()
    if isinstance(node, exp.Create) and kind == "SCHEMA":
        return [tables.create_schema(node)]
    if isinstance(node, exp.Create) and kind == "TABLE":
        return [create_table.create_table(node, create_table.TableOptions())]
    if isinstance(node, exp.Create) and kind == "INDEX":
        return [tables.create_index(node, toks)]
    if isinstance(node, exp.Drop):
        return tables.drop(node)
    if isinstance(node, exp.Alter) and kind == "TABLE":
        return tables.alter_table(node)
    if isinstance(node, exp.Alter) and kind == "INDEX":
        return [tables.alter_index(node)]
    if isinstance(node, exp.Create) and kind == "VIEW":  # what is_view_statement left
        words = {t.text.upper() for t in toks}
        what = "MATERIALIZED" if "MATERIALIZED" in words else "TEMPORARY"
        raise ValidationError(
            f"CREATE {what} VIEW is not supported: the catalog keeps views, a query per dialect "
            "that the engine reading the view runs"
        )
    first = toks[0].text.upper()
    if first in ("CREATE", "ALTER", "DROP"):
        what = f"{first} {kind}" if kind else first
        raise ValidationError(f"{what} is not supported (supported: {SUPPORTED})")
    raise ValidationError(f"{first} is not a supported DDL statement (supported: {SUPPORTED})")
