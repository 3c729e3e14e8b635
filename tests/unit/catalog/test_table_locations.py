"""A table's location: what a create or ``alter_table_iceberg`` may ask for, and what it records."""

from __future__ import annotations

import pytest

from catalog import ColumnType, prepare
from catalog import commands as c
from catalog.catalog import Catalog
from catalog.data.expiry import Compaction, decode_compactions, encode_compactions
from catalog.data.warehouse import local_folder
from catalog.entries import SetTableLocationEntry
from catalog.errors import ValidationError
from tests.unit.catalog.helpers import catalog_with_default_zone

WAREHOUSE = "/w"


def _create(name: str, location: str | None = None, **more: object) -> c.CreateTable:
    return c.CreateTable(
        name=name,
        columns=[c.Column(name="ID", type=ColumnType.INT64, nullable=False)],
        primary_key=["ID"],
        location=location,
        **more,
    )


def _with(*commands: c.CommandBase, cat: Catalog | None = None) -> Catalog:
    base = cat if cat is not None else catalog_with_default_zone()
    return prepare(base, list(commands), warehouse=WAREHOUSE).catalog


def test_a_table_records_the_location_it_asked_for_as_it_asked() -> None:
    cat = _with(_create("A", "/w/lake/a/"), _create("B", "file:///w/lake/b"), _create("C"))
    assert cat.table("PUBLIC", "A").location == "/w/lake/a"
    assert cat.table("PUBLIC", "B").location == "file:///w/lake/b"
    assert cat.table("PUBLIC", "C").location == f"/w/table_{cat.table('PUBLIC', 'C').id}"


@pytest.mark.parametrize(
    ("location", "rule"),
    [
        ("/elsewhere/t", "is not inside the warehouse"),
        ("/w", "is not inside the warehouse"),
        ("/w2/t", "is not inside the warehouse"),
        ("s3://bucket/t", "is not inside the warehouse"),  # S3, but the warehouse is local
        ("hdfs://nn/w/t", "in a local folder or on S3"),
        ("file://host/w/t", "names no host"),
        ("w/t", "an absolute path"),
        ("/w/a/../t", "without . or .."),
        ("/w/metadata", "metadata folder"),
        ("/w/metadata/table_1", "metadata folder"),
        ("/w/table_99", "the table that gets id 99"),
        ("/w/table_99/x", "the table that gets id 99"),
        ("/w/lake/taken", "overlaps the location"),
        ("/w/lake/taken/in", "overlaps the location"),
        ("/w/lake", "overlaps the location"),
        ("file:///w/lake/taken", "overlaps the location"),
    ],
)
def test_a_location_the_catalog_cannot_own_is_refused(location: str, rule: str) -> None:
    cat = _with(_create("TAKEN", "/w/lake/taken"))
    with pytest.raises(ValidationError, match=rule):
        _with(_create("NEW", location), cat=cat)


def test_a_table_may_ask_for_its_own_folder_or_a_dropped_tables() -> None:
    cat = _with(_create("OLD"))
    old = cat.table("PUBLIC", "OLD")
    own = f"/w/table_{cat.object_id_gen}"
    assert _with(_create("NEW", own), cat=cat).table("PUBLIC", "NEW").location == own
    with pytest.raises(ValidationError, match="overlaps the location"):
        _with(_create("NEW", old.location), cat=cat)
    dropped = _with(c.DropTable(name="OLD"), cat=cat)
    adopted = _with(_create("NEW", old.location), cat=dropped)
    assert adopted.table("PUBLIC", "NEW").location == old.location


def test_a_cluster_without_a_warehouse_honours_no_location() -> None:
    with pytest.raises(ValidationError, match="has no warehouse"):
        prepare(catalog_with_default_zone(), [_create("A", "/w/a")])


def test_alter_table_iceberg_moves_a_table_by_the_same_rules() -> None:
    cat = _with(_create("A"), _create("B", "/w/lake/b"))
    moved = prepare(cat, [c.AlterTableIceberg(table="A", location="/w/lake/a")], warehouse="/w")
    assert [type(e) for e in moved.entries] == [SetTableLocationEntry]
    assert moved.catalog.table("PUBLIC", "A").location == "/w/lake/a"
    again = prepare(
        moved.catalog,
        [c.AlterTableIceberg(table="A", location="file:///w/lake/a/")],
        warehouse="/w",
    )
    assert again.entries == ()
    with pytest.raises(ValidationError, match="overlaps the location"):
        _with(c.AlterTableIceberg(table="A", location="/w/lake/b/x"), cat=cat)


def test_a_registered_table_keeps_its_field_ids_and_schema_id() -> None:
    pair = [c.Column(name=n, type=ColumnType.INT64, nullable=n != "A") for n in ("A", "B")]
    cat = _with(
        c.CreateTable(
            name="R",
            columns=pair,
            primary_key=["A"],
            column_ids=[4, 9],
            schema_version=3,
            last_column_id=11,
        )
    )
    table = cat.table("PUBLIC", "R")
    assert [col.id for col in table.columns] == [4, 9]
    assert (table.schema_version, table.next_column_id) == (3, 12)
    with pytest.raises(ValidationError, match="gives 2 ids for 1 columns"):
        _create("S", column_ids=[1, 2])
    with pytest.raises(ValidationError, match="duplicate column id"):
        c.CreateTable(
            name="S",
            columns=pair,
            primary_key=[],
            keyless=True,
            column_ids=[1, 1],
        )


def test_local_folder_reads_a_path_or_a_file_uri() -> None:
    assert local_folder("/w/a/") == "/w/a"
    assert local_folder("file:/w/a") == "/w/a"
    assert local_folder("file:///w//a") == "/w/a"
    with pytest.raises(ValidationError, match="a local folder is needed here, not S3"):
        local_folder("s3://bucket/a")


def test_an_expiry_record_keeps_the_locations_of_dropped_tables() -> None:
    located = Compaction(1, 2, (7, 9), ((9, "/w/lake/x"),))
    plain = Compaction(3, 4, (5,))
    assert decode_compactions(encode_compactions([located, plain])) == [located, plain]
