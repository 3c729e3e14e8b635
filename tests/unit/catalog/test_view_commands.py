"""create_view, alter_view, drop_view and rename_view: Iceberg's rules for a view's history."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any

import pytest

from catalog import Catalog, CatalogEvent, ColumnType, ErrorCode
from catalog import commands as c
from catalog.commands import NewViewSchema, ViewColumnSpec, ViewVersionSpec
from catalog.descriptors import ViewDescriptor
from catalog.descriptors.views import ViewColumn, ViewLogEntry, ViewRepresentation
from catalog.entries import ReplaceViewEntry
from catalog.properties import properties_of
from tests.unit.catalog.helpers import (
    FIRST_FREE_ID,
    PUBLIC_ID,
    apply,
    bad_shape,
    catalog_with_default_zone,
    create_table,
    create_view,
    entry_types,
    events,
    refused,
    run,
    view_columns,
    view_version,
    with_table,
)

HISTORY = "version.history.num-entries"
DROP_DIALECT = "replace.drop-dialect.allowed"


def replace_view(sql: str, *dialects: str, ts: int, **kw: Any) -> c.CreateViewCommand:
    """Return CREATE OR REPLACE VIEW V AS sql."""
    return create_view("V", sql, *dialects, ts=ts, or_replace=True, **kw)


def alter(**kw: Any) -> c.AlterViewCommand:
    """Return an alter_view of PUBLIC.V asked for at 50_000."""
    return c.AlterView(name="V", at_ms=kw.pop("at_ms", 50_000), **kw)


def with_view(cat: Catalog | None = None, *commands: c.CommandBase) -> Catalog:
    """Return ``cat`` (default: with table T) with view V, then ``commands`` applied."""
    return apply(cat or with_table(catalog_with_default_zone()), create_view(), *commands)


def log_of(view: ViewDescriptor) -> list[tuple[int, int]]:
    """Return a view's log as (timestamp, version id) pairs."""
    return [(e.timestamp_ms, e.version_id) for e in view.log]


def only_replace(entries: tuple[Any, ...]) -> ReplaceViewEntry:
    """Return the one entry of a change, a ReplaceViewEntry."""
    assert len(entries) == 1
    (entry,) = entries
    assert isinstance(entry, ReplaceViewEntry)
    return entry


# -- create_view -----------------------------------------------------------------------------


def test_create_view() -> None:
    cat = catalog_with_default_zone()
    command = create_view("V", "SELECT 1 AS ID", "spark", "trino", location="s3://w/v")
    prepared = run(cat, command)
    assert prepared.applied == (True,)
    assert entry_types(prepared) == ["new_view", "object_id_gen"]
    assert events(prepared) == [CatalogEvent.VIEW_CREATE, None]
    view = prepared.catalog.view("PUBLIC", "V")
    assert (view.id, view.schema_id, view.name) == (FIRST_FREE_ID, PUBLIC_ID, "V")
    assert prepared.catalog.object_id_gen == FIRST_FREE_ID + 1
    assert str(uuid.UUID(view.uuid)) == view.uuid
    assert view.location == "s3://w/v"
    assert view.current_version_id == 1
    (version,) = view.versions
    assert (version.version_id, version.schema_id, version.timestamp_ms) == (1, 0, 1_000)
    assert version.representations == (
        ViewRepresentation(dialect="spark", sql="SELECT 1 AS ID"),
        ViewRepresentation(dialect="trino", sql="SELECT 1 AS ID"),
    )
    assert version.default_namespace == ("PUBLIC",)
    assert [s.schema_id for s in view.schemas] == [0]
    assert view.columns == (ViewColumn(id=1, name="ID", type=ColumnType.INT64),)
    assert log_of(view) == [(1_000, 1)]  # made current when it was made, not when asked for
    assert view.properties == ()
    assert cat.find_view("PUBLIC", "V") is None


def test_create_view_takes_its_id_from_the_shared_counter() -> None:
    cat = with_table(catalog_with_default_zone())  # the table and its index take 3 and 4
    new = apply(cat, create_view("V1"), create_view("V2"))
    assert [v.id for v in new.views()] == [FIRST_FREE_ID + 2, FIRST_FREE_ID + 3]
    assert new.object_id_gen == FIRST_FREE_ID + 4


