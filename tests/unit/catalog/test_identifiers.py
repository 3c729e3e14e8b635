"""The identifier rule: unquoted names fold to upper case, double-quoted ones stay exact."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from catalog.errors import ErrorCode, ValidationError
from catalog.identifiers import parse_name, parse_qualified, quote_name


@pytest.mark.parametrize(
    ("typed", "exact"),
    [
        ("orders", "ORDERS"),
        ("Orders", "ORDERS"),
        ("ORDERS", "ORDERS"),
        ('"orders"', "orders"),
        ('"Default"', "Default"),
        ('"say ""hi"""', 'say "hi"'),
        ('"a.b"', "a.b"),
    ],
)
def test_a_typed_name_is_folded_unless_quoted(typed: str, exact: str) -> None:
    assert parse_name(typed) == exact


@pytest.mark.parametrize("typed", ['"', '""', 'a"b', '"a"b"', '"ab', 'ab"'])
def test_quotes_that_do_not_enclose_the_name_are_refused_in_words(typed: str) -> None:
    with pytest.raises(ValidationError, match="double quotes must enclose") as raised:
        parse_name(typed)
    assert raised.value.code is ErrorCode.VALIDATION_ERROR


def test_qualified_names_split_at_dots_outside_quotes() -> None:
    assert parse_qualified("public.orders") == ("PUBLIC", "ORDERS")
    assert parse_qualified("orders") == ("PUBLIC", "ORDERS")
    assert parse_qualified('"my.schema"."T.1"') == ("my.schema", "T.1")
    for bad in ("", "a.", ".b", "a.b.c"):
        with pytest.raises(ValidationError, match=r"is not \[schema.\]name"):
            parse_qualified(bad)


@given(st.text(min_size=1, max_size=20))
def test_a_quoted_name_reads_back_as_the_exact_name(exact: str) -> None:
    assert parse_name(quote_name(exact)) == exact
    assert parse_qualified(f"{quote_name(exact)}.{quote_name(exact)}") == (exact, exact)


def test_plain_upper_case_names_are_not_quoted() -> None:
    assert quote_name("ORDERS") == "ORDERS"
    assert quote_name("orders") == '"orders"'
    assert quote_name("A.B") == '"A.B"'
