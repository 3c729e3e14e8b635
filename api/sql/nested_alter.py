"""``ALTER TABLE`` on nested fields, named by their paths as Spark names them.

- ``ADD [COLUMN] [IF NOT EXISTS] s.f type [NULL | NOT NULL]`` (or ``ADD COLUMN (s.f type, ...)``)
  adds ``f`` at the end of STRUCT ``s``;
- ``DROP [COLUMN] [IF EXISTS] s.f [, ...]`` drops fields (and columns, if named alone);
- ``RENAME COLUMN s.f TO g`` renames one;
- ``ALTER [COLUMN] s.f SET DATA TYPE t | TYPE t | DROP NOT NULL`` widens or relaxes one.

A path is names joined by dots: ``PAYLOAD.SOURCE``, and through an array or a map by its
fields' names, ``PAYLOAD.ITEMS.element.PRICE``. Each name follows the quoting rules (``"A.B"``
is one name holding a dot), except that an unquoted ``element``, ``key`` or ``value`` after an
ARRAY or a MAP names its field (Iceberg's lower-case names); after a STRUCT it is folded as
any other name. Without the table at hand (no catalog), those three words always name an
array's or a map's field.

A statement whose column positions hold no path is left to ``api.sql.tables``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from sqlglot import exp
from sqlglot.tokenizer_core import Token, TokenType

from api.sql.tables import (
    ONE_KIND_OF_ACTION,
    AlterTarget,
    added_column,
    alter_column,
    token_table,
)
from api.sql.tokens import TABLE_DIALECT, TokenReader, describe, parse_statement, token_name
from catalog.catalog import Catalog
from catalog.column_types import ColumnType
from catalog.commands import (
    AddColumnsCommand,
    Column,
    CommandBase,
    DropColumnsCommand,
    RenameColumnCommand,
)
from catalog.descriptors import ColumnDescriptor
from catalog.descriptors.nested import ELEMENT, KEY, VALUE, find_path, path_words
from catalog.errors import ValidationError

_FIXED = (ELEMENT, KEY, VALUE)
_OPENING = (TokenType.L_PAREN, TokenType.LT)
_CLOSING = (TokenType.R_PAREN, TokenType.GT)

Path = tuple[str, ...]


def nested_alter(
    text: str, toks: Sequence[Token], catalog: Callable[[], Catalog | None]
) -> list[CommandBase] | None:
    """Turn an ``ALTER TABLE`` naming a nested field by its path into commands.

    ``catalog`` gives the catalog the statement applies to, where the table's columns say
    whether ``element``, ``key`` or ``value`` names a field of an array or a map.

    Returns:
        The commands, or None when no column position of the statement holds a path.

    Raises:
        ValidationError: an unsupported form, or actions of more than one kind.
    """
    reader = TokenReader(toks)
    if not reader.at_words("ALTER", "TABLE"):
        return None
    target = token_table(reader)
    if not _has_path(toks, reader.position):
        return None
    found = catalog()
    table = None if found is None else found.find_table(target.schema, target.table)
    statement = _Statement(text, reader, target, None if table is None else table.columns)
    if reader.at_words("ADD"):
        return statement.adds()
    if reader.at_words("DROP"):
        return [statement.drops()]
    if reader.accept_words("RENAME", "COLUMN"):
        return [statement.rename()]
    if reader.accept_words("ALTER"):
        reader.accept_words("COLUMN")
        return [statement.alter()]
    raise ValidationError(ONE_KIND_OF_ACTION)


def _has_path(toks: Sequence[Token], start: int) -> bool:
    """Return whether a ``name.name`` follows ``start`` (a ``RENAME TO s.t`` is no path)."""
    for i in range(start, len(toks) - 2):
        if (
            toks[i + 1].token_type is TokenType.DOT
            and token_name(toks[i]) is not None
            and token_name(toks[i + 2]) is not None
            and toks[i - 1].text.upper() != "TO"
        ):
            return True
    return False


class _Statement:
    """The actions of one statement, read from its tokens after ``ALTER TABLE t``."""

    def __init__(
        self,
        text: str,
        reader: TokenReader,
        target: AlterTarget,
        columns: Sequence[ColumnDescriptor] | None,
    ) -> None:
        self._text = text
        self._reader = reader
        self._target = target
        self._columns = columns

    def adds(self) -> list[CommandBase]:
        """``ADD [COLUMN] [IF NOT EXISTS] path def [, [ADD [COLUMN]] path def ...]`` or ``(...)``.

        Consecutive fields of one struct (or columns of the table) make one command.
        """
        reader = self._reader
        reader.expect_words("ADD")
        reader.accept_words("COLUMN")
        if_not_exists = reader.accept_words("IF", "NOT", "EXISTS")
        parens = reader.accept(TokenType.L_PAREN) is not None
        added: list[tuple[Path, Column]] = []
        while True:
            added.append(self._definition())
            if not reader.accept(TokenType.COMMA):
                break
            if not parens and reader.accept_words("ADD"):
                reader.accept_words("COLUMN")
                if reader.accept_words("IF", "NOT", "EXISTS") and not if_not_exists:
                    raise ValidationError(
                        "ADD COLUMN IF NOT EXISTS is said once, after the first ADD, for every "
                        "column the statement adds"
                    )
            if any(reader.at_words(w) for w in ("DROP", "ALTER", "RENAME")):
                raise ValidationError(ONE_KIND_OF_ACTION)
        if parens:
            reader.expect(TokenType.R_PAREN, "',' or ')' after a column definition")
        reader.expect_end()
        runs: list[tuple[Path, list[Column]]] = []
        for parent, column in added:
            if runs and runs[-1][0] == parent:
                runs[-1][1].append(column)
            else:
                runs.append((parent, [column]))
        return [
            AddColumnsCommand(
                **self._target.fields,
                columns=tuple(columns),
                if_not_exists=if_not_exists,
                parent=parent,
            )
            for parent, columns in runs
        ]

    def _definition(self) -> tuple[Path, Column]:
        """Read ``path type [constraints]`` up to the next top-level ``,`` or ``)``."""
        tokens = self._path_tokens("a column name")
        parent = self._spelled(tokens[:-1])
        last = self._definition_end()
        if last is None:
            named = path_words((*parent, tokens[-1].text))
            raise ValidationError(f"ADD COLUMN {named} needs a type")
        body = self._text[tokens[-1].start : last.end + 1]
        node = parse_statement(f"CREATE TABLE _ ({body})", TABLE_DIALECT)
        if not isinstance(node, exp.Create) or not isinstance(node.this, exp.Schema):
            raise ValidationError("cannot read the column definition of ADD COLUMN")
        defn = node.this.expressions[0] if len(node.this.expressions) == 1 else None
        if not isinstance(defn, exp.ColumnDef):
            raise ValidationError(f"ADD COLUMN: expected a column definition, got {body}")
        return parent, added_column(defn, parent)

    def _definition_end(self) -> Token | None:
        """Read a definition's type and constraints; return their last token (None: none)."""
        reader, depth, last = self._reader, 0, None
        while (token := reader.peek()) is not None:
            if depth == 0 and token.token_type in (TokenType.COMMA, TokenType.R_PAREN):
                break
            if token.token_type in _OPENING:
                depth += 1
            elif token.token_type in _CLOSING:
                depth -= 1
            last = reader.take()
        return last

    def drops(self) -> DropColumnsCommand:
        """``DROP [COLUMN] [IF EXISTS] path [, [DROP [COLUMN]] path ...]`` or ``(path, ...)``."""
        reader = self._reader
        reader.expect_words("DROP")
        reader.accept_words("COLUMN")
        if_exists = reader.accept_words("IF", "EXISTS")
        parens = reader.accept(TokenType.L_PAREN) is not None
        paths = [self._path("a column name")]
        while reader.accept(TokenType.COMMA):
            if not parens and any(reader.at_words(w) for w in ("ADD", "ALTER", "RENAME")):
                raise ValidationError(ONE_KIND_OF_ACTION)
            if not parens and reader.accept_words("DROP"):
                reader.accept_words("COLUMN")
            paths.append(self._path("a column name"))
        if parens:
            reader.expect(TokenType.R_PAREN, "',' or ')' after a column name")
        reader.expect_end()
        return DropColumnsCommand(
            **self._target.fields,
            columns=tuple(p[0] for p in paths if len(p) == 1),
            fields=tuple(p for p in paths if len(p) > 1),
            if_exists=if_exists,
        )

    def rename(self) -> RenameColumnCommand:
        """``RENAME COLUMN path TO name``."""
        reader = self._reader
        path = self._path("a column name")
        reader.expect_words("TO")
        new_name = reader.name("the new name")
        reader.expect_end()
        return RenameColumnCommand(
            **self._target.fields, column=path[0], path=path[1:], new_name=new_name
        )

    def alter(self) -> CommandBase:
        """``ALTER [COLUMN] path SET DATA TYPE t | TYPE t | DROP NOT NULL | ...``."""
        tokens = self._path_tokens("a column name")
        path = self._spelled(tokens)
        rest = self._text[tokens[-1].start :]
        node = parse_statement(f"ALTER TABLE _ ALTER COLUMN {rest}", TABLE_DIALECT)
        actions = node.args.get("actions") if isinstance(node, exp.Alter) else None
        if not actions or len(actions) != 1 or not isinstance(actions[0], exp.AlterColumn):
            raise ValidationError(
                "ALTER COLUMN on a nested field takes SET DATA TYPE t, TYPE t or DROP NOT NULL"
            )
        return alter_column(actions[0], self._target, path)

    def _path(self, what: str) -> Path:
        return self._spelled(self._path_tokens(what))

    def _path_tokens(self, what: str) -> list[Token]:
        """Read ``name [. name ...]``; return the names' tokens."""
        reader = self._reader
        tokens = [self._name_token(what)]
        while reader.accept(TokenType.DOT):
            tokens.append(self._name_token(f"a field name after {tokens[-1].text}."))
        return tokens

    def _name_token(self, what: str) -> Token:
        token = self._reader.peek()
        if token is None or token_name(token) is None:
            raise ValidationError(f"expected {what}, found {describe(token)}")
        self._reader.take()
        return token

    def _spelled(self, tokens: Sequence[Token]) -> Path:
        """Return the names ``tokens`` spell, reading ``element``, ``key``, ``value`` as fields."""
        path: list[str] = []
        for i, token in enumerate(tokens):
            name = token_name(token)
            assert name is not None  # read by _name_token
            if i and token.token_type is not TokenType.IDENTIFIER and name.lower() in _FIXED:
                holder = None if self._columns is None else find_path(self._columns, path)
                if holder is None or holder.type is not ColumnType.STRUCT:
                    name = name.lower()
            path.append(name)
        return tuple(path)
