"""Schema evolution through PyIceberg: each commit is one catalog version, ids are column ids."""

from __future__ import annotations

from collections.abc import Callable

import httpx
import pytest
from pyiceberg.catalog.rest import RestCatalog
from pyiceberg.exceptions import BadRequestError, CommitFailedException
from pyiceberg.table.update import AssertCurrentSchemaId, SetCurrentSchemaUpdate
from pyiceberg.table.update.schema import UpdateSchema
from pyiceberg.types import DecimalType, DoubleType, LongType, StringType

from api.client import CatalogClient
from catalog import ColumnType
from catalog import commands as c
from tests.integration.api.servers import RunningServer
from tests.integration.iceberg.schemas import EVENTS

pytestmark = pytest.mark.timeout(60)


def _latest(client: CatalogClient) -> int:
    return client.versions().latest


def test_each_schema_change_is_one_catalog_version(
    iceberg: RestCatalog, client: CatalogClient
) -> None:
    table = iceberg.create_table("PUBLIC.EVENTS", EVENTS)
    steps: list[Callable[[UpdateSchema], object]] = [
        lambda u: u.add_column("EMAIL", StringType()),
        lambda u: u.rename_column("EMAIL", "MAIL"),
        lambda u: u.make_column_optional("COUNT"),
        lambda u: u.update_column("COUNT", LongType()),
        lambda u: (u.update_column("RATIO", DoubleType()), u.add_column("CITY", StringType())),
        lambda u: u.update_column("PRICE", DecimalType(14, 2)),
        lambda u: u.delete_column("CITY"),
    ]
    for step in steps:
        before = _latest(client)
        with table.update_schema() as update:
            step(update)
        assert _latest(client) == before + 1
    described = client.table("PUBLIC", "EVENTS")
    assert [(col.id, col.name, col.type, col.nullable) for col in described.columns] == [
        (1, "ID", ColumnType.INT64, False),
        (2, "COUNT", ColumnType.INT64, True),
        (3, "RATIO", ColumnType.FLOAT64, True),
        (4, "PRICE", ColumnType.DECIMAL, True),
        (5, "MAIL", ColumnType.STRING, True),
    ]
    assert described.column("PRICE") is not None
    assert described.column("PRICE").precision == 14  # type: ignore[union-attr]
    loaded = iceberg.load_table("PUBLIC.EVENTS")
    assert table.schema() == loaded.schema()
    assert [(f.field_id, f.name) for f in loaded.schema().fields] == [
        (col.id, col.name) for col in described.columns
    ]
    assert loaded.schema().schema_id == described.schema_version
    assert loaded.metadata.last_column_id == 6
    assert len(loaded.schemas()) == described.schema_version


def test_ddl_through_the_catalog_is_a_new_schema_with_the_same_ids(
    iceberg: RestCatalog, client: CatalogClient
) -> None:
    before = iceberg.create_table("PUBLIC.EVENTS", EVENTS).schema()
    client.execute(
        [c.AddColumns(table="EVENTS", columns=[c.Column(name="TAG", type=ColumnType.STRING)])]
    )
    after = iceberg.load_table("PUBLIC.EVENTS").schema()
    assert after.schema_id == before.schema_id + 1
    assert after.fields[: len(before.fields)] == before.fields
    assert after.find_field("TAG").field_id == client.table("PUBLIC", "EVENTS").column("TAG").id  # type: ignore[union-attr]


def test_a_stale_commit_fails_and_writes_nothing(
    iceberg: RestCatalog, client: CatalogClient
) -> None:
    iceberg.create_table("PUBLIC.EVENTS", EVENTS)
    first = iceberg.load_table("PUBLIC.EVENTS")
    second = iceberg.load_table("PUBLIC.EVENTS")
    with first.update_schema() as update:
        update.add_column("A", StringType())
    version = _latest(client)
    with pytest.raises(CommitFailedException, match="current-schema-id"):  # noqa: SIM117
        with second.update_schema() as update:
            update.add_column("B", StringType())
    assert _latest(client) == version
    assert client.table("PUBLIC", "EVENTS").column("B") is None


def test_changes_the_catalog_cannot_make_are_refused_clearly(
    iceberg: RestCatalog, client: CatalogClient
) -> None:
    table = iceberg.create_table("PUBLIC.EVENTS", EVENTS)
    version = _latest(client)
    with pytest.raises(BadRequestError, match="cannot reorder"):  # noqa: SIM117
        with table.update_schema() as update:
            update.move_first("PRICE")
    with pytest.raises(BadRequestError, match="primary key"):  # noqa: SIM117
        with table.update_schema() as update:
            update.set_identifier_fields("ID", "COUNT")
    assert _latest(client) == version


