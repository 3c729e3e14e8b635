"""Distribution-zone statements, in Ignite 3's syntax, which sqlglot does not parse.

Read from sqlglot's tokens with a small strict grammar; both of Ignite's option styles are
read, the 3.1 one (``element``) and the older one (``option = value``)::

    CREATE ZONE [IF NOT EXISTS] z [(element [, ...])] STORAGE PROFILES ['p' [, ...]]
    CREATE ZONE [IF NOT EXISTS] z [[WITH] (option = value [, ...]) | WITH option = value [, ...]]
    ALTER ZONE [IF EXISTS] z SET (element | option = value [, ...])  -- or without parentheses
    ALTER ZONE [IF EXISTS] z RENAME TO y
    ALTER ZONE [IF EXISTS] z SET DEFAULT
    DROP ZONE [IF EXISTS] z

Elements: ``PARTITIONS n``, ``REPLICAS n``, ``QUORUM SIZE n``, ``NODES FILTER 'jsonpath'``,
``AUTO SCALE UP n | OFF``, ``AUTO SCALE DOWN n | OFF``, ``AUTO SCALE OFF`` and (at creation)
``CONSISTENCY MODE 'STRONG_CONSISTENCY' | 'HIGH_AVAILABILITY'``. Options: PARTITIONS,
REPLICAS, QUORUM_SIZE, DATA_NODES_AUTO_ADJUST_SCALE_UP, DATA_NODES_AUTO_ADJUST_SCALE_DOWN
(integers), STORAGE_PROFILES (a string of comma-separated profile names), DATA_NODES_FILTER
(a JSONPath string) and CONSISTENCY_MODE. ``REPLICAS ALL`` and a distribution algorithm are
refused, naming what is accepted.
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
    "DATA_NODES_AUTO_ADJUST_SCALE_UP": ("auto_scale_up_s", False),
    "DATA_NODES_AUTO_ADJUST_SCALE_DOWN": ("auto_scale_down_s", False),
    "CONSISTENCY_MODE": ("consistency_mode", True),
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
    if with_ or not (reader.at_end() or reader.at_words("STORAGE", "PROFILES")):
        options = _options(reader, elements=not with_)
    if not with_ and reader.accept_words("STORAGE", "PROFILES"):
        if "storage_profiles" in options:
            raise ValidationError("the zone's storage profiles are given twice")
        options["storage_profiles"] = _profile_list(reader)
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
        return SetDefaultZoneCommand(name=name, if_exists=if_exists)
    options = _options(reader, elements=True)
    reader.expect_end()
    if "consistency_mode" in options:
        raise ValidationError("a zone's consistency mode is fixed when the zone is created")
    return AlterZoneCommand(name=name, if_exists=if_exists, **options)


def _options(reader: TokenReader, *, elements: bool) -> dict[str, Any]:
    """Read options, with Ignite 3.1 elements among them unless after ``WITH``."""
    parens = reader.accept(TokenType.L_PAREN) is not None
    options: dict[str, Any] = {}
    while True:
        field, value = _option(reader, elements)
        both = field == "auto_scale"  # AUTO SCALE OFF sets both timers
        for one in ("auto_scale_up_s", "auto_scale_down_s") if both else (field,):
            if one in options:
                raise ValidationError(f"zone option {_SHOWN.get(one, one.upper())} given twice")
            options[one] = value
        if not reader.accept(TokenType.COMMA):
            break
    if parens:
        reader.expect(TokenType.R_PAREN, "',' or ')' after a zone option")
    return options


def _option(reader: TokenReader, elements: bool) -> tuple[str, Any]:
    """Read one option, ``NAME = value`` or an Ignite 3.1 element such as ``QUORUM SIZE 2``."""
    if elements and reader.peek() is not None and not _is_eq(reader.peek(1)):
        element = _element(reader)
        if element is not None:
            return element
    option = reader.name("a zone option")
    if option not in _OPTIONS:
        known = ", ".join(_OPTIONS)
        raise ValidationError(
            f"unsupported zone option {option} (supported: {known}, or PARTITIONS n, REPLICAS n, "
            "QUORUM SIZE n, NODES FILTER '...')"
        )
    field, is_string = _OPTIONS[option]
    reader.expect(TokenType.EQ, f"'=' after {option}")
    if not is_string:
        return field, reader.integer(option)
    if field == "consistency_mode":
        return field, reader.string(option).upper()
    if field == "storage_profiles":
        return field, tuple(p.strip() for p in reader.string(option).split(","))
    return field, reader.string(option)


def _is_eq(token: Token | None) -> bool:
    return token is not None and token.token_type is TokenType.EQ


_SHOWN = {"auto_scale_up_s": "AUTO SCALE UP", "auto_scale_down_s": "AUTO SCALE DOWN"}


def _element(reader: TokenReader) -> tuple[str, Any] | None:
    """Read an Ignite 3.1 zone element; None if the next words are not one."""
    if reader.accept_words("PARTITIONS"):
        return "partitions", reader.integer("PARTITIONS")
    if reader.accept_words("REPLICAS"):
        if reader.at_words("ALL"):
            raise ValidationError("REPLICAS ALL is not supported; give the number of replicas")
        return "replicas", reader.integer("REPLICAS")
    if reader.accept_words("QUORUM", "SIZE"):
        return "quorum", reader.integer("QUORUM SIZE")
    if reader.accept_words("NODES", "FILTER"):
        return "filter", reader.string("NODES FILTER")
    if reader.accept_words("CONSISTENCY", "MODE"):
        return "consistency_mode", reader.string("CONSISTENCY MODE").upper()
    if reader.accept_words("AUTO", "SCALE"):
        if reader.accept_words("OFF"):
            return "auto_scale", "OFF"
        for word in ("UP", "DOWN"):
            if reader.accept_words(word):
                field = f"auto_scale_{word.lower()}_s"
                return field, "OFF" if reader.accept_words("OFF") else reader.integer(word)
        raise ValidationError(
            "expected AUTO SCALE UP n | OFF, AUTO SCALE DOWN n | OFF or AUTO SCALE OFF"
        )
    if reader.at_words("DISTRIBUTION"):
        raise ValidationError(
            "DISTRIBUTION ALGORITHM is not a setting of this catalog's zones; the settings are "
            "PARTITIONS, REPLICAS, QUORUM SIZE, NODES FILTER, AUTO SCALE, CONSISTENCY MODE "
            "and STORAGE PROFILES"
        )
    return None


def _profile_list(reader: TokenReader) -> tuple[str, ...]:
    """Read ``['p' [, ...]]``: non-empty string literals in brackets."""
    reader.expect(TokenType.L_BRACKET, "'[' to start the storage profiles")
    profiles = []
    while True:
        profile = reader.string("a storage profile").strip()
        if not profile:
            raise ValidationError("a storage profile name must not be empty")
        profiles.append(profile)
        if not reader.accept(TokenType.COMMA):
            break
    reader.expect(TokenType.R_BRACKET, "',' or ']' after a storage profile")
    return tuple(profiles)
