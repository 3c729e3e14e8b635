"""Views kept and told: snapshots, ``from_parts``, diffs, words, stamps, events and the wire."""

from __future__ import annotations

from typing import Any

import msgpack
import pytest

from catalog import Catalog, ColumnType, VersionedUpdate
from catalog import commands as c
from catalog.causality import stamp
from catalog.change_words import describe
from catalog.commands import CommandBase, NewViewSchema, ViewColumnSpec
from catalog.descriptors import ViewDescriptor
from catalog.diff import Change, ChangeKind, FieldChange, ViewColumnChange, diff
from catalog.entries import DropViewEntry, NewViewEntry, RenameViewEntry, ReplaceViewEntry
from catalog.event_feed import CatalogEventParameters
from catalog.marshalling import decode_commands, decode_entries, encode_commands, encode_entries
from catalog.snapshots import decode_snapshot, encode_snapshot
from catalog.wire import decode_descriptor, encode_descriptor
from tests.golden.catalog_values import GOLDEN_DIR
from tests.unit.catalog.helpers import (
    PUBLIC_ID,
    apply,
    catalog_with_default_zone,
    create_view,
    run,
    view_columns,
    view_version,
    with_table,
)
from updatelog.errors import FormatError


def _reports() -> Catalog:
    """Return a catalog with table PUBLIC.T, schema S, and views PUBLIC.V and S.W."""
    cat = apply(with_table(catalog_with_default_zone()), c.CreateSchema(name="S"))
    return apply(
        cat,
        create_view("V", "SELECT ID FROM T", "spark", "trino", properties={"k": "v"}),
        create_view("W", "SELECT 1 AS ID", schema="S"),
    )


def _body(data: bytes) -> list[Any]:
    """Return the parts of a stored snapshot's body."""
    body = msgpack.unpackb(data, raw=False)[2]
    assert isinstance(body, list)
    return body


# -- snapshots ---------------------------------------------------------------------------------


def test_a_snapshot_keeps_views_as_a_tenth_part() -> None:
    cat = _reports()
    data = encode_snapshot(cat)
    body = _body(data)
    assert len(body) == 10
    assert body[8] == []  # no system views, but a place for them before the views
    loaded = decode_snapshot(data)
    assert loaded.digest() == cat.digest()
    assert loaded.views() == cat.views()
    assert [(v.schema_id, v.name) for v in loaded.views()] == [
        (PUBLIC_ID, "V"),
        (cat.schema("S").id, "W"),
    ]
    assert loaded.view("S", "W") == cat.view("S", "W")
    assert loaded.schema_views(PUBLIC_ID) == [cat.view("PUBLIC", "V")]
    assert encode_snapshot(loaded) == data


@pytest.mark.parametrize(
    ("name", "parts"),
    [("snapshot_v2.bin", 8), ("snapshot_iceberg_v2.bin", 8), ("snapshot_system_views_v2.bin", 9)],
)
def test_a_catalog_without_views_encodes_as_before_views_existed(name: str, parts: int) -> None:
    data = (GOLDEN_DIR / name).read_bytes()
    loaded = decode_snapshot(data)
    assert loaded.views() == []
    assert encode_snapshot(loaded) == data
    assert len(_body(data)) == parts


def test_a_dropped_last_view_leaves_no_trace_in_the_snapshot() -> None:
    cat = with_table(catalog_with_default_zone())
    gone = apply(cat, create_view("V"), c.DropView(name="V"))
    assert len(_body(encode_snapshot(gone))) == 8
    # only the object id counter moved
    assert gone.with_object_id_gen(cat.object_id_gen).digest() == cat.digest()


def test_a_snapshot_with_a_view_of_an_unknown_schema_is_refused() -> None:
    cat = _reports()
    body = _body(encode_snapshot(cat))
    body[9][0][1] = 999  # the view's schema id (fields in declaration order)
    broken = msgpack.packb([2, msgpack.unpackb(encode_snapshot(cat))[1], body], use_bin_type=True)
    with pytest.raises(FormatError, match="refers to a missing schema"):
        decode_snapshot(broken)


def _parts(cat: Catalog, views: list[ViewDescriptor]) -> dict[str, Any]:
    return {
        "version": cat.version,
        "activation_ts": cat.activation_ts,
        "object_id_gen": cat.object_id_gen,
        "default_zone_id": cat.default_zone_id,
        "schemas": cat.schemas(),
        "zones": cat.zones(),
        "tables": cat.tables(),
        "indexes": cat.indexes(),
        "views": views,
    }