def test_table_properties_are_the_catalogs(iceberg: RestCatalog, client: CatalogClient) -> None:
    table = iceberg.create_table("PUBLIC.EVENTS", EVENTS)
    with table.transaction() as transaction:
        transaction.set_properties({"stale-rows-fraction": "0.5", "min-stale-rows-count": "7"})
    described = client.table("PUBLIC", "EVENTS")
    assert (described.stale_rows_fraction, described.min_stale_rows_count) == (0.5, 7)
    with table.transaction() as transaction:
        transaction.remove_properties("min-stale-rows-count")
    assert iceberg.load_table("PUBLIC.EVENTS").properties["min-stale-rows-count"] == "500"


@pytest.mark.parametrize(
    ("body", "named"),
    [
        (
            {"updates": [{"action": "set-location", "location": "/elsewhere"}]},
            "location /elsewhere is not inside the warehouse",
        ),
        ({"updates": [{"action": "move-table", "to": "/elsewhere"}]}, "'move-table'"),
        ({"requirements": [{"type": "assert-nothing"}]}, "'assert-nothing'"),
    ],
)
def test_a_refused_or_unknown_kind_is_a_bad_request_in_the_protocols_shape(
    iceberg: RestCatalog,
    client: CatalogClient,
    iceberg_server: RunningServer,
    body: dict[str, object],
    named: str,
) -> None:
    iceberg.create_table("PUBLIC.EVENTS", EVENTS)
    version = _latest(client)
    url = f"{iceberg_server.url}/iceberg/v1/namespaces/PUBLIC/tables/EVENTS"
    answer = httpx.post(url, json=body, timeout=10)
    error = answer.json()["error"]
    assert (answer.status_code, error["type"], error["code"]) == (400, "BadRequestException", 400)
    assert named in error["message"]
    assert _latest(client) == version


def _make_current(iceberg: RestCatalog, schema_id: int) -> None:
    table = iceberg.load_table("PUBLIC.EVENTS")
    iceberg.commit_table(
        table,
        requirements=(AssertCurrentSchemaId(current_schema_id=table.metadata.current_schema_id),),
        updates=(SetCurrentSchemaUpdate(schema_id=schema_id),),
    )


def test_an_earlier_schema_made_current_again_is_a_new_version_served_under_its_id(
    iceberg: RestCatalog, client: CatalogClient
) -> None:
    first = iceberg.create_table("PUBLIC.EVENTS", EVENTS).schema()
    with iceberg.load_table("PUBLIC.EVENTS").update_schema() as update:
        update.add_column("NOTE", StringType())
        update.rename_column("RATIO", "SHARE")
    middle = iceberg.load_table("PUBLIC.EVENTS").schema().schema_id
    before = _latest(client)
    _make_current(iceberg, first.schema_id)
    assert _latest(client) == before + 1
    table = iceberg.load_table("PUBLIC.EVENTS")
    reverted = table.schema()
    assert reverted.fields == first.fields  # RATIO named again, NOTE dropped
    # The catalog's schema moves forward; Iceberg sees the earlier schema current again.
    assert client.table("PUBLIC", "EVENTS").schema_version > middle > first.schema_id
    assert reverted.schema_id == first.schema_id
    alike = [s.schema_id for s in table.schemas().values() if s.fields == first.fields]
    assert alike == [first.schema_id]  # listed once
    assert middle in table.schemas()
    assert client.table("PUBLIC", "EVENTS").column("NOTE") is None
    with table.update_schema() as update:  # a change after it is a schema of its own
        update.add_column("LATER", StringType())
    later = iceberg.load_table("PUBLIC.EVENTS").schema().schema_id
    assert later == client.table("PUBLIC", "EVENTS").schema_version


def test_an_earlier_schema_the_catalog_cannot_go_back_to_is_refused(
    iceberg: RestCatalog, client: CatalogClient
) -> None:
    first = iceberg.create_table("PUBLIC.EVENTS", EVENTS).schema()
    with iceberg.load_table("PUBLIC.EVENTS").update_schema() as update:
        update.update_column("COUNT", LongType())  # widened: it cannot narrow again
    version = _latest(client)
    with pytest.raises(BadRequestError, match="COUNT"):
        _make_current(iceberg, first.schema_id)
    with pytest.raises(BadRequestError, match="has no such schema"):
        _make_current(iceberg, 99)
    with iceberg.load_table("PUBLIC.EVENTS").update_schema() as update:
        update.add_column("NOTE", StringType())
    with_note = iceberg.load_table("PUBLIC.EVENTS").schema().schema_id
    with iceberg.load_table("PUBLIC.EVENTS").update_schema() as update:
        update.delete_column("NOTE")
    version = _latest(client)
    with pytest.raises(BadRequestError, match="never reuses a column id"):
        _make_current(iceberg, with_note)
    assert _latest(client) == version
