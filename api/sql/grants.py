"""Roles and grants in SQL: ``CREATE/DROP ROLE``, ``GRANT``, ``REVOKE`` and ``SHOW GRANTS``.

sqlglot parses none of these into a shape we can use, so they are read from its tokens with a
small strict grammar::

    CREATE ROLE [IF NOT EXISTS] r
    DROP ROLE [IF EXISTS] r
    GRANT privilege [, ...] ON object TO grantee
    GRANT ROLE r TO grantee
    REVOKE privilege [, ...] ON object FROM grantee
    REVOKE ROLE r FROM grantee
    SHOW GRANTS [ON object | TO grantee]

    object:    CATALOG | SCHEMA s | [TABLE] [s.]t | VIEW [s.]v
    grantee:   USER u | ROLE r
    privilege: USAGE | SELECT | MODIFY | CREATE | ALTER | DROP | MANAGE GRANTS | OWNERSHIP
               (MANAGE_GRANTS is read too), or ALL [PRIVILEGES] alone: every privilege the
               kind of object may be granted (``PRIVILEGES_ON``)

``GRANT ROLE r`` grants ``USAGE`` on role ``r`` (membership). The schema of a table or view
defaults to PUBLIC. A table or schema named ``CATALOG`` is written ``TABLE catalog`` or quoted.

Names follow the rest of ``api.sql``: unquoted ones are upper-cased, quoted ones keep their case.
That holds for principals too, so a principal named ``alice`` is ``TO USER "alice"`` (``TO USER
alice`` names ``ALICE``), and a name that is not a plain identifier is quoted:
``TO USER "etl-job"``.

``SHOW GRANTS`` reads and changes nothing, so it is no command: ``show_grants`` recognises it
when it is the whole text, and a batch of DDL refuses it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from sqlglot.tokenizer_core import Token, TokenType

from api.sql.tokens import TokenReader, describe, is_word, token_name, tokenize
from catalog.commands import (
    CommandBase,
    CreateRoleCommand,
    DropRoleCommand,
    GrantCommand,
    RevokeCommand,
)
from catalog.descriptors import GranteeKind, Privilege, SecurableKind
from catalog.descriptors.grants import PRIVILEGES_ON
from catalog.descriptors.schemas import PUBLIC_SCHEMA
from catalog.errors import ValidationError

_OBJECTS = "CATALOG, SCHEMA s, [TABLE] [s.]t and VIEW [s.]v"
_Object = tuple[SecurableKind, str | None, str | None]
"""What a grant is on: its kind, schema (tables and views) and name (all but the catalog)."""


@dataclass(frozen=True, slots=True)
class ShowGrants:
    """``SHOW GRANTS``: which grants to list; nothing set lists them all.

    ``on``, ``schema`` and ``name`` name an object as ``GrantCommand`` does (the schema for a
    table or view only, the name for all but the catalog); ``to`` and ``grantee`` a principal
    or role. At most one of the two is set.
    """

    on: SecurableKind | None = None
    schema: str | None = None
    name: str | None = None
    to: GranteeKind | None = None
    grantee: str | None = None


def is_grant_statement(toks: Sequence[Token]) -> bool:
    """Return whether ``toks`` are a role, ``GRANT``, ``REVOKE`` or ``SHOW GRANTS`` statement."""
    if not toks:
        return False
    first = toks[0].token_type
    if first in (TokenType.GRANT, TokenType.REVOKE):
        return True
    if first in (TokenType.CREATE, TokenType.DROP):
        return len(toks) >= 2 and is_word(toks[1], "ROLE")
    return _show_grants_tokens(toks) is not None


def grant_commands(toks: Sequence[Token]) -> list[CommandBase]:
    """Turn one role, ``GRANT`` or ``REVOKE`` statement into its command.

    Raises:
        ValidationError: anything outside the grammar above, naming the statement; also for
            ``SHOW GRANTS``, which is a read and no part of a batch.
    """
    first = toks[0].text.upper()
    what = {"CREATE": "CREATE ROLE", "DROP": "DROP ROLE", "SHOW": "SHOW GRANTS"}.get(first, first)
    try:
        return [_command(TokenReader(toks))]
    except ValidationError as e:
        raise ValidationError(f"{what}: {e.message}", code=e.code, details=e.details) from e


def show_grants(text: str) -> ShowGrants | None:
    """Read ``text`` as one ``SHOW GRANTS`` statement (a read, which ``parse_sql`` refuses).

    Args:
        text: the whole text sent; a trailing ``;`` is allowed.

    Returns:
        What to list, or None if ``text`` is not one ``SHOW GRANTS`` statement (another
        statement, several, or text that cannot be read: ``parse_sql`` says what is wrong).

    Raises:
        ValidationError: a ``SHOW GRANTS`` statement outside the grammar above.
    """
    try:
        toks = tokenize(text)
    except ValidationError:
        return None
    while toks and toks[-1].token_type is TokenType.SEMICOLON:
        toks = toks[:-1]
    rest = _show_grants_tokens(toks)
    if rest is None or len(toks) != 2:
        return None
    try:
        return _show(TokenReader(rest))
    except ValidationError as e:
        raise ValidationError(f"SHOW GRANTS: {e.message}", code=e.code, details=e.details) from e


def _show_grants_tokens(toks: Sequence[Token]) -> list[Token] | None:
    """Return the tokens after ``SHOW GRANTS``, or None if ``toks`` do not start with it.

    sqlglot reads what follows ``SHOW`` as one string (up to the ``;``); it is read again here.
    """
    if len(toks) < 2 or toks[0].token_type is not TokenType.SHOW:
        return None
    if toks[1].token_type is not TokenType.STRING:
        return None
    try:
        rest = tokenize(toks[1].text)
    except ValidationError:
        return None
    if not rest or not is_word(rest[0], "GRANTS"):
        return None
    return rest[1:]


def _command(reader: TokenReader) -> CommandBase:
    if reader.accept_words("CREATE", "ROLE"):
        if_not_exists = reader.accept_words("IF", "NOT", "EXISTS")
        role = reader.name("a role name")
        reader.expect_end()
        return CreateRoleCommand(name=role, if_not_exists=if_not_exists)
    if reader.accept_words("DROP", "ROLE"):
        if_exists = reader.accept_words("IF", "EXISTS")
        role = reader.name("a role name")
        reader.expect_end()
        return DropRoleCommand(name=role, if_exists=if_exists)
    if reader.at_words("SHOW"):
        raise ValidationError(
            "it reads grants and changes nothing, so it is not part of a batch of DDL; "
            "send it as a statement of its own"
        )
    grant = reader.accept_words("GRANT")
    if not grant:
        reader.expect_words("REVOKE")
    return _grant(reader, grant)


def _grant(reader: TokenReader, grant: bool) -> CommandBase:
    """Read what follows ``GRANT`` (or ``REVOKE``, ``grant`` False)."""
    verb = "GRANT" if grant else "REVOKE"
    if reader.accept_words("ROLE"):
        target: _Object = (SecurableKind.ROLE, None, reader.name("a role name"))
        privileges: tuple[Privilege, ...] = (Privilege.USAGE,)
    else:
        listed = _privileges(reader, verb)
        if not reader.accept_words("ON"):
            raise ValidationError(
                f"expected ON and the object after the privileges ({_OBJECTS}), "
                f"found {describe(reader.peek())}"
            )
        target = _object(reader, verb)
        privileges = _fitting(listed, target[0])
    on, schema, name = target
    to, grantee = _grantee(reader, grant)
    if reader.at_words("WITH"):
        raise ValidationError(
            "WITH ... OPTION is not supported: whoever holds MANAGE GRANTS on an object may "
            "grant and revoke on it"
        )
    reader.expect_end()
    command = GrantCommand if grant else RevokeCommand
    return command(privileges=privileges, on=on, schema=schema, name=name, to=to, grantee=grantee)


def _spelled(privilege: Privilege) -> str:
    """Return how SQL writes ``privilege`` (``MANAGE GRANTS``)."""
    return privilege.value.replace("_", " ")


def _listed(privileges: frozenset[Privilege] | set[Privilege]) -> str:
    return ", ".join(_spelled(p) for p in Privilege if p in privileges)


def _privileges(reader: TokenReader, verb: str) -> tuple[Privilege, ...] | None:
    """Read ``privilege [, ...]``, or ``ALL [PRIVILEGES]`` (None: every one that fits)."""
    if reader.accept_words("ALL"):
        reader.accept_words("PRIVILEGES")
        if reader.accept(TokenType.COMMA):
            raise ValidationError("ALL PRIVILEGES stands alone, not in a list of privileges")
        return None
    read: list[Privilege] = []
    while True:
        privilege = _privilege(reader, verb)
        if privilege in read:
            raise ValidationError(f"privilege {_spelled(privilege)} is listed twice")
        read.append(privilege)
        if not reader.accept(TokenType.COMMA):
            return tuple(read)


def _privilege(reader: TokenReader, verb: str) -> Privilege:
    if reader.accept_words("MANAGE", "GRANTS"):
        return Privilege.MANAGE_GRANTS
    for privilege in Privilege:
        if reader.accept_words(privilege.value):
            return privilege
    if reader.at_words("ALL"):
        raise ValidationError("ALL PRIVILEGES stands alone, not in a list of privileges")
    token = reader.peek()
    known = f"the privileges are {_listed(set(Privilege))}, or ALL PRIVILEGES"
    if token is None or reader.at_words("ON"):
        raise ValidationError(f"expected a privilege or ROLE r, found {describe(token)}; {known}")
    done = "granted" if verb == "GRANT" else "revoked"
    raise ValidationError(
        f"unknown privilege {token.text!r}: {known}; a role is {done} with {verb} ROLE r"
    )


def _fitting(listed: tuple[Privilege, ...] | None, on: SecurableKind) -> tuple[Privilege, ...]:
    """Return the privileges ``listed`` (None: all) if each may be granted on ``on``."""
    allowed = PRIVILEGES_ON[on]
    if listed is None:
        return tuple(p for p in Privilege if p in allowed)
    refused = [p for p in listed if p not in allowed]
    if refused:
        them = " and ".join(_spelled(p) for p in refused)
        raise ValidationError(
            f"{them} {'does' if len(refused) == 1 else 'do'} not apply to a {on}; "
            f"a {on}'s privileges are {_listed(allowed)}"
        )
    return listed


def _object(reader: TokenReader, verb: str) -> _Object:
    """Read an object: ``CATALOG``, ``SCHEMA s``, ``[TABLE] [s.]t`` or ``VIEW [s.]v``."""
    after = reader.peek(1)
    if reader.at_words("CATALOG") and (after is None or after.token_type is not TokenType.DOT):
        reader.accept_words("CATALOG")
        return SecurableKind.CATALOG, None, None
    if reader.accept_words("SCHEMA"):
        schema = reader.name("a schema name")
        if reader.accept(TokenType.DOT):
            raise ValidationError(f"a schema name takes no qualifier (found {schema}.)")
        return SecurableKind.SCHEMA, None, schema
    if reader.accept_words("VIEW"):
        schema, name = _qualified(reader, "view")
        return SecurableKind.VIEW, schema, name
    if not reader.accept_words("TABLE"):
        _refuse_other_kind(reader, verb)
    schema, name = _qualified(reader, "table")
    return SecurableKind.TABLE, schema, name


def _refuse_other_kind(reader: TokenReader, verb: str) -> None:
    """Refuse ``ON ROLE r``, ``ON DATABASE d`` and such, which would read as a table name."""
    kind, after = reader.peek(), reader.peek(1)
    if kind is None or kind.token_type is TokenType.IDENTIFIER or after is None:
        return
    if token_name(after) is None or any(is_word(after, w) for w in ("TO", "FROM", "WITH")):
        return
    word = kind.text.upper()
    if word in ("TO", "FROM"):
        raise ValidationError(f"expected the object after ON ({_OBJECTS}), found {kind.text!r}")
    if word == "ROLE" and verb != "SHOW":
        how = (
            "granted with GRANT ROLE r TO" if verb == "GRANT" else "revoked with REVOKE ROLE r FROM"
        )
        raise ValidationError(f"privileges are not held on a role; a role itself is {how} ...")
    raise ValidationError(f"ON {word} ... is not supported; the objects are {_OBJECTS}")


def _qualified(reader: TokenReader, what: str) -> tuple[str, str]:
    """Read ``[s.]name``; the schema defaults to PUBLIC."""
    first = reader.name(f"a {what} name")
    if not reader.accept(TokenType.DOT):
        return PUBLIC_SCHEMA, first
    name = reader.name(f"a {what} name after {first}.")
    if reader.accept(TokenType.DOT):
        raise ValidationError(f"only [schema.]name is supported for a {what}")
    return first, name


def _grantee(reader: TokenReader, grant: bool) -> tuple[GranteeKind, str]:
    """Read ``TO USER u | TO ROLE r`` (``FROM`` for a revoke)."""
    word, other = ("TO", "FROM") if grant else ("FROM", "TO")
    if reader.at_words(other):
        act = "grant" if grant else "revoke"
        raise ValidationError(
            f"a {act} names its grantee with {word}, not {other}: {word} USER u or {word} ROLE r"
        )
    if not reader.accept_words(word):
        raise ValidationError(
            f"expected {word} USER u or {word} ROLE r, found {describe(reader.peek())}"
        )
    return _principal(reader, word)


def _principal(reader: TokenReader, after: str) -> tuple[GranteeKind, str]:
    """Read ``USER u | ROLE r``."""
    if reader.accept_words("USER"):
        kind = GranteeKind.USER
    elif reader.accept_words("ROLE"):
        kind = GranteeKind.ROLE
    else:
        raise ValidationError(
            f'expected USER or ROLE after {after} (as in {after} USER "alice"), '
            f"found {describe(reader.peek())}"
        )
    name = reader.name(f"a {kind} name")
    token = reader.peek()
    if token is not None and token.token_type in (TokenType.DASH, TokenType.DOT):
        raise ValidationError(
            f'a {kind} name holding {token.text!r} must be quoted, as in USER "etl-job"'
        )
    if token is not None and token.token_type is TokenType.COMMA:
        raise ValidationError("one grantee per statement")
    return kind, name


def _show(reader: TokenReader) -> ShowGrants:
    """Read what follows ``SHOW GRANTS``."""
    if reader.at_end():
        return ShowGrants()
    if reader.accept_words("ON"):
        on, schema, name = _object(reader, "SHOW")
        reader.expect_end()
        return ShowGrants(on=on, schema=schema, name=name)
    if reader.accept_words("TO"):
        to, grantee = _principal(reader, "TO")
        reader.expect_end()
        return ShowGrants(to=to, grantee=grantee)
    raise ValidationError(
        f"expected ON object ({_OBJECTS}), TO USER u or TO ROLE r, found {describe(reader.peek())}"
    )
