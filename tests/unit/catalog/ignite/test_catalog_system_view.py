"""Ports of Ignite's ``CatalogSystemViewTest``, ``CreateSystemViewCommandValidationTest`` and
``CatalogSystemViewDescriptorTest``.

Nodes register their system views in the ``SYSTEM`` schema with ``create_system_view``; the
same definition again changes nothing, another definition under the name replaces the view
with a new id. Commands are built from their JSON form (``commands.parse``) or as models and
prepared against ``Catalog.initial()`` (schemas PUBLIC 0 and SYSTEM 1, so the first view gets
id 2, as in Ignite). ``testCreateSystemViewUpdatesDescriptorToken`` needs the timestamps a node
assigns: it is ported in ``tests/integration/catalog/test_system_view_tokens.py``.
"""

from __future__ import annotations

from typing import Any

import pytest

from catalog import Catalog, CatalogEvent, ColumnType, SystemViewDescriptor, SystemViewType
from catalog import commands as c
from catalog.entries import NewSystemViewEntry
from tests.unit.catalog.helpers import SYSTEM_ID, bad_shape, entry_types, events, run

SYS_VIEW_NAME = "test_view"

COLUMNS: list[dict[str, Any]] = [
    {"name": "col1", "type": "INT32"},
    {"name": "col2", "type": "STRING", "length": 1 << 5},
]
"""``CatalogSystemViewTest``'s two columns, as JSON."""

NULL_AND_BLANK = [None, "", " ", "  "]
"""Ignite's ``nullAndBlankStrings``."""

NULL_AND_EMPTY: list[list[Any] | None] = [None, []]
"""Ignite's ``nullAndEmptyLists``."""


def _json(
    view_type: SystemViewType | str = SystemViewType.NODE,
    columns: list[dict[str, Any]] | None = None,
    name: str = SYS_VIEW_NAME,
) -> dict[str, Any]:
    """Return the JSON of CREATE SYSTEM VIEW (``CatalogSystemViewTest``'s view by default)."""
    return {
        "op": "create_system_view",
        "name": name,
        "columns": COLUMNS if columns is None else columns,
        "view_type": str(view_type),
    }


def _command(
    view_type: SystemViewType | str = SystemViewType.NODE,
    columns: list[dict[str, Any]] | None = None,
) -> c.CreateSystemViewCommand:
    """Return the parsed ``create_system_view`` command of ``_json``."""
    (command,) = c.parse(_json(view_type, columns))
    assert isinstance(command, c.CreateSystemViewCommand)
    return command


def _applied(cat: Catalog, command: c.CreateSystemViewCommand) -> Catalog:
    """Return ``cat`` after ``command``, which must change it (``tryApplyAndExpectApplied``)."""
    prepared = run(cat, command)
    assert prepared.applied == (True,)
    assert entry_types(prepared) == ["new_system_view", "object_id_gen"]
    return prepared.catalog


def _view(cat: Catalog, name: str = SYS_VIEW_NAME) -> SystemViewDescriptor:
    view = cat.find_system_view(name)
    assert view is not None, f"no system view {name}"
    return view


# -- CatalogSystemViewTest -------------------------------------------------------------------


@pytest.mark.parametrize("view_type", list(SystemViewType))
def test_create_system_view(view_type: SystemViewType) -> None:
    before = Catalog.initial()
    cat = _applied(before, _command(view_type))

    assert before.find_system_view(SYS_VIEW_NAME) is None
    assert cat.schema("SYSTEM").id == SYSTEM_ID
    view = _view(cat)
    assert isinstance(view, SystemViewDescriptor)  # Ignite: Type.SYSTEM_VIEW
    assert view.id == 2
    assert cat.object_id_gen == 3
    assert view.name == SYS_VIEW_NAME
    assert view.schema_id == SYSTEM_ID
    assert view.view_type is view_type
    assert cat.system_views() == [view]

    assert len(view.columns) == 2, view.columns
    col1, col2 = view.columns
    assert (col1.name, col1.type) == ("col1", ColumnType.INT32)
    assert (col2.name, col2.type, col2.length) == ("col2", ColumnType.STRING, 32)


MODIFICATIONS: dict[str, tuple[SystemViewType, list[dict[str, Any]]]] = {
    "CHANGE_TYPE": (SystemViewType.CLUSTER, COLUMNS),
    "ADD_COLUMN": (
        SystemViewType.NODE,
        [*COLUMNS, {"name": "col-x", "type": "BYTES", "length": 1 << 5}],
    ),
    "REMOVE_COLUMN": (SystemViewType.NODE, COLUMNS[1:]),
    "MODIFY_COLUMN": (
        SystemViewType.NODE,
        [{"name": "col1", "type": "BYTES", "length": 1 << 5}, *COLUMNS[1:]],
    ),
}
"""Ignite's ``SystemViewModification``: each changes the NODE view of ``COLUMNS`` once."""


