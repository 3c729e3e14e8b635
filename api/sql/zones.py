"""Distribution-zone statements, in Ignite 3's syntax, which sqlglot does not parse.

Read from sqlglot's tokens with a small strict grammar::

    CREATE ZONE [IF NOT EXISTS] z [[WITH] (option = value [, ...]) | WITH option = value [, ...]]
    ALTER ZONE [IF EXISTS] z SET (option = value [, ...])   -- or SET option = value [, ...]
    ALTER ZONE [IF EXISTS] z RENAME TO y
    ALTER ZONE z SET DEFAULT
    DROP ZONE [IF EXISTS] z

Options: PARTITIONS, REPLICAS, QUORUM_SIZE (integers), STORAGE_PROFILES (a string of
comma-separated profile names) and DATA_NODES_FILTER (a JSONPath string). Ignite's other
options (auto-adjust timers, consistency mode, ...) have no place in the catalog and are refused.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlglot.tokenizer_core import Token, TokenType

from api.sql.tokens import TokenReader, is_word
from catalog.commands import (
    AlterZoneCommand,
    CommandBase,
    CreateZoneCommand,
    DropZoneCommand,
    RenameZoneCommand,
    SetDefaultZoneCommand,
)
from catalog.errors import ValidationError

# Option name → (command field, reads a string rather than an integer).
_OPTIONS: dict[str, tuple[str, bool]] = {
    "PARTITIONS": ("partitions", False),
    "REPLICAS": ("replicas", False),
    "QUORUM_SIZE": ("quorum", False),
    "STORAGE_PROFILES": ("storage_profiles", True),
    "DATA_NODES_FILTER": ("filter", True),
}


def is_zone_statement(toks: Sequence[Token]) -> bool:
    """Return whether ``toks`` start ``CREATE ZONE``, ``ALTER ZONE`` or ``DROP ZONE``."""
    return (
        len(toks) >= 2
        and toks[0].token_type in (TokenType.CREATE, TokenType.ALTER, TokenType.DROP)
        and is_word(toks[1], "ZONE")
    )


def zone_command(toks: Sequence[Token]) -> CommandBase:
    """Turn the tokens of one zone statement into its command.

    Raises:
        ValidationError: anything outside the grammar above, or a bad option value.
    """
    reader = TokenReader(toks)
    if reader.accept_words("CREATE", "ZONE"):
        return _create(reader)
    if reader.accept_words("ALTER", "ZONE"):
        return _alter(reader)
    reader.expect_words("DROP", "ZONE")
    if_exists = reader.accept_words("IF", "EXISTS")
    name = reader.name("a zone name")
    reader.expect_end()
    return DropZoneCommand(name=name, if_exists=if_exists)


def _create(reader: TokenReader) -> CommandBase:
    if_not_exists = reader.accept_words("IF", "NOT", "EXISTS")
    name = reader.name("a zone name")
    options: dict[str, Any] = {}
    with_ = reader.accept_words("WITH")
    if with_ or not reader.at_end():
        options = _options(reader)
    reader.expect_end()
    return CreateZoneCommand(name=name, if_not_exists=if_not_exists, **options)


def _alter(reader: TokenReader) -> CommandBase:
    if_exists = reader.accept_words("IF", "EXISTS")
    name = reader.name("a zone name")
    if reader.accept_words("RENAME", "TO"):
        new_name = reader.name("the new zone name")
        reader.expect_end()
        return RenameZoneCommand(name=name, new_name=new_name, if_exists=if_exists)
    reader.expect_words("SET")
    if reader.accept_words("DEFAULT"):
        reader.expect_end()
        if if_exists:
            raise ValidationError("ALTER ZONE IF EXISTS ... SET DEFAULT is not supported")
        return SetDefaultZoneCommand(name=name)
    options = _options(reader)
    reader.expect_end()
    return AlterZoneCommand(name=name, if_exists=if_exists, **options)


def _options(reader: TokenReader) -> dict[str, Any]:
    parens = reader.accept(TokenType.L_PAREN) is not None
    options: dict[str, Any] = {}
    while True:
        option = reader.name("a zone option")
        if option not in _OPTIONS:
            known = ", ".join(_OPTIONS)
            raise ValidationError(f"unsupported zone option {option} (supported: {known})")
        field, is_string = _OPTIONS[option]
        if field in options:
            raise ValidationError(f"zone option {option} given twice")
        reader.expect(TokenType.EQ, f"'=' after {option}")
        if not is_string:
            options[field] = reader.integer(option)
        elif field == "storage_profiles":
            options[field] = tuple(p.strip() for p in reader.string(option).split(","))
        else:
            options[field] = reader.string(option)
        if not reader.accept(TokenType.COMMA):
            break
    if parens:
        reader.expect(TokenType.R_PAREN, "',' or ')' after a zone option")
    return options