def test_create_view_keeps_field_ids_types_and_comments() -> None:
    columns = (
        ViewColumnSpec(name="DAY", type=ColumnType.DATE, nullable=False, doc="the day"),
        ViewColumnSpec(name="TOTAL", type=ColumnType.DECIMAL, precision=12, scale=2),
    )
    command = c.CreateView(name="V", columns=columns, version=view_version(), field_ids=(7, 3))
    view = apply(catalog_with_default_zone(), command).view("PUBLIC", "V")
    assert view.columns == (
        ViewColumn(id=7, name="DAY", type=ColumnType.DATE, nullable=False, doc="the day"),
        ViewColumn(id=3, name="TOTAL", type=ColumnType.DECIMAL, precision=12, scale=2),
    )


def test_each_created_view_has_its_own_uuid() -> None:
    cat = apply(catalog_with_default_zone(), create_view("V1"), create_view("V2"))
    assert cat.view("PUBLIC", "V1").uuid != cat.view("PUBLIC", "V2").uuid


def test_create_or_replace_adds_a_version_and_keeps_id_and_uuid() -> None:
    cat = with_view()
    old = cat.view("PUBLIC", "V")
    command = replace_view("SELECT ID, A FROM T", ts=2_000, columns=("ID", "A"))
    prepared = run(cat, command)
    assert entry_types(prepared) == ["replace_view"]
    assert events(prepared) == [CatalogEvent.VIEW_ALTER]
    entry = only_replace(prepared.entries)
    assert [s.schema_id for s in entry.added_schemas] == [1]
    assert [(v.version_id, v.schema_id) for v in entry.added_versions] == [(2, 1)]
    assert (entry.forgotten_versions, entry.current_version_id) == ((), 2)
    assert entry.log == (ViewLogEntry(timestamp_ms=2_000, version_id=2),)
    assert not entry.properties_changed and entry.location is None
    view = prepared.catalog.view("PUBLIC", "V")
    assert (view.id, view.uuid) == (old.id, old.uuid)
    assert [v.version_id for v in view.versions] == [1, 2]
    assert [s.schema_id for s in view.schemas] == [0, 1]
    assert view.current.representations[0].sql == "SELECT ID, A FROM T"
    assert [col.name for col in view.columns] == ["ID", "A"]
    assert log_of(view) == [(1_000, 1), (2_000, 2)]
    assert prepared.catalog.object_id_gen == cat.object_id_gen


def test_an_identical_replace_is_a_no_op_whatever_its_times() -> None:
    cat = with_view()
    prepared = run(cat, replace_view("SELECT ID FROM T", ts=7_777, at_ms=8_888))
    assert prepared.applied == (False,)
    assert prepared.entries == ()
    assert prepared.catalog.digest() == cat.digest()


def test_a_replace_with_an_equal_schema_reuses_its_id() -> None:
    cat = with_view(None, replace_view("SELECT ID, A FROM T", ts=2_000, columns=("ID", "A")))
    prepared = run(cat, replace_view("SELECT A AS ID FROM T", ts=3_000))
    entry = only_replace(prepared.entries)
    assert entry.added_schemas == ()
    assert [(v.version_id, v.schema_id) for v in entry.added_versions] == [(3, 0)]
    view = prepared.catalog.view("PUBLIC", "V")
    assert [s.schema_id for s in view.schemas] == [0, 1]
    assert view.current.schema_id == 0


def test_a_replace_back_to_an_earlier_query_makes_that_version_current_at_at_ms() -> None:
    cat = with_view(None, replace_view("SELECT 2 AS ID", ts=2_000))
    prepared = run(cat, replace_view("SELECT ID FROM T", ts=3_000, at_ms=40_000))
    entry = only_replace(prepared.entries)
    assert (entry.added_versions, entry.added_schemas) == ((), ())
    assert entry.current_version_id == 1
    assert entry.log == (ViewLogEntry(timestamp_ms=40_000, version_id=1),)
    view = prepared.catalog.view("PUBLIC", "V")
    assert log_of(view) == [(1_000, 1), (2_000, 2), (40_000, 1)]


