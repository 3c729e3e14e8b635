"""Trino's iceberg connector replaces a table: ``CREATE OR REPLACE TABLE ... AS SELECT``."""

from __future__ import annotations

import pytest
from pyiceberg.catalog.rest import RestCatalog

from tests.integration.engines.conftest import Recorder, TrinoServer
from tests.integration.engines.engines import TrinoEngine
from tests.integration.engines.test_smoke import run

pytestmark = pytest.mark.timeout(300)


def test_create_or_replace_as_select_replaces_the_rows(
    trino_engine: TrinoServer, pyiceberg: RestCatalog, namespace: str, recorder: Recorder
) -> None:
    trino = TrinoEngine(trino_engine)
    t = f"cat.{namespace}.t"
    run(trino, f"CREATE SCHEMA cat.{namespace}", recorder)
    run(trino, f"CREATE TABLE {t} (id BIGINT, name VARCHAR)", recorder)
    run(trino, f"INSERT INTO {t} VALUES (1, 'ann'), (2, 'bo')", recorder)
    before = pyiceberg.load_table(f"{namespace}.t")
    run(
        trino,
        f"CREATE OR REPLACE TABLE {t} AS SELECT CAST(7 AS BIGINT) AS id, 70 AS score",
        recorder,
    )
    assert run(trino, f"SELECT id, score FROM {t}", recorder) == [[7, 70]]
    table = pyiceberg.load_table(f"{namespace}.t")
    assert [(f.field_id, f.name) for f in table.schema().fields] == [(1, "id"), (3, "score")]
    assert table.metadata.table_uuid == before.metadata.table_uuid
    assert table.scan().to_arrow().to_pylist() == [{"id": 7, "score": 70}]
