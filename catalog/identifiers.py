"""The identifier rule: how a name a person types becomes a catalog name.

An unquoted name folds to upper case (``orders`` is ``ORDERS``); a name in double quotes stays
exactly as written (``"orders"`` is ``orders``, and ``""`` inside the quotes is one ``"``), as
in Ignite's SQL. Everywhere a person types a name — SQL, REST path segments and query
parameters, CLI arguments, the client's lookups, the Spark ``table`` option — it is read
through this module. JSON command bodies and the in-process Python API carry exact names.
"""

from __future__ import annotations

from catalog.errors import ValidationError

DEFAULT_SCHEMA = "PUBLIC"
"""The schema of a table name typed without one."""


def fold(text: str, quoted: bool) -> str:
    """Return the name ``text`` stands for: itself when it was quoted, else upper-cased."""
    return text if quoted else text.upper()


def parse_name(typed: str) -> str:
    """Return the exact catalog name for a name as typed (see the module doc).

    Raises:
        ValidationError: a quote that does not enclose the whole name, or an empty one.
    """
    if len(typed) >= 2 and typed[0] == '"' and typed[-1] == '"':
        inner = typed[1:-1]
        if not inner or '"' in inner.replace('""', ""):
            raise ValidationError(_bad_quotes(typed))
        return inner.replace('""', '"')
    if '"' in typed:
        raise ValidationError(_bad_quotes(typed))
    return fold(typed, quoted=False)


def parse_qualified(typed: str, what: str = "table") -> tuple[str, str]:
    """Return ``(schema, name)`` of ``[schema.]name`` as typed; the schema defaults to PUBLIC.

    A dot inside double quotes belongs to the name (``"my.schema".T``).

    Raises:
        ValidationError: not one or two names separated by a dot.
    """
    parts: list[str] = []
    start, quoted = 0, False
    for position, ch in enumerate(typed):
        if ch == '"':
            quoted = not quoted
        elif ch == "." and not quoted:
            parts.append(typed[start:position])
            start = position + 1
    parts.append(typed[start:])
    if len(parts) > 2 or not all(parts):
        raise ValidationError(
            f"{what} name {typed!r} is not [schema.]name (write a name that holds a dot in "
            'double quotes: "a.b")'
        )
    names = [parse_name(part) for part in parts]
    return (DEFAULT_SCHEMA, names[0]) if len(names) == 1 else (names[0], names[1])


def quote_name(exact: str) -> str:
    """Return how to type the exact name ``exact`` so that ``parse_name`` gives it back.

    Plain upper-case names stay as they are (``ORDERS``); any other is double-quoted.
    """
    if exact and exact == exact.upper() and '"' not in exact and "." not in exact:
        return exact
    return '"' + exact.replace('"', '""') + '"'


def _bad_quotes(typed: str) -> str:
    return (
        f"name {typed!r}: double quotes must enclose the whole name (write a quote inside a "
        'quoted name as "")'
    )
