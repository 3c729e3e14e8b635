"""``CREATE TABLE``: sqlglot's syntax tree plus the Ignite clauses read from its tokens.

Read from tokens here: after the column list, ``COLOCATE [BY] (cols)``, ``ZONE z`` and
``WITH (PRIMARY_ZONE = 'z')`` (also ``ZONE = ...``, with or without parentheses); in it,
``PRIMARY KEY USING HASH | SORTED (cols)`` and a sorted key's ``ASC | DESC [NULLS FIRST | LAST]``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from sqlglot import exp
from sqlglot.tokenizer_core import Token, TokenType

from api.sql.columns import ColumnSpec, collation_of, column_spec
from api.sql.nodes import check_args, name_of, qualified_name, sql_of
from api.sql.tokens import (
    TABLE_DIALECT,
    TokenReader,
    describe,
    first_of,
    is_word,
    matching_paren,
    parse_statement,
)
from catalog.commands import CommandBase, CreateTableCommand
from catalog.descriptors import Collation, IndexKind
from catalog.errors import ValidationError


@dataclass(frozen=True, slots=True)
class TableOptions:
    """The Ignite clauses of ``CREATE TABLE`` read from tokens (None: not given)."""

    primary_key_kind: IndexKind | None = None
    primary_key_collations: tuple[Collation, ...] | None = None
    colocation_columns: tuple[str, ...] | None = None
    zone: str | None = None
    properties: dict[str, Any] = field(default_factory=dict)
    """Storage profile and Ignite's table properties, as ``CreateTableCommand`` fields."""


def create_table_from_text(text: str, toks: Sequence[Token]) -> CommandBase:
    """``CREATE TABLE``: sqlglot reads up to the column list's ``)``, we read the rest.

    Raises:
        ValidationError: a clause or element we do not support.
    """
    close = matching_paren(toks, first_of(toks, TokenType.L_PAREN))
    tail: Sequence[Token]
    if close is None:  # no column list: let sqlglot say what it is (AS SELECT, a typo, ...)
        head_toks, tail, head_end = toks, (), len(text)
    else:
        head_toks, tail, head_end = toks[: close + 1], toks[close + 1 :], toks[close].end + 1
    head, key = _strip_pk_clause(text[:head_end], head_toks)
    options = _table_options(TokenReader(tail), key)
    node = parse_statement(head, TABLE_DIALECT)
    if not isinstance(node, exp.Create) or str(node.args.get("kind")).upper() != "TABLE":
        raise ValidationError("cannot read this CREATE TABLE statement")
    return create_table(node, options)


def create_table(node: exp.Create, options: TableOptions) -> CommandBase:
    """Turn sqlglot's ``CREATE TABLE`` plus the Ignite ``options`` into a command.

    Raises:
        ValidationError: no or several primary keys, or an unsupported element or clause.
    """
    if node.args.get("expression") is not None:
        raise ValidationError("CREATE TABLE ... AS SELECT is not supported")
    check_args(node, {"this", "kind", "exists"}, "CREATE TABLE")
    body = node.this
    if not isinstance(body, exp.Schema):
        raise ValidationError("CREATE TABLE needs a column list")
    check_args(body, {"this", "expressions"}, "CREATE TABLE")
    schema, name = qualified_name(body.this, "table")
    specs: list[ColumnSpec] = []
    keys: list[tuple[str | None, tuple[str, ...]]] = []
    for element in body.expressions:
        if isinstance(element, exp.ColumnDef):
            spec = column_spec(element)
            if spec.primary_key:
                keys.append((None, (spec.name,)))
            specs.append(spec)
        else:
            keys.append(_primary_key(element))
    if not keys:
        raise ValidationError(f"table {name} needs a PRIMARY KEY")
    if len(keys) > 1:
        raise ValidationError(f"table {name} has more than one PRIMARY KEY")
    key_name, primary_key = keys[0]
    extra: dict[str, Any] = {}
    if options.primary_key_kind is not None:
        extra["primary_key_kind"] = options.primary_key_kind
    if options.primary_key_collations is not None:
        extra["primary_key_collations"] = options.primary_key_collations
    if key_name is not None:
        extra["primary_key_name"] = key_name
    return CreateTableCommand(
        schema=schema,
        name=name,
        columns=tuple(s.to_column(key=s.name in primary_key) for s in specs),
        primary_key=primary_key,
        colocation_columns=options.colocation_columns,
        zone=options.zone,
        if_not_exists=bool(node.args.get("exists")),
        **extra,
        **options.properties,
    )


def _primary_key(element: exp.Expr) -> tuple[str | None, tuple[str, ...]]:
    """Return a table-level key's constraint name (it names the key's index) and columns."""
    key_name = None
    if isinstance(element, exp.Constraint) and len(element.expressions) == 1:
        key_name = name_of(element.this, "the primary-key constraint")
        element = element.expressions[0]
    if not isinstance(element, exp.PrimaryKey):
        raise ValidationError(f"unsupported table element {sql_of(element)}")
    include = element.args.get("include")
    if isinstance(include, exp.Expr):
        check_args(include, (), "PRIMARY KEY")
    check_args(element, {"expressions", "include"}, "PRIMARY KEY")
    return key_name, tuple(name_of(e, "a primary-key column") for e in element.expressions)


@dataclass(frozen=True, slots=True)
class _KeyClause:
    """What a table's key clause says beyond its column names (sqlglot reads those).

    The clause: ``PRIMARY KEY [USING HASH | SORTED] (a [ASC | DESC] [NULLS FIRST | LAST], ...)``.
    """

    kind: IndexKind | None = None
    collations: tuple[Collation, ...] | None = None


