"""Port of ``CatalogSystemViewTest.testCreateSystemViewUpdatesDescriptorToken``.

Registering a system view stamps it, and the ``SYSTEM`` schema that holds it, with the
activation time of its version (``update_ts``). Run on real nodes, as
``test_causality_tokens.py``, so the tokens come from the timestamps the log assigned.
"""

from __future__ import annotations

import pytest

from catalog import ColumnType, SystemViewType
from catalog import commands as c
from catalog.runtime.node import CatalogNode
from catalog.runtime.options import NodeOptions
from tests.integration.catalog.support import run

_OPTIONS = NodeOptions(delay_ms=0, max_clock_skew_ms=0)
SYS_VIEW_NAME = "test_view"


def _create_view(view_type: SystemViewType) -> c.CreateSystemViewCommand:
    """Return ``CatalogSystemViewTest``'s view: col1 INT32, col2 STRING(32)."""
    return c.CreateSystemView(
        name=SYS_VIEW_NAME,
        columns=(
            c.Column(name="col1", type=ColumnType.INT32),
            c.Column(name="col2", type=ColumnType.STRING, length=1 << 5),
        ),
        view_type=view_type,
    )


@pytest.mark.parametrize("view_type", list(SystemViewType))
def test_create_system_view_updates_descriptor_token(
    store_url: str, view_type: SystemViewType
) -> None:
    async def main() -> None:
        async with CatalogNode.open(store_url, "n1", _OPTIONS) as node:
            before = node.service.latest_catalog()
            schema_ts = before.schema("SYSTEM").update_ts

            result = await node.manager.execute(_create_view(view_type))
            cat = node.service.catalog(result.version)
            assert cat.version > before.version

            # Creating the system view moves the token of its schema.
            system = cat.schema("SYSTEM")
            assert system.update_ts > schema_ts
            view = cat.find_system_view(SYS_VIEW_NAME)
            assert view is not None and view.view_type is view_type
            assert view.update_ts == system.update_ts == cat.activation_ts
            # PUBLIC holds no view: its token stays.
            assert cat.schema("PUBLIC").update_ts == before.schema("PUBLIC").update_ts

    run(main())
