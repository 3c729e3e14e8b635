"""The SQL dialect we read, and a strict reader for the Ignite clauses sqlglot cannot parse.

sqlglot's default dialect parses most of our DDL. Two tokenizer settings are added for Ignite 3
(hex literals ``X'0A'`` and the type name ``BYTES``); everything else is sqlglot's own. For the
statements and clauses sqlglot does not know (``CREATE ZONE``, ``COLOCATE BY``, ...),
``TokenReader`` walks sqlglot's tokens with a small grammar and refuses anything it does not
expect, naming what it found.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Never

from sqlglot import exp, tokens
from sqlglot.dialects.dialect import Dialect
from sqlglot.errors import ParseError, TokenError
from sqlglot.tokenizer_core import Token, TokenType

from catalog.errors import ValidationError


class IgniteDialect(Dialect):
    """sqlglot's default dialect plus Ignite 3's hex literals and ``BYTES`` type name."""

    class Tokenizer(tokens.Tokenizer):
        """The default tokenizer with ``X'..'`` hex strings and ``BYTES`` = ``VARBINARY``."""

        HEX_STRINGS = [("x'", "'"), ("X'", "'")]  # noqa: RUF012 - sqlglot's own declaration
        KEYWORDS = {**tokens.Tokenizer.KEYWORDS, "BYTES": TokenType.VARBINARY}  # noqa: RUF012


DIALECT = IgniteDialect()


class TableDialect(IgniteDialect):
    """The dialect of ``CREATE TABLE`` and ``ALTER TABLE``: ``ROW(name type, ...)`` is a STRUCT.

    Only these statements read ``ROW`` so (as Trino spells a struct type); elsewhere, in a
    view's query, ``ROW`` keeps its meaning (``CURRENT ROW``).
    """

    class Tokenizer(IgniteDialect.Tokenizer):
        """The catalog's tokenizer with ``ROW`` = ``STRUCT``."""

        KEYWORDS = {**IgniteDialect.Tokenizer.KEYWORDS, "ROW": TokenType.STRUCT}  # noqa: RUF012


TABLE_DIALECT = TableDialect()

_WORD = re.compile(r"[^\W\d]\w*")
_SENTINEL = re.compile(r"<Token token_type: TokenType\.SENTINEL[^>]*>")
_LITERALS = (TokenType.IDENTIFIER, TokenType.STRING, TokenType.NUMBER)


def tokenize(text: str) -> list[Token]:
    """Return sqlglot's tokens for ``text`` (offsets index into ``text``).

    Raises:
        ValidationError: the text cannot be tokenized (e.g. an unterminated string).
    """
    try:
        return DIALECT.tokenize(text)
    except TokenError as e:
        raise ValidationError(f"cannot read SQL: {e}") from e


def parse_statement(text: str, dialect: Dialect = DIALECT) -> exp.Expr:
    """Parse one statement with sqlglot (which may fall back to a generic ``exp.Command``).

    ``dialect`` is ``TABLE_DIALECT`` for a table's statements, the catalog's own otherwise.

    Raises:
        ValidationError: a syntax error, with its line and column within the statement.
    """
    try:
        nodes = [n for n in dialect.parse(text) if n is not None]
    except ParseError as e:
        first = e.errors[0] if e.errors else {}
        where = f" at line {first.get('line')}, column {first.get('col')}" if first else ""
        raise ValidationError(f"syntax error{where}: {_reason(first, e)}") from e
    except TokenError as e:
        raise ValidationError(f"cannot read SQL: {e}") from e
    if len(nodes) != 1:
        raise ValidationError("expected exactly one statement")
    return nodes[0]


def _reason(first: dict[str, object], error: ParseError) -> str:
    """Return what a parse error says, in words (the parser names its own classes)."""
    description = str(first.get("description") or error)
    if "Required keyword" in description:  # "... missing for <class 'sqlglot...'>"
        near = first.get("highlight")
        return "something is missing" + (f" at {str(near)!r}" if near else "")
    return _SENTINEL.sub("end of statement", description)


def is_word(token: Token, word: str) -> bool:
    """Return whether ``token`` is the unquoted keyword ``word`` (any case)."""
    return token.token_type not in _LITERALS and token.text.upper() == word


def describe(token: Token | None) -> str:
    """Return how an error message names ``token`` ("end of statement" for None)."""
    return "end of statement" if token is None else repr(token.text)


def token_name(token: Token) -> str | None:
    """Return the object name ``token`` spells, or None if it is not a name.

    A quoted identifier keeps its case; an unquoted one is upper-cased (SQL standard, Ignite).
    """
    if token.token_type is TokenType.IDENTIFIER:
        return token.text
    if token.token_type not in _LITERALS and _WORD.fullmatch(token.text):
        return token.text.upper()
    return None