def _blank(head: str, first: Token, last: Token) -> str:
    """Return ``head`` with the text of ``first``..``last`` replaced by spaces (offsets stay)."""
    return head[: first.start] + " " * (last.end + 1 - first.start) + head[last.end + 1 :]


def _strip_pk_clause(head: str, toks: Sequence[Token]) -> tuple[str, _KeyClause]:
    """Blank out the key's ``USING`` and its columns' ordering, and return what they said.

    Ordering is Ignite's sorted-key syntax; as for indexes, NULLs sort low unless told
    otherwise (``ASC`` = NULLS FIRST, ``DESC`` = NULLS LAST).

    Raises:
        ValidationError: an unknown key type, or ordering on a key that is not sorted.
    """
    clause = _KeyClause()
    for i, token in enumerate(toks[:-1]):
        if token.token_type is not TokenType.PRIMARY_KEY:
            continue
        at = i + 1
        kind: IndexKind | None = None
        if is_word(toks[at], "USING") and at + 1 < len(toks):
            word = toks[at + 1].text.upper()
            if word not in ("HASH", "SORTED"):
                raise ValidationError(
                    f"PRIMARY KEY USING {toks[at + 1].text}: expected HASH or SORTED"
                )
            kind = IndexKind(word.lower())
            head = _blank(head, toks[at], toks[at + 1])
            at += 2
        close = matching_paren(toks, at) if toks[at].token_type is TokenType.L_PAREN else None
        orders: list[tuple[bool, bool | None]] = []
        ordered = False
        position = at + 1
        while close is not None and position < close:
            position += 1  # the column name
            desc, nulls_first = False, None
            if position < close and (
                is_word(toks[position], "ASC") or is_word(toks[position], "DESC")
            ):
                desc = is_word(toks[position], "DESC")
                head = _blank(head, toks[position], toks[position])
                position += 1
                ordered = True
            if position + 1 < close and is_word(toks[position], "NULLS"):
                nulls_first = is_word(toks[position + 1], "FIRST")
                if not nulls_first and not is_word(toks[position + 1], "LAST"):
                    raise ValidationError(
                        f"NULLS {toks[position + 1].text}: expected FIRST or LAST"
                    )
                head = _blank(head, toks[position], toks[position + 1])
                position += 2
                ordered = True
            orders.append((desc, nulls_first))
            position += 1  # the comma, or the closing parenthesis
        if ordered and kind is not IndexKind.SORTED:
            raise ValidationError(
                "only a sorted primary key orders its columns; write PRIMARY KEY USING SORTED (...)"
            )
        collations = None
        if ordered:
            collations = tuple(
                collation_of[(desc, not desc if nulls is None else nulls)] for desc, nulls in orders
            )
        clause = _KeyClause(kind=kind or clause.kind, collations=collations or clause.collations)
    return head, clause


def _table_options(reader: TokenReader, key: _KeyClause) -> TableOptions:
    colocate: tuple[str, ...] | None = None
    zone: str | None = None
    properties: dict[str, Any] = {}
    while not reader.at_end():
        if reader.accept_words("COLOCATE"):
            if colocate is not None:
                raise ValidationError("COLOCATE BY given twice")
            reader.accept_words("BY")
            colocate = reader.names_in_parens("colocation column")
        elif reader.accept_words("ZONE"):
            zone = _set_zone(zone, reader.name("a zone name"))
        elif reader.accept_words("STORAGE", "PROFILE"):
            if "storage_profile" in properties:
                raise ValidationError("the table's storage profile is given twice")
            properties["storage_profile"] = reader.string("STORAGE PROFILE")
        elif reader.accept_words("WITH"):
            parens = reader.accept(TokenType.L_PAREN) is not None
            while True:
                if table_property(reader, properties):
                    if not reader.accept(TokenType.COMMA):
                        break
                    continue
                option = reader.name("a table option")
                if option not in ("PRIMARY_ZONE", "ZONE"):
                    raise ValidationError(
                        f"unsupported table option {option} (supported: ZONE = z, "
                        "MIN STALE ROWS n, STALE ROWS FRACTION f)"
                    )
                reader.expect(TokenType.EQ, f"'=' after {option}")
                # A string is the zone's exact name; an identifier follows the quoting rules.
                literal = reader.accept(TokenType.STRING)
                zone = _set_zone(zone, literal.text if literal else reader.name("a zone name"))
                if not reader.accept(TokenType.COMMA):
                    break
            if parens:
                reader.expect(TokenType.R_PAREN, "')' after the table options")
        else:
            raise ValidationError(
                f"unexpected {describe(reader.peek())} after the column list; "
                "expected COLOCATE BY, ZONE, STORAGE PROFILE or WITH"
            )
    return TableOptions(
        primary_key_kind=key.kind,
        primary_key_collations=key.collations,
        colocation_columns=colocate,
        zone=zone,
        properties=properties,
    )


def _set_zone(current: str | None, zone: str) -> str:
    if current is not None:
        raise ValidationError("the table's zone is given twice")
    return zone


def table_property(reader: TokenReader, properties: dict[str, Any]) -> bool:
    """Read ``MIN STALE ROWS n`` or ``STALE ROWS FRACTION f`` into ``properties`` if next.

    Raises:
        ValidationError: a property given twice, or a value that is not a number.
    """
    value: float
    if reader.accept_words("MIN", "STALE", "ROWS"):
        name, value = "min_stale_rows_count", reader.integer("MIN STALE ROWS")
    elif reader.accept_words("STALE", "ROWS", "FRACTION"):
        name, value = "stale_rows_fraction", reader.fraction("STALE ROWS FRACTION")
    else:
        return False
    if name in properties:
        raise ValidationError(f"table property {name.upper().replace('_', ' ')} given twice")
    properties[name] = value
    return True