def test_from_parts_with_views() -> None:
    cat = _reports()
    built = Catalog.from_parts(**_parts(cat, cat.views()))
    assert built.digest() == cat.digest()
    assert built.view("PUBLIC", "V") == cat.view("PUBLIC", "V")
    assert built.find_view_by_id(cat.view("S", "W").id) == cat.view("S", "W")
    assert built.view_id(PUBLIC_ID, "V") == cat.view("PUBLIC", "V").id


def test_from_parts_refuses_inconsistent_views() -> None:
    cat = _reports()
    v, w = cat.views()
    same_name = w.model_copy(update={"schema_id": v.schema_id, "name": v.name})
    with pytest.raises(ValueError, match="duplicate view ids or names"):
        Catalog.from_parts(**_parts(cat, [v, same_name]))
    with pytest.raises(ValueError, match="duplicate view ids or names"):
        Catalog.from_parts(**_parts(cat, [v, w.model_copy(update={"id": v.id})]))
    with pytest.raises(ValueError, match="refers to a missing schema"):
        Catalog.from_parts(**_parts(cat, [v.model_copy(update={"schema_id": 999})]))


def test_a_view_descriptor_round_trips_alone() -> None:
    view = _reports().view("PUBLIC", "V")
    assert decode_descriptor(encode_descriptor(view)) == view


# -- diff ----------------------------------------------------------------------------------------


def _only(changes: list[Change]) -> Change:
    assert len(changes) == 1, changes
    return changes[0]


def test_added_and_dropped_views() -> None:
    cat = with_table(catalog_with_default_zone())
    after = apply(cat, create_view("V"))
    view = after.view("PUBLIC", "V")
    assert diff(cat, after) == [
        Change(view.id, "V", ChangeKind.ADDED, after=view, object_type="view")
    ]
    gone = apply(after, c.DropView(name="V"))
    assert diff(after, gone) == [
        Change(view.id, "V", ChangeKind.DROPPED, before=view, object_type="view")
    ]


def test_a_replaced_view_diffs_its_queries_and_columns_by_name() -> None:
    cat = _reports()
    after = apply(
        cat,
        create_view(
            "V",
            "SELECT A, ID FROM T",
            "spark",
            "trino",
            columns=("A", "ID"),
            or_replace=True,
            ts=2_000,
        ),
    )
    before_view, after_view = cat.view("PUBLIC", "V"), after.view("PUBLIC", "V")
    change = _only(diff(cat, after))
    assert (change.object_type, change.name, change.change) == ("view", "V", ChangeKind.ALTERED)
    assert change.fields == (
        FieldChange("current_version_id", 1, 2),
        FieldChange(
            "queries",
            {"spark": "SELECT ID FROM T", "trino": "SELECT ID FROM T"},
            {"spark": "SELECT A, ID FROM T", "trino": "SELECT A, ID FROM T"},
        ),
    )
    # ID moved from field 1 to field 2: matched by name, and its field id is no property of it
    assert change.columns == (
        ViewColumnChange(1, "A", ChangeKind.ADDED, after=after_view.columns[0]),
    )
    assert (before_view.columns[0].id, after_view.columns[1].id) == (1, 2)


def test_a_view_column_of_another_type_is_altered() -> None:
    cat = _reports()
    schema = NewViewSchema(columns=(ViewColumnSpec(name="ID", type=ColumnType.STRING),))
    version = view_version("SELECT 'a' AS ID", "spark", "trino")
    altered = c.AlterView(
        name="V", add_schemas=(schema,), add_versions=(version,), current_version_id=-1, at_ms=1
    )
    change = _only(diff(cat, apply(cat, altered)))
    assert change.columns == (
        ViewColumnChange(
            1,
            "ID",
            ChangeKind.ALTERED,
            fields=(FieldChange("type", "INT64", "STRING"), FieldChange("length", None, 65536)),
        ),
    )


def test_a_renamed_view_and_its_properties_are_fields() -> None:
    cat = _reports()
    after = apply(
        cat,
        c.RenameView(name="V", new_schema="S", new_name="V2"),
        c.AlterView(schema="S", name="V2", set_properties={"k": "w"}, location="s3://v", at_ms=1),
    )
    change = _only(diff(cat, after))
    assert change.fields == (
        FieldChange("schema_id", PUBLIC_ID, cat.schema("S").id),
        FieldChange("name", "V", "V2"),
        FieldChange("location", None, "s3://v"),
        FieldChange("properties", [{"name": "k", "value": "v"}], [{"name": "k", "value": "w"}]),
    )
    assert change.columns == ()


