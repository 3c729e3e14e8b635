"""``ScriptShape``: how many statements a SQL script holds and how deep it nests, read cheaply.

A regular-expression pass over quotes, comments, ``;`` and parentheses, so a request's SQL can
be measured against the limits before the (much slower) tokenizer and parser see it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

MAX_NESTING = 64
"""The deepest parenthesis nesting a statement may use: far beyond any DDL default or type,
and far below what would exhaust the parser's recursion."""

_SPECIAL = re.compile(
    r"""'(?:[^']|'')*'?"""  # a string literal (possibly unterminated)
    r"""|"(?:[^"]|"")*"?"""  # a quoted identifier
    r"""|`[^`]*`?"""
    r"""|--[^\n]*"""  # a line comment
    r"""|/\*.*?(?:\*/|\Z)"""  # a block comment
    r"""|[;()]""",
    re.DOTALL,
)
_CONTENT = re.compile(r"\S")


@dataclass(frozen=True, slots=True)
class ScriptShape:
    """The number of non-empty ``;``-separated statements and the deepest nesting of a script."""

    statements: int
    depth: int

    @classmethod
    def of(cls, text: str) -> ScriptShape:
        """Measure ``text`` (linear in its length, no parsing)."""
        statements = depth = deepest = 0
        has_content = False
        position = 0
        for match in _SPECIAL.finditer(text):
            start, token = match.start(), match.group()
            if not has_content and _CONTENT.search(text, position, start):
                has_content = True
            position = match.end()
            if token == ";":
                statements += has_content
                has_content = False
                depth = 0
            elif token == "(":
                has_content = True
                depth += 1
                deepest = max(deepest, depth)
            elif token == ")":
                depth -= 1
            elif not token.startswith(("--", "/*")):
                has_content = True
        if has_content or _CONTENT.search(text, position):
            statements += 1
        return cls(statements, deepest)
