"""A version's changes in words: names as a person wrote them, one phrase per change."""

from __future__ import annotations

from catalog import ColumnType
from catalog import commands as c
from catalog.catalog import Catalog
from catalog.change_words import describe
from tests.unit.catalog.helpers import (
    catalog_with_default_zone,
    col,
    create_table,
    run,
    with_table,
)


def _words(before: Catalog | None, *commands: c.CommandBase) -> list[str]:
    base = before if before is not None else catalog_with_default_zone()
    prepared = run(base, *commands)
    return describe(prepared.entries, base, prepared.catalog)


def test_a_created_table_is_named_with_its_column_count() -> None:
    assert _words(None, create_table("ORDERS")) == ["created table PUBLIC.ORDERS, 3 columns"]


def test_column_changes_of_one_table_are_one_phrase_each_kind() -> None:
    base = with_table(name="ORDERS")
    words = _words(
        base,
        c.AddColumns(table="ORDERS", columns=[col("NOTE", ColumnType.STRING, length=10)]),
        c.AddColumns(table="ORDERS", columns=[col("SHIPPED", ColumnType.BOOLEAN)]),
        c.DropColumns(table="ORDERS", columns=["A"]),
    )
    assert words == [
        "added columns NOTE, SHIPPED to PUBLIC.ORDERS",
        "dropped column A from PUBLIC.ORDERS",
    ]


def test_dropped_and_renamed_objects_have_their_names_from_before() -> None:
    base = with_table(with_table(name="OLD"), name="GONE")
    words = _words(
        base,
        c.DropTable(name="GONE"),
        c.RenameTable(name="OLD", new_name="NEW"),
    )
    assert words == [
        "2 tables in one transaction",
        "dropped table PUBLIC.GONE",
        "renamed table PUBLIC.OLD to NEW",
    ]


def test_bookkeeping_says_nothing() -> None:
    words = _words(None, c.CreateSchema(name="SALES"))
    assert words == ["created schema SALES"]
    assert not any("object_id_gen" in w for w in words)