def test_a_view_changed_only_in_its_history_is_no_change() -> None:
    cat = _reports()
    extra = c.AlterView(name="V", add_versions=(view_version("SELECT 2 AS ID", schema_id=0),))
    after = apply(cat, extra)
    assert len(after.view("PUBLIC", "V").versions) == 2
    assert diff(cat, after) == []


# -- words ------------------------------------------------------------------------------------


def _words(before: Catalog, *commands: CommandBase) -> list[str]:
    prepared = run(before, *commands)
    return describe(prepared.entries, before, prepared.catalog)


def test_view_changes_in_words() -> None:
    cat = _reports()
    assert _words(cat, create_view("X", columns=("ID", "A"))) == [
        "created view PUBLIC.X, 2 columns"
    ]
    assert _words(cat, create_view("V", "SELECT 2 AS ID", "spark", "trino", or_replace=True)) == [
        "replaced view PUBLIC.V"
    ]
    assert _words(cat, c.AlterView(name="V", set_properties={"a": "b"}, at_ms=1)) == [
        "changed view PUBLIC.V"
    ]
    assert _words(cat, c.RenameView(name="V", new_name="V2")) == [
        "renamed view PUBLIC.V to PUBLIC.V2"
    ]
    assert _words(cat, c.RenameView(name="V", new_schema="S", new_name="V")) == [
        "renamed view PUBLIC.V to S.V"
    ]
    assert _words(cat, c.DropView(schema="S", name="W")) == ["dropped view S.W"]
    assert _words(cat, c.DropSchema(name="S", cascade=True)) == [
        "dropped view S.W",
        "dropped schema S",
    ]


# -- causality tokens ----------------------------------------------------------------------------


def test_a_changed_view_and_its_schema_are_stamped() -> None:
    cat = _reports()
    prepared = run(cat, c.AlterView(name="V", set_properties={"a": "b"}, at_ms=1))
    stamped = stamp(cat, prepared.catalog, prepared.entries, 777)
    assert stamped.view("PUBLIC", "V").update_ts == 777
    assert stamped.schema("PUBLIC").update_ts == 777
    assert stamped.view("S", "W").update_ts == 0
    assert stamped.schema("S").update_ts == 0


def test_a_moved_view_stamps_both_schemas() -> None:
    cat = _reports()
    prepared = run(cat, c.RenameView(name="V", new_schema="S", new_name="V"))
    stamped = stamp(cat, prepared.catalog, prepared.entries, 888)
    assert stamped.view("S", "V").update_ts == 888
    assert stamped.schema("PUBLIC").update_ts == 888
    assert stamped.schema("S").update_ts == 888
    assert stamped.view("S", "W").update_ts == 0


def test_a_dropped_view_stamps_its_schema_and_a_new_one_is_stamped() -> None:
    cat = _reports()
    prepared = run(cat, c.DropView(schema="S", name="W"), create_view("N"))
    stamped = stamp(cat, prepared.catalog, prepared.entries, 999)
    assert (stamped.schema("S").update_ts, stamped.schema("PUBLIC").update_ts) == (999, 999)
    assert stamped.view("PUBLIC", "N").update_ts == 999
    assert stamped.view("PUBLIC", "V").update_ts == 0


def test_a_stamping_update_stamps_views_with_its_activation() -> None:
    cat = _reports()
    prepared = run(cat, c.AlterView(name="V", set_properties={"a": "b"}, at_ms=1))
    update = VersionedUpdate(
        version=cat.version + 1,
        proposal_ts=5 << 16,
        delay_ms=0,
        entries=prepared.entries,
        stamps=True,
    )
    after = update.apply_to(cat)
    assert after.view("PUBLIC", "V").update_ts == after.activation_ts == 5 << 16
    unstamped = update.model_copy(update={"stamps": False}).apply_to(cat)
    assert unstamped.view("PUBLIC", "V").update_ts == 0


# -- events ---------------------------------------------------------------------------------------