def test_a_replace_sets_and_keeps_properties() -> None:
    cat = with_view(None, replace_view("SELECT 2 AS ID", ts=2_000, properties={"a": "1"}))
    view = apply(cat, replace_view("SELECT 3 AS ID", ts=3_000, properties={"b": "2"}))
    assert view.view("PUBLIC", "V").properties == properties_of({"a": "1", "b": "2"})


def test_create_view_if_not_exists() -> None:
    cat = with_view()
    prepared = run(cat, create_view("V", "SELECT 5 AS ID", if_not_exists=True))
    assert prepared.applied == (False,)
    assert prepared.entries == ()
    created = run(cat, create_view("W", if_not_exists=True))
    assert entry_types(created) == ["new_view", "object_id_gen"]


def test_create_existing_view_is_refused() -> None:
    error = refused(with_view(), ErrorCode.VIEW_EXISTS, create_view("V", "SELECT 2 AS ID"))
    assert error.message == "view PUBLIC.V already exists"


@pytest.mark.parametrize(
    ("name", "code"), [("T", ErrorCode.TABLE_EXISTS), ("T_PK", ErrorCode.INDEX_EXISTS)]
)
def test_a_view_cannot_take_a_table_or_index_name(name: str, code: ErrorCode) -> None:
    cat = with_table(catalog_with_default_zone())
    refused(cat, code, create_view(name))
    refused(cat, code, create_view(name, or_replace=True))
    refused(cat, code, create_view(name, if_not_exists=True))


def test_a_table_cannot_take_a_view_name() -> None:
    cat = with_view()
    error = refused(cat, ErrorCode.VIEW_EXISTS, create_table("V"))
    assert error.message == "view PUBLIC.V already exists"
    refused(cat, ErrorCode.VIEW_EXISTS, create_table("V", if_not_exists=True))
    refused(cat, ErrorCode.VIEW_EXISTS, c.RenameTable(name="T", new_name="V"))
    refused(cat, ErrorCode.VIEW_EXISTS, c.CreateIndex(table="T", name="V", columns=("A",)))


def test_a_view_name_is_per_schema() -> None:
    cat = apply(with_view(), c.CreateSchema(name="S"), create_view("V", schema="S"))
    assert {(v.schema_id, v.name) for v in cat.views()} == {
        (PUBLIC_ID, "V"),
        (FIRST_FREE_ID + 3, "V"),
    }


def test_a_version_with_two_queries_of_one_dialect_is_refused() -> None:
    error = refused(
        catalog_with_default_zone(),
        ErrorCode.VALIDATION_ERROR,
        create_view("V", "SELECT 1 AS ID", "spark", "trino", "SPARK"),
    )
    assert error.message == "view PUBLIC.V: a version has more than one query for dialect spark"


def _two_dialects() -> Catalog:
    return apply(catalog_with_default_zone(), create_view("V", "SELECT 1 AS ID", "spark", "trino"))


def test_a_replace_dropping_a_dialect_is_refused() -> None:
    error = refused(
        _two_dialects(), ErrorCode.VALIDATION_ERROR, replace_view("SELECT 2 AS ID", ts=2_000)
    )
    assert error.message == (
        "view PUBLIC.V: the new version drops the trino query the current version has; give a "
        "query for every dialect of the view, or set replace.drop-dialect.allowed=true"
    )
    # dialects are compared without case; a new dialect is no drop
    kept = replace_view("SELECT 2 AS ID", "Spark", "TRINO", "hive", ts=2_000)
    assert entry_types(run(_two_dialects(), kept)) == ["replace_view"]


def test_a_replace_may_drop_a_dialect_when_the_property_allows_it() -> None:
    allowed = {DROP_DIALECT: "true"}
    drops = replace_view("SELECT 2 AS ID", ts=2_000, properties=allowed)
    view = apply(_two_dialects(), drops).view("PUBLIC", "V")  # set by the replace itself
    assert [r.dialect for r in view.current.representations] == ["spark"]
    cat = apply(_two_dialects(), alter(set_properties={DROP_DIALECT: "TRUE"}))
    view = apply(cat, replace_view("SELECT 2 AS ID", "trino", ts=2_000)).view("PUBLIC", "V")
    assert [r.dialect for r in view.current.representations] == ["trino"]
    refused(
        _two_dialects(),
        ErrorCode.VALIDATION_ERROR,
        replace_view("SELECT 2 AS ID", ts=2_000, properties={DROP_DIALECT: "false"}),
    )