@pytest.mark.parametrize("modification", list(MODIFICATIONS))
def test_create_system_view_replaces_existing_view_when_view_changes(modification: str) -> None:
    cat = _applied(Catalog.initial(), _command(SystemViewType.NODE))
    initial = cat.system_views()
    assert [v.name for v in initial] == [SYS_VIEW_NAME]

    view_type, columns = MODIFICATIONS[modification]
    prepared = run(cat, _command(view_type, columns))
    assert prepared.applied == (True,)
    (entry, _) = prepared.entries
    assert isinstance(entry, NewSystemViewEntry)
    assert events(prepared) == [CatalogEvent.SYSTEM_VIEW_CREATE, None]

    views = prepared.catalog.system_views()
    assert len(views) == 1
    view = views[0]
    assert view.id != initial[0].id, "view id didn't change"
    assert view.view_type is view_type
    assert [(col.name, col.type) for col in view.columns] == [
        (col["name"], ColumnType(col["type"])) for col in columns
    ]
    assert view == entry.system_view
    assert cat.system_views() == initial  # the catalog prepared against is untouched


@pytest.mark.parametrize("view_type", list(SystemViewType))
def test_create_system_view_does_not_replace_existing_view_with_the_same_name_if_its_structure_is_the_same(  # noqa: E501
    view_type: SystemViewType,
) -> None:
    command = _command(view_type)
    first = run(Catalog.initial(), command)
    # The listener of SYSTEM_VIEW_CREATE is called once.
    assert events(first).count(CatalogEvent.SYSTEM_VIEW_CREATE) == 1
    cat = first.catalog
    view1 = _view(cat)

    # The same command again creates an identical view: nothing is applied.
    again = run(cat, command)
    assert again.applied == (False,)
    assert not again.entries  # so no event either
    assert again.catalog is cat
    assert _view(again.catalog) is view1, "system view was replaced"

    # Parsed anew from the same JSON, the command is still the same definition.
    assert not run(cat, _command(view_type)).entries


# -- CreateSystemViewCommandValidationTest ---------------------------------------------------


def _fill_properties(**changes: Any) -> dict[str, Any]:
    """Ignite's ``fillProperties``: view ``view`` of one INT8 column ``C``, type NODE."""
    command: dict[str, Any] = {
        "op": "create_system_view",
        "name": "view",
        "columns": [{"name": "C", "type": "INT8"}],
        "view_type": "NODE",
    }
    command.update(changes)
    return command


def _expect_validation_error(command: dict[str, Any], message: str) -> None:
    """Check that ``command`` is refused both as JSON and as a model, citing ``message``."""
    for build in (
        lambda: c.parse(command),
        lambda: c.CreateSystemViewCommand(**{k: v for k, v in command.items() if k != "op"}),
    ):
        error = bad_shape(build)
        assert message in error.message, error.message


@pytest.mark.parametrize("name", NULL_AND_BLANK)
def test_name_should_not_be_null_or_blank(name: str | None) -> None:
    _expect_validation_error(_fill_properties(name=name), "name: ")


@pytest.mark.parametrize("columns", NULL_AND_EMPTY)
def test_system_view_should_have_at_least_one_column(columns: list[Any] | None) -> None:
    _expect_validation_error(_fill_properties(columns=columns), "columns: ")


def test_column_should_not_have_duplicates() -> None:
    column = {"name": "C", "type": "INT32"}
    _expect_validation_error(_fill_properties(columns=[column, column]), "duplicate column: C")


@pytest.mark.parametrize("columns", NULL_AND_EMPTY)
def test_columns_should_not_be_null_nor_empty(columns: list[Any] | None) -> None:
    _expect_validation_error(_fill_properties(columns=columns), "columns: ")
    without = {k: v for k, v in _fill_properties().items() if k != "columns"}
    error = bad_shape(lambda: c.parse(without))
    assert "columns: Field required" in error.message, error.message


def test_type_should_be_specified() -> None:
    _expect_validation_error(_fill_properties(view_type=None), "view_type: ")
    without = {k: v for k, v in _fill_properties().items() if k != "view_type"}
    error = bad_shape(lambda: c.parse(without))
    assert "view_type: Field required" in error.message, error.message


# -- CatalogSystemViewDescriptorTest ---------------------------------------------------------


def test_to_string_contains_type_and_fields() -> None:
    descriptor = SystemViewDescriptor(
        id=1, schema_id=2, name="view1", columns=(), view_type=SystemViewType.NODE
    )
    text = repr(descriptor)
    assert text.startswith("SystemViewDescriptor(")
    assert "id=1" in text
    assert "schema_id=2" in text
    assert "name='view1'" in text
    assert "view_type=<SystemViewType.NODE" in text


def test_same_definition() -> None:
    """Ignite's ``CatalogSystemViewDescriptor.equals``, on which the command decides.

    Not a test of Ignite's. There ``equals`` ignores the id; here ``same_definition`` does
    (and the token), while ``==`` compares every field, ids included.
    """
    view = _view(_applied(Catalog.initial(), _command(SystemViewType.NODE)))
    renumbered = view.model_copy(update={"id": view.id + 1, "update_ts": 42})
    assert view.same_definition(renumbered) and renumbered.same_definition(view)
    assert view != renumbered

    for modification, (view_type, columns) in MODIFICATIONS.items():
        other = _view(_applied(Catalog.initial(), _command(view_type, columns)))
        assert other.id == view.id
        assert not view.same_definition(other), modification
        assert view != other, modification