def _events(cat: Catalog, *commands: CommandBase) -> list[CatalogEventParameters]:
    prepared = run(cat, *commands)
    update = VersionedUpdate(
        version=cat.version + 1, proposal_ts=1 << 16, delay_ms=0, entries=prepared.entries
    )
    events: list[CatalogEventParameters] = []
    update.apply_to(cat, events)
    return events


def test_the_subject_of_a_view_rename_names_where_it_was() -> None:
    cat = _reports()
    view_id = cat.view("PUBLIC", "V").id
    (renamed,) = _events(cat, c.RenameView(name="V", new_name="V2"))
    assert renamed.subject.model_dump(by_alias=True, exclude_none=True) == {
        "type": "view",
        "id": view_id,
        "name": "V2",
        "schema": "PUBLIC",
        "previous_name": "V",
    }
    (moved,) = _events(cat, c.RenameView(name="V", new_schema="S", new_name="V"))
    assert (moved.subject.name, moved.subject.schema_, moved.subject.previous_name) == (
        "V",
        "S",
        "PUBLIC.V",
    )


def test_the_subjects_of_created_changed_and_dropped_views() -> None:
    cat = _reports()
    events = _events(
        cat,
        create_view("N"),
        c.AlterView(name="V", set_properties={"a": "b"}, at_ms=1),
        c.DropView(schema="S", name="W"),
    )
    assert [
        (str(e.event), e.subject.name, e.subject.schema_, e.subject.previous_name) for e in events
    ] == [
        ("VIEW_CREATE", "N", "PUBLIC", None),
        ("VIEW_ALTER", "V", "PUBLIC", None),
        ("VIEW_DROP", "W", "S", None),
    ]


# -- the wire ------------------------------------------------------------------------------------


def _every_view_entry() -> list[Any]:
    cat = _reports()
    replaced = run(
        cat,
        c.AlterView(name="V", set_properties={"version.history.num-entries": "1"}, at_ms=1),
        create_view("V", "SELECT 2 AS ID", "spark", "trino", or_replace=True, ts=2_000),
    )
    entries = [
        *run(cat, create_view("N")).entries,
        *replaced.entries,
        *run(cat, c.RenameView(name="V", new_schema="S", new_name="V2")).entries,
        *run(cat, c.DropView(schema="S", name="W")).entries,
    ]
    kinds = {type(e) for e in entries}
    assert {NewViewEntry, ReplaceViewEntry, RenameViewEntry, DropViewEntry} <= kinds
    forgetting = replaced.entries[-1]
    assert isinstance(forgetting, ReplaceViewEntry) and forgetting.forgotten_versions == (1,)
    return entries


def test_every_view_entry_round_trips() -> None:
    entries = _every_view_entry()
    assert decode_entries(encode_entries(entries)) == entries


def test_every_view_command_round_trips() -> None:
    columns = (
        ViewColumnSpec(name="DAY", type=ColumnType.DATE, nullable=False, doc="the day"),
        ViewColumnSpec(name="TOTAL", type=ColumnType.DECIMAL, precision=12, scale=2),
    )
    commands: list[CommandBase] = [
        c.CreateView(
            schema="S",
            name="V",
            columns=columns,
            version=view_version(
                "SELECT 1",
                "spark",
                "trino",
                ts=5,
                default_namespace=("S",),
                default_catalog="lake",
                summary={"engine-name": "spark"},
            ),
            properties={"k": "v"},
            or_replace=True,
            location="s3://v",
            field_ids=(4, 5),
            at_ms=6,
        ),
        create_view("W", if_not_exists=True),
        c.AlterView(
            schema="S",
            name="V",
            expected_uuid="0b7e2c55-4a8e-4d6f-9c31-5f1e2d3c4b5a",
            add_schemas=(NewViewSchema(columns=view_columns("X"), field_ids=(9,)),),
            add_versions=(view_version("SELECT 2 AS X", ts=7),),
            current_version_id=-1,
            set_properties={"a": "1"},
            remove_properties=("k",),
            location="s3://w",
            at_ms=8,
        ),
        c.AlterView(name="V", current_version_id=1, at_ms=9),
        c.DropView(schema="S", name="V", if_exists=True),
        c.RenameView(schema="S", name="V", new_name="V2", new_schema="PUBLIC", if_exists=True),
        c.RenameView(name="V", new_name="V3"),
    ]
    decoded = decode_commands(encode_commands(commands))
    assert decoded == commands
    assert [type(d) for d in decoded] == [type(x) for x in commands]