class TokenReader:
    """A cursor over tokens that reads a small grammar and refuses anything unexpected."""

    def __init__(self, toks: Sequence[Token]) -> None:
        self._tokens = toks
        self._pos = 0

    def peek(self, offset: int = 0) -> Token | None:
        """Return the token ``offset`` ahead of the cursor, or None past the end."""
        i = self._pos + offset
        return self._tokens[i] if i < len(self._tokens) else None

    @property
    def position(self) -> int:
        """Return the index of the next token to read."""
        return self._pos

    def at_end(self) -> bool:
        """Return whether every token has been read."""
        return self._pos >= len(self._tokens)

    def at_words(self, *words: str) -> bool:
        """Return whether the next tokens are the keywords ``words``."""
        for i, word in enumerate(words):
            token = self.peek(i)
            if token is None or not is_word(token, word):
                return False
        return True

    def accept_words(self, *words: str) -> bool:
        """Read the keywords ``words`` if they come next; return whether they did."""
        if not self.at_words(*words):
            return False
        self._pos += len(words)
        return True

    def expect_words(self, *words: str) -> None:
        """Read the keywords ``words``.

        Raises:
            ValidationError: something else comes next.
        """
        if not self.accept_words(*words):
            self._fail(" ".join(words))

    def take(self) -> Token | None:
        """Read the next token, whatever it is; return it (None past the end)."""
        token = self.peek()
        if token is not None:
            self._pos += 1
        return token

    def accept(self, token_type: TokenType) -> Token | None:
        """Read the next token if it has ``token_type``; return it (None if it has not)."""
        token = self.peek()
        if token is None or token.token_type is not token_type:
            return None
        self._pos += 1
        return token

    def expect(self, token_type: TokenType, what: str) -> Token:
        """Read a token of ``token_type``.

        Raises:
            ValidationError: something else comes next; ``what`` says what was expected.
        """
        token = self.accept(token_type)
        if token is None:
            self._fail(what)
        return token

    def name(self, what: str) -> str:
        """Read an object name (quoted: as written; unquoted: upper-cased).

        Raises:
            ValidationError: the next token is not a name.
        """
        token = self.peek()
        found = None if token is None else token_name(token)
        if found is None:
            self._fail(what)
        self._pos += 1
        return found

    def names_in_parens(self, what: str) -> tuple[str, ...]:
        """Read ``( name [, name ...] )``.

        Raises:
            ValidationError: anything else.
        """
        self.expect(TokenType.L_PAREN, f"'(' before the {what}s")
        names = [self.name(what)]
        while self.accept(TokenType.COMMA):
            names.append(self.name(what))
        self.expect(TokenType.R_PAREN, f"',' or ')' after a {what}")
        return tuple(names)

    def integer(self, what: str) -> int:
        """Read an unsigned integer literal.

        Raises:
            ValidationError: the next token is not one.
        """
        token = self.peek()
        if (
            token is None
            or token.token_type is not TokenType.NUMBER
            or not (token.text.isascii() and token.text.isdigit())
        ):
            self._fail(f"an integer for {what}")
        self._pos += 1
        return int(token.text)

    def fraction(self, what: str) -> float:
        """Read an unsigned numeric literal (``0.25``, ``1``).

        Raises:
            ValidationError: the next token is not one.
        """
        token = self.peek()
        if token is None or token.token_type is not TokenType.NUMBER:
            self._fail(f"a number for {what}")
        try:
            value = float(token.text)
        except ValueError:
            self._fail(f"a number for {what}")
        self._pos += 1
        return value

    def string(self, what: str) -> str:
        """Read a string literal.

        Raises:
            ValidationError: the next token is not one.
        """
        return self.expect(TokenType.STRING, f"a string literal for {what}").text

    def expect_end(self) -> None:
        """Check that every token has been read.

        Raises:
            ValidationError: tokens are left.
        """
        if not self.at_end():
            self._fail("end of statement")

    def _fail(self, expected: str) -> Never:
        raise ValidationError(f"expected {expected}, found {describe(self.peek())}")


def first_of(toks: Sequence[Token], token_type: TokenType) -> int | None:
    """Return the position of the first token of ``token_type``, or None."""
    return next((i for i, t in enumerate(toks) if t.token_type is token_type), None)


def matching_paren(toks: Sequence[Token], start: int | None) -> int | None:
    """Return the position of the ``)`` closing the ``(`` at ``start``, or None."""
    if start is None:
        return None
    depth = 0
    for i in range(start, len(toks)):
        if toks[i].token_type is TokenType.L_PAREN:
            depth += 1
        elif toks[i].token_type is TokenType.R_PAREN:
            depth -= 1
            if depth == 0:
                return i
    return None