def test_the_history_property_trims_versions_and_the_log() -> None:
    cat = with_view(None, alter(set_properties={HISTORY: "2"}))
    cat = apply(cat, replace_view("SELECT 2 AS ID", ts=2_000))
    prepared = run(cat, replace_view("SELECT 3 AS ID", ts=3_000))
    entry = only_replace(prepared.entries)
    assert entry.forgotten_versions == (1,)
    assert [v.version_id for v in entry.added_versions] == [3]
    view = prepared.catalog.view("PUBLIC", "V")
    assert [v.version_id for v in view.versions] == [2, 3]
    assert log_of(view) == [(2_000, 2), (3_000, 3)]
    # a forgotten version's id is never given again
    view = apply(prepared.catalog, replace_view("SELECT 4 AS ID", ts=4_000)).view("PUBLIC", "V")
    assert [v.version_id for v in view.versions] == [3, 4]


def test_the_current_version_is_kept_however_old() -> None:
    cat = with_view(None, alter(set_properties={HISTORY: "2"}))
    cat = apply(cat, replace_view("SELECT 2 AS ID", ts=2_000), alter(current_version_id=1))
    assert log_of(cat.view("PUBLIC", "V")) == [(1_000, 1), (2_000, 2), (50_000, 1)]
    new_version = view_version("SELECT 3 AS ID", ts=3_000, schema_id=0)
    prepared = run(cat, alter(add_versions=(new_version,)))
    entry = only_replace(prepared.entries)
    assert (entry.forgotten_versions, entry.current_version_id) == ((2,), 1)
    assert entry.log == ()
    view = prepared.catalog.view("PUBLIC", "V")
    assert [v.version_id for v in view.versions] == [1, 3]
    assert view.current_version_id == 1
    assert log_of(view) == [(50_000, 1)]  # the newest part whose versions are kept


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("0", "view PUBLIC.V: version.history.num-entries must be at least 1"),
        ("-3", "view PUBLIC.V: version.history.num-entries must be at least 1"),
        ("ten", "view PUBLIC.V: version.history.num-entries must be a whole number, not 'ten'"),
    ],
)
def test_a_bad_history_property_is_refused(value: str, message: str) -> None:
    error = refused(with_view(), ErrorCode.VALIDATION_ERROR, alter(set_properties={HISTORY: value}))
    assert error.message == message
    error = refused(
        catalog_with_default_zone(),
        ErrorCode.VALIDATION_ERROR,
        create_view(properties={HISTORY: value}),
    )
    assert error.message == message


@pytest.mark.parametrize(
    "build",
    [
        lambda: create_view(or_replace=True, if_not_exists=True),
        lambda: create_view(columns=()),
        lambda: create_view(columns=("A", "A")),
        lambda: create_view("V", "   "),
        lambda: create_view("V", "SELECT 1", "bad dialect"),
        lambda: create_view(field_ids=(1, 2)),
        lambda: create_view(columns=("A", "B"), field_ids=(4, 4)),
        lambda: c.CreateView(
            name="V", columns=view_columns("A"), version=view_version(schema_id=0)
        ),
        lambda: c.CreateView(
            name="V", columns=view_columns("A"), version=ViewVersionSpec(queries=())
        ),
    ],
)
def test_malformed_create_view_commands_are_refused(build: Callable[[], object]) -> None:
    bad_shape(build)


# -- alter_view ------------------------------------------------------------------------------


def test_alter_view_checks_the_uuid() -> None:
    cat = with_view()
    view = cat.view("PUBLIC", "V")
    other = str(uuid.UUID(int=1))
    error = refused(cat, ErrorCode.PRECONDITION_FAILED, alter(expected_uuid=other))
    assert error.message == f"view PUBLIC.V has uuid {view.uuid}, not {other}"
    prepared = run(cat, alter(expected_uuid=view.uuid, set_properties={"k": "v"}))
    assert entry_types(prepared) == ["replace_view"]


