"""Deterministic view values whose encodings are kept as golden files (``catalog_values`` says
how golden files are made; its ``golden_files`` holds these too).

A view's uuid is drawn when it is created; here each new view's entry is given a fixed one
before the next command is prepared, and every time a command would take from the clock is
given, so the values are the same on every run.
"""

from __future__ import annotations

from catalog import Catalog, ColumnType, VersionedUpdate, prepare
from catalog import commands as c
from catalog.commands import CommandBase, NewViewSchema, ViewColumnSpec, ViewQuery, ViewVersionSpec
from catalog.entries import EntryBase, NewViewEntry
from catalog.marshalling import encode_commands, encode_entries, encode_update
from catalog.snapshots import encode_snapshot
from catalog.wire import encode_descriptor
from tests.unit.catalog.helpers import catalog_with_default_zone

T0 = 1_700_000_000_000
"""The golden views' epoch (ms): every version and request time is an offset from it."""
VIEW_UUIDS = {
    "DAILY": "5f0c6a1e-8d2b-4c7a-9e3f-1a2b3c4d5e6f",
    "RECENT": "0d9e8f7a-6b5c-4d3e-8f1a-2b3c4d5e6f70",
    "SCRATCH": "7a6b5c4d-3e2f-4a1b-9c8d-7e6f5a4b3c2d",
}
"""The uuid each golden view is created with, by its name."""

_DAILY_SPARK = "SELECT day, sum(total) AS total FROM lake.sales.orders GROUP BY day"
_DAILY_TRINO = 'SELECT "day", sum("total") AS "total" FROM lake.sales.orders GROUP BY 1'


def _daily_columns(*extra: ViewColumnSpec) -> tuple[ViewColumnSpec, ...]:
    return (
        ViewColumnSpec(name="DAY", type=ColumnType.DATE, nullable=False, doc="the day"),
        ViewColumnSpec(name="TOTAL", type=ColumnType.DECIMAL, precision=12, scale=2),
        *extra,
    )


def golden_view_commands() -> list[CommandBase]:
    """Return every view command with every field: a view created, replaced, changed as an
    Iceberg engine commits (a schema, a version, its history shortened), rolled back, another
    moved to another schema, a third created and dropped."""
    notes = ViewColumnSpec(name="NOTES", type=ColumnType.STRING, length=200, doc="free text")
    return [
        c.CreateSchema(name="REPORTS"),
        c.CreateView(
            schema="REPORTS",
            name="DAILY",
            columns=_daily_columns(),
            version=ViewVersionSpec(
                queries=(
                    ViewQuery(dialect="spark", sql=_DAILY_SPARK),
                    ViewQuery(dialect="trino", sql=_DAILY_TRINO),
                ),
                default_namespace=("sales",),
                default_catalog="lake",
                summary={"engine-name": "spark", "engine-version": "3.5.1"},
                timestamp_ms=T0,
            ),
            properties={"comment": "daily totals"},
            location="s3://warehouse/reports/daily",
            field_ids=(1, 2),
            at_ms=T0 + 1,
        ),
        c.CreateView(
            schema="REPORTS",
            name="DAILY",
            columns=_daily_columns(notes),
            version=ViewVersionSpec(
                queries=(
                    ViewQuery(dialect="spark", sql=f"{_DAILY_SPARK} -- with notes"),
                    ViewQuery(dialect="trino", sql=f"{_DAILY_TRINO} -- with notes"),
                ),
                timestamp_ms=T0 + 1_000,
            ),
            or_replace=True,
            at_ms=T0 + 1_001,
        ),
        c.AlterView(
            schema="REPORTS",
            name="DAILY",
            expected_uuid=VIEW_UUIDS["DAILY"],
            add_schemas=(NewViewSchema(columns=_daily_columns(), field_ids=(4, 5)),),
            add_versions=(
                ViewVersionSpec(
                    schema_id=-1,
                    queries=(
                        ViewQuery(dialect="spark", sql=_DAILY_SPARK.lower()),
                        ViewQuery(dialect="trino", sql=_DAILY_TRINO.lower()),
                    ),
                    default_namespace=("sales",),
                    summary={"engine-name": "trino"},
                    timestamp_ms=T0 + 2_000,
                ),
            ),
            current_version_id=-1,
            set_properties={"version.history.num-entries": "2"},
            remove_properties=("comment",),
            location="s3://warehouse/reports/daily-3",
            at_ms=T0 + 2_001,
        ),
        c.AlterView(schema="REPORTS", name="DAILY", current_version_id=2, at_ms=T0 + 3_000),
        c.CreateView(
            name="RECENT",
            columns=(ViewColumnSpec(name="ID", type=ColumnType.INT64),),
            version=ViewVersionSpec(
                queries=(ViewQuery(dialect="trino", sql="SELECT id FROM t"),),
                timestamp_ms=T0 + 4_000,
            ),
            if_not_exists=True,
            at_ms=T0 + 4_001,
        ),
        c.RenameView(name="RECENT", new_schema="REPORTS", new_name="LATEST", if_exists=True),
        c.CreateView(
            name="SCRATCH",
            columns=(ViewColumnSpec(name="X", type=ColumnType.UUID),),
            version=ViewVersionSpec(
                queries=(ViewQuery(dialect="spark", sql="SELECT uuid() AS x"),),
                timestamp_ms=T0 + 5_000,
            ),
            at_ms=T0 + 5_001,
        ),
        c.DropView(name="SCRATCH", if_exists=True),
    ]


def _with_fixed_uuids(entries: tuple[EntryBase, ...]) -> list[EntryBase]:
    return [
        entry.model_copy(update={"view": entry.view.model_copy(update={"uuid": VIEW_UUIDS[name]})})
        if isinstance(entry, NewViewEntry) and (name := entry.view.name) in VIEW_UUIDS
        else entry
        for entry in entries
    ]


def golden_view_update() -> tuple[Catalog, VersionedUpdate]:
    """Return version 1 (``snapshot_initial_v2.bin``'s) and update 2: the view commands' entries,
    stamping what they change."""
    v1 = catalog_with_default_zone(activation_ts=T0 << 16)
    current, entries = v1, []
    for command in golden_view_commands():
        made = _with_fixed_uuids(prepare(current, [command]).entries)
        for entry in made:
            current = entry.apply(current)
        entries.extend(made)
    update = VersionedUpdate(
        version=2,
        proposal_ts=((T0 + 6_000) << 16) + 1,
        delay_ms=500,
        entries=entries,
        stamps=True,
    )
    return v1, update


def golden_view_catalog() -> Catalog:
    """Return version 2: views REPORTS.DAILY (with history) and REPORTS.LATEST (moved)."""
    v1, update = golden_view_update()
    return update.apply_to(v1)


def golden_view_files() -> dict[str, bytes]:
    """Return the name and current encoding of every golden file of views."""
    _, update = golden_view_update()
    catalog = golden_view_catalog()
    return {
        "snapshot_views_v2.bin": encode_snapshot(catalog),
        "update_views_v3.bin": encode_update(update),
        "entries_views_v1.bin": encode_entries(update.entries),
        "commands_views_v1.bin": encode_commands(golden_view_commands()),
        "descriptor_view_v1.bin": encode_descriptor(catalog.view("REPORTS", "DAILY")),
    }
