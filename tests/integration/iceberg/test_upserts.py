"""PyIceberg's upsert through the Iceberg REST catalog: rows replaced by key, at one moment."""

from __future__ import annotations

import pyarrow as pa
import pytest
from pyiceberg.catalog.rest import RestCatalog

from api.client import CatalogClient
from tests.integration.iceberg.schemas import ORDERS

pytestmark = pytest.mark.timeout(60)


def _orders(table_schema: pa.Schema, rows: list[tuple[int, str, str | None]]) -> pa.Table:
    return pa.Table.from_pylist(
        [{"ID": i, "REGION": r, "AMOUNT": None, "NOTE": n} for i, r, n in rows],
        schema=table_schema,
    )


def test_an_upsert_replaces_rows_by_key_and_inserts_the_rest(
    iceberg: RestCatalog, client: CatalogClient
) -> None:
    table = iceberg.create_table("PUBLIC.ORDERS", ORDERS)
    arrow = table.schema().as_arrow()
    table.append(_orders(arrow, [(1, "eu", "first"), (2, "eu", "second"), (1, "us", "other")]))
    before = table.current_snapshot()
    assert before is not None

    result = table.upsert(_orders(arrow, [(2, "eu", "changed"), (3, "eu", "new")]))
    assert (result.rows_updated, result.rows_inserted) == (1, 1)

    loaded = iceberg.load_table("PUBLIC.ORDERS")
    rows = sorted((r["ID"], r["REGION"], r["NOTE"]) for r in loaded.scan().to_arrow().to_pylist())
    assert rows == [(1, "eu", "first"), (1, "us", "other"), (2, "eu", "changed"), (3, "eu", "new")]
    old = loaded.scan(snapshot_id=before.snapshot_id).to_arrow().to_pylist()
    assert sorted((r["ID"], r["REGION"], r["NOTE"]) for r in old) == [
        (1, "eu", "first"),
        (1, "us", "other"),
        (2, "eu", "second"),
    ]
    # The catalog's own reads see the same rows: one data commit made the upsert visible.
    table_id = client.table("PUBLIC", "ORDERS").id
    assert len(client.data_commits(table_id, history=True).commits) == 2