def test_alter_view_adds_schemas_and_versions_in_iceberg_order() -> None:
    cat = with_view()
    added = NewViewSchema(columns=view_columns("X", "Y"), field_ids=(10, 11))
    prepared = run(
        cat,
        alter(
            add_schemas=(added,),
            add_versions=(view_version("SELECT 1 X, 2 Y", ts=6_000),),
            current_version_id=-1,
        ),
    )
    entry = only_replace(prepared.entries)
    assert [s.schema_id for s in entry.added_schemas] == [1]
    assert [(v.version_id, v.schema_id, v.timestamp_ms) for v in entry.added_versions] == [
        (2, 1, 6_000)
    ]
    view = prepared.catalog.view("PUBLIC", "V")
    assert [(col.id, col.name) for col in view.columns] == [(10, "X"), (11, "Y")]
    assert log_of(view) == [(1_000, 1), (6_000, 2)]


def test_alter_view_adds_a_version_without_making_it_current() -> None:
    prepared = run(with_view(), alter(add_versions=(view_version("SELECT 2 AS ID", schema_id=0),)))
    entry = only_replace(prepared.entries)
    assert [v.version_id for v in entry.added_versions] == [2]
    assert (entry.current_version_id, entry.log) == (1, ())
    assert prepared.catalog.view("PUBLIC", "V").current_version_id == 1


def test_setting_an_older_version_current_logs_the_commands_time() -> None:
    cat = with_view(None, replace_view("SELECT 2 AS ID", ts=2_000))
    prepared = run(cat, alter(current_version_id=1, at_ms=77_000))
    entry = only_replace(prepared.entries)
    assert entry.log == (ViewLogEntry(timestamp_ms=77_000, version_id=1),)
    assert (entry.added_versions, entry.forgotten_versions) == ((), ())
    assert log_of(prepared.catalog.view("PUBLIC", "V")) == [(1_000, 1), (2_000, 2), (77_000, 1)]
    # the current version made current again is a no-op
    again = run(prepared.catalog, alter(current_version_id=1, at_ms=99_000))
    assert again.entries == ()


@pytest.mark.parametrize(
    ("command", "message"),
    [
        (
            alter(current_version_id=-1),
            "view PUBLIC.V: the version added last (-1) is made current, but no version was added",
        ),
        (alter(current_version_id=5), "view PUBLIC.V has no version 5"),
        (
            alter(add_versions=(view_version(schema_id=3),)),
            "view PUBLIC.V: a version names unknown schema 3",
        ),
        (
            alter(add_versions=(view_version(),)),
            "view PUBLIC.V: a version names the schema added last (-1), but no schema was added",
        ),
        (
            alter(set_properties={"k": "1", "j": "2"}, remove_properties=("j", "k")),
            "view PUBLIC.V: property j is both set and removed",
        ),
    ],
)
def test_alter_view_refusals(command: c.AlterViewCommand, message: str) -> None:
    error = refused(with_view(), ErrorCode.VALIDATION_ERROR, command)
    assert error.message == message


def test_alter_view_properties_and_location() -> None:
    cat = with_view(None, alter(set_properties={"a": "1", "b": "2"}))
    prepared = run(
        cat, alter(set_properties={"c": "3"}, remove_properties=("a", "zz"), location="s3://x")
    )
    entry = only_replace(prepared.entries)
    assert (entry.properties_changed, entry.properties) == (
        True,
        properties_of({"b": "2", "c": "3"}),
    )
    assert entry.location == "s3://x"
    view = prepared.catalog.view("PUBLIC", "V")
    assert (view.properties, view.location) == (properties_of({"b": "2", "c": "3"}), "s3://x")
    assert run(prepared.catalog, alter(set_properties={"c": "3"})).entries == ()


def test_alter_missing_view_is_refused() -> None:
    cat = catalog_with_default_zone()
    error = refused(cat, ErrorCode.VIEW_NOT_FOUND, alter(set_properties={"a": "1"}))
    assert error.message == "view PUBLIC.V not found"
    refused(cat, ErrorCode.SCHEMA_NOT_FOUND, c.AlterView(schema="NOPE", name="V"))


# -- rename_view ------------------------------------------------------------------------------


def test_rename_view_within_its_schema() -> None:
    cat = with_view()
    view = cat.view("PUBLIC", "V")
    prepared = run(cat, c.RenameView(name="V", new_name="W"))
    assert entry_types(prepared) == ["rename_view"]
    assert events(prepared) == [CatalogEvent.VIEW_ALTER]
    new = prepared.catalog
    assert new.find_view("PUBLIC", "V") is None
    assert new.view("PUBLIC", "W") == view.model_copy(update={"name": "W"})
    apply(new, create_table("V"))  # the old name is free


