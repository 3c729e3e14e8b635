"""A zone's node filter: a JSONPath over node attributes, checked as Ignite checks it.

Ignite compiles the filter with Jayway JsonPath when a zone is created or altered, so a typo is
refused then rather than found when nodes are chosen. This is that grammar::

    filter   := path | segment+ | name segment*  (a leading "[" or name starts at the root)
    path     := ("$" | "@") segment*
    segment  := "." name | ".." name | "." "*" | ".." "*" | ("." | "..")? "[" selector "]"
    selector := "*" | index ("," index)* | [int] ":" [int] | quoted ("," quoted)* | "?(" expr ")"
    expr     := term (("&&" | "||") term)*
    term     := "!" term | "(" expr ")" | operand [operator operand]
    operand  := path | quoted | number | true | false | null | "[" operand, ... "]" | /regex/flags

Ignite's own example is ``['nodeAttributes'][?(@.['region'] == 'EU')]``; ``$..*``, the
default, accepts every node.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from catalog.errors import ValidationError

_NAME = re.compile(r"[A-Za-z_$][\w$-]*")
_INT = re.compile(r"-?\d+")
_NUMBER = re.compile(r"-?\d+(\.\d+)?([eE][-+]?\d+)?")
_QUOTED = re.compile(r"'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\"")
_REGEX = re.compile(r"/(?:[^/\\]|\\.)+/[a-z]*")
_OPERATORS = ("==", "!=", "<=", ">=", "=~", "<", ">")
_WORD_OPERATORS = ("nin", "in", "subsetof", "anyof", "noneof", "size", "empty", "contains")
_LITERALS = ("true", "false", "null")


def check_filter(node_filter: str) -> str:
    """Return ``node_filter`` if it is a JSONPath (``$...``, or ``[...]`` from the root).

    Raises:
        ValidationError: it is not; the message says where and what was expected.
    """
    parser = _Parser(node_filter)
    if node_filter.startswith("["):
        parser.segments()
    elif node_filter.startswith("$"):
        parser.path()
    elif parser.match(_NAME):  # a bare name starts at the root, as Jayway reads ``$.name``
        parser.segments()
    else:
        raise ValidationError(
            f"a node filter must be a JSONPath starting with '$', '[' or a name (such as $..* "
            f"or $[?(@.region == 'EU')]): {node_filter!r}"
        )
    parser.skip_spaces()
    if parser.pos != len(node_filter):
        parser.fail("the end of the filter")
    return node_filter


class _Parser:
    """A recursive-descent reader that only checks (it builds nothing)."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0

    def fail(self, expected: str) -> None:
        found = repr(self.text[self.pos]) if self.pos < len(self.text) else "the end"
        raise ValidationError(
            f"node filter {self.text!r} is not a valid JSONPath: expected {expected} at "
            f"character {self.pos + 1}, found {found}"
        )

    def skip_spaces(self) -> None:
        while self.pos < len(self.text) and self.text[self.pos].isspace():
            self.pos += 1

    def accept(self, literal: str) -> bool:
        if self.text.startswith(literal, self.pos):
            self.pos += len(literal)
            return True
        return False

    def expect(self, literal: str) -> None:
        if not self.accept(literal):
            self.fail(f"'{literal}'")

    def match(self, pattern: re.Pattern[str]) -> bool:
        found = pattern.match(self.text, self.pos)
        if found is None or found.end() == self.pos:
            return False
        self.pos = found.end()
        return True

    def path(self) -> None:
        if not (self.accept("$") or self.accept("@")):
            self.fail("'$' or '@'")
        self.segments()

    def segments(self) -> None:
        while True:
            if self.accept(".."):
                if self.accept("["):
                    self.selector()
                elif not (self.accept("*") or self.match(_NAME)):
                    self.fail("a name, '*' or '[' after '..'")
            elif self.accept("."):
                if self.accept("["):
                    self.selector()
                elif not (self.accept("*") or self.match(_NAME)):
                    self.fail("a name, '*' or '[' after '.'")
            elif self.accept("["):
                self.selector()
            else:
                return

    def selector(self) -> None:
        self.skip_spaces()
        if self.accept("?("):
            self.expression()
            self.expect(")")
        elif self.accept("*"):
            pass
        elif self.match(_QUOTED):
            self.more(lambda: self.match(_QUOTED), "a quoted name")
        else:
            start = self.match(_INT)
            self.skip_spaces()
            if self.accept(":"):
                self.skip_spaces()
                self.match(_INT)
            elif not start:
                self.fail("'*', an index, a slice, a quoted name or '?('")
            else:
                self.more(lambda: self.match(_INT), "an index")
        self.skip_spaces()
        self.expect("]")

    def more(self, item: Callable[[], bool], what: str) -> None:
        """Read ``, item`` until no comma follows."""
        self.skip_spaces()
        while self.accept(","):
            self.skip_spaces()
            if not item():
                self.fail(what)
            self.skip_spaces()

    def expression(self) -> None:
        self.term()
        self.skip_spaces()
        while self.accept("&&") or self.accept("||"):
            self.term()
            self.skip_spaces()

    def term(self) -> None:
        self.skip_spaces()
        if self.accept("!"):
            self.term()
            return
        if self.accept("("):
            self.expression()
            self.expect(")")
            return
        self.operand()
        self.skip_spaces()
        symbol = any(self.accept(op) for op in _OPERATORS)
        if symbol or any(self.word(word) for word in _WORD_OPERATORS):
            self.skip_spaces()
            self.operand()

    def operand(self) -> None:
        self.skip_spaces()
        if self.text.startswith(("$", "@"), self.pos):
            self.path()
        elif self.accept("["):
            self.skip_spaces()
            while not self.accept("]"):
                self.operand()
                self.skip_spaces()
                if not self.accept(","):
                    self.expect("]")
                    return
        elif not (
            self.match(_QUOTED)
            or self.match(_REGEX)
            or self.match(_NUMBER)
            or any(self.word(literal) for literal in _LITERALS)
        ):
            self.fail("a path, a quoted string, a number, true, false, null, a list or /regex/")

    def word(self, word: str) -> bool:
        """Read ``word`` if it stands whole at the cursor."""
        if re.match(rf"{word}\b", self.text[self.pos :]) is None:
            return False
        self.pos += len(word)
        return True