def test_rename_view_into_another_schema() -> None:
    cat = apply(with_view(), c.CreateSchema(name="S"))
    schema = cat.schema("S")
    new = apply(cat, c.RenameView(name="V", new_schema="S", new_name="V2"))
    moved = new.view("S", "V2")
    assert (moved.schema_id, moved.id) == (schema.id, cat.view("PUBLIC", "V").id)
    assert new.schema_views(PUBLIC_ID) == []
    assert new.schema_views(schema.id) == [moved]
    same_name = apply(cat, c.RenameView(name="V", new_schema="S", new_name="V"))
    assert same_name.view("S", "V").id == moved.id


def test_rename_view_onto_a_taken_name_is_refused() -> None:
    cat = with_view(None, create_view("W"))
    error = refused(cat, ErrorCode.VIEW_EXISTS, c.RenameView(name="V", new_name="W"))
    assert error.message == "view PUBLIC.W already exists"
    refused(cat, ErrorCode.TABLE_EXISTS, c.RenameView(name="V", new_name="T"))
    refused(cat, ErrorCode.INDEX_EXISTS, c.RenameView(name="V", new_name="T_PK"))
    refused(cat, ErrorCode.SCHEMA_NOT_FOUND, c.RenameView(name="V", new_schema="S", new_name="X"))


def test_rename_view_to_its_own_name_and_of_a_missing_view() -> None:
    cat = with_view()
    assert run(cat, c.RenameView(name="V", new_name="V")).entries == ()
    assert run(cat, c.RenameView(name="NO", new_name="X", if_exists=True)).entries == ()
    refused(cat, ErrorCode.VIEW_NOT_FOUND, c.RenameView(name="NO", new_name="X"))


# -- drop_view ----------------------------------------------------------------------------------


def test_drop_view() -> None:
    cat = with_view()
    prepared = run(cat, c.DropView(name="V"))
    assert entry_types(prepared) == ["drop_view"]
    assert events(prepared) == [CatalogEvent.VIEW_DROP]
    assert prepared.catalog.views() == []
    assert prepared.catalog.find_view("PUBLIC", "V") is None
    apply(prepared.catalog, create_table("V"))


def test_drop_missing_view() -> None:
    cat = with_view()
    error = refused(cat, ErrorCode.VIEW_NOT_FOUND, c.DropView(name="W"))
    assert error.message == "view PUBLIC.W not found"
    assert run(cat, c.DropView(name="W", if_exists=True)).applied == (False,)
    assert run(cat, c.DropView(schema="NOPE", name="W", if_exists=True)).entries == ()
    refused(cat, ErrorCode.SCHEMA_NOT_FOUND, c.DropView(schema="NOPE", name="W"))
    refused(cat, ErrorCode.VIEW_NOT_FOUND, c.DropView(name="T"))  # a table is no view


def test_drop_schema_holding_only_views_needs_cascade() -> None:
    cat = apply(catalog_with_default_zone(), c.CreateSchema(name="S"))
    cat = apply(cat, create_view("V1", schema="S"), create_view("V2", schema="S"))
    error = refused(cat, ErrorCode.SCHEMA_NOT_EMPTY, c.DropSchema(name="S"))
    assert error.message == "schema S is not empty; use CASCADE"
    prepared = run(cat, c.DropSchema(name="S", cascade=True))
    assert entry_types(prepared) == ["drop_view", "drop_view", "drop_schema"]
    assert prepared.catalog.views() == []


@pytest.mark.parametrize(
    "command",
    [
        create_view(schema="SYSTEM"),
        c.AlterView(schema="SYSTEM", name="V"),
        c.DropView(schema="SYSTEM", name="V"),
        c.DropView(schema="SYSTEM", name="V", if_exists=True),
        c.RenameView(schema="SYSTEM", name="V", new_name="W"),
        c.RenameView(name="V", new_schema="SYSTEM", new_name="V"),
    ],
)
def test_views_in_system_schemas_are_refused(command: c.CommandBase) -> None:
    error = refused(with_view(), ErrorCode.VALIDATION_ERROR, command)
    assert error.message == "objects in system schema SYSTEM cannot be changed"
