"""Multi-table commits: ``POST /v1/transactions/commit`` makes every table's changes, or none.

PyIceberg writes each table's change (its data files and manifests, its requirements and
updates) as it would commit it; a catalog of this test's own keeps the commit requests
instead of sending them (``StagingCatalog``), and the test sends them together.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import pytest
import requests
from pyiceberg.catalog import load_catalog
from pyiceberg.catalog.rest import RestCatalog
from pyiceberg.table import CommitTableRequest, CommitTableResponse, Table
from pyiceberg.table.update import TableRequirement, TableUpdate
from pyiceberg.types import StringType

from api.client import CatalogClient
from catalog.data.files import DataCommit
from tests.integration.api.servers import RunningServer
from tests.integration.iceberg.schemas import EVENTS
from tests.integration.iceberg.test_appends import ids, rows

pytestmark = pytest.mark.timeout(60)


class Staged(Exception):
    """A commit kept, not sent."""


class StagingCatalog(RestCatalog):
    """A PyIceberg REST catalog that keeps each table commit's request instead of sending it."""

    staged: list[dict[str, Any]]

    def commit_table(
        self,
        table: Table,
        requirements: tuple[TableRequirement, ...],
        updates: tuple[TableUpdate, ...],
    ) -> CommitTableResponse:
        """Keep the commit's request (identifier, requirements, updates); send nothing."""
        name = table.name()
        request = CommitTableRequest(
            identifier={"namespace": list(name[:-1]), "name": name[-1]},
            requirements=requirements,
            updates=updates,
        )
        self.staged.append(json.loads(request.model_dump_json()))
        raise Staged


def staging(server: RunningServer) -> StagingCatalog:
    """Return a staging catalog of ``server``."""
    catalog = StagingCatalog("staging", uri=f"{server.url}/iceberg")
    catalog.staged = []
    return catalog


def stage_append(catalog: StagingCatalog, name: str, ids_: range) -> None:
    """Write rows ``ids_`` to ``name`` as an append, keeping the commit."""
    table = catalog.load_table(name)
    with pytest.raises(Staged):
        table.append(rows(table, ids_))


def send(
    server: RunningServer, staged: list[dict[str, Any]], prefix: str = ""
) -> requests.Response:
    """Send ``staged`` table changes as one transaction."""
    url = f"{server.url}/iceberg/v1/{prefix}transactions/commit"
    return requests.post(url, json={"table-changes": staged}, timeout=30)


def staged_appends(server: RunningServer) -> StagingCatalog:
    """Return a staging catalog holding appends of rows 10-11 to PUBLIC.A and 20-22 to B."""
    catalog = staging(server)
    stage_append(catalog, "PUBLIC.A", range(10, 12))
    stage_append(catalog, "PUBLIC.B", range(20, 23))
    return catalog


@dataclass
class Two:
    """Tables PUBLIC.A and PUBLIC.B (rows 0 and 1 each) on a server, and its clients."""

    iceberg: RestCatalog
    client: CatalogClient
    server: RunningServer


@pytest.fixture
def two(iceberg: RestCatalog, client: CatalogClient, iceberg_server: RunningServer) -> Two:
    """Tables PUBLIC.A and PUBLIC.B, each with rows 0 and 1."""
    for name in ("PUBLIC.A", "PUBLIC.B"):
        table = iceberg.create_table(name, EVENTS)
        table.append(rows(table, range(2)))
    return Two(iceberg, client, iceberg_server)


def _commits(two: Two, table: str) -> list[DataCommit]:
    return two.client.data_commits(two.client.table("PUBLIC", table).id).commits


def test_appends_to_two_tables_land_together_at_one_moment(two: Two) -> None:
    catalog = staged_appends(two.server)
    version = two.client.versions().latest
    answer = send(two.server, catalog.staged)
    assert answer.status_code == 204, answer.text
    assert ids(two.iceberg.load_table("PUBLIC.A")) == [0, 1, 10, 11]
    assert ids(two.iceberg.load_table("PUBLIC.B")) == [0, 1, 20, 21, 22]
    assert two.client.versions().latest == version  # data commits make no catalog version
    last = [_commits(two, t)[-1] for t in "AB"]
    assert last[0].commit_ts == last[1].commit_ts
    # Sent again (its answer lost, say): answered with what it made, nothing made twice.
    assert send(two.server, catalog.staged).status_code == 204
    assert [len(_commits(two, t)) for t in "AB"] == [2, 2]


def test_a_table_that_moved_on_fails_the_whole_transaction_naming_it(two: Two) -> None:
    catalog = staged_appends(two.server)
    b = two.iceberg.load_table("PUBLIC.B")
    b.append(rows(b, range(30, 31)))  # another writer came first to B
    answer = send(two.server, catalog.staged)
    assert answer.status_code == 409
    error = answer.json()["error"]
    assert error["type"] == "CommitFailedException" and "PUBLIC.B" in error["message"]
    assert ids(two.iceberg.load_table("PUBLIC.A")) == [0, 1]  # A unchanged: none or all
    assert len(_commits(two, "A")) == 1


def test_metadata_changes_of_two_tables_are_one_catalog_version(two: Two) -> None:
    catalog = staging(two.server)
    with pytest.raises(Staged), catalog.load_table("PUBLIC.A").transaction() as tx:
        tx.set_properties(owner="team-a")
    with pytest.raises(Staged), catalog.load_table("PUBLIC.B").update_schema() as update:
        update.add_column("NOTE", StringType())
    version = two.client.versions().latest
    answer = send(two.server, catalog.staged)
    assert answer.status_code == 204, answer.text
    assert two.client.versions().latest == version + 1
    assert two.iceberg.load_table("PUBLIC.A").properties["owner"] == "team-a"
    assert "NOTE" in two.iceberg.load_table("PUBLIC.B").schema().column_names
    # A stale requirement (B's schema changed since): 409 naming B, nothing changed.
    catalog.staged.clear()
    with pytest.raises(Staged), catalog.load_table("PUBLIC.A").transaction() as tx:
        tx.set_properties(owner="team-b")
    with pytest.raises(Staged), catalog.load_table("PUBLIC.B").update_schema() as update:
        update.add_column("OTHER", StringType())
    with two.iceberg.load_table("PUBLIC.B").update_schema() as update:
        update.add_column("FIRST", StringType())
    answer = send(two.server, catalog.staged)
    assert answer.status_code == 409 and "PUBLIC.B" in answer.json()["error"]["message"]
    assert two.iceberg.load_table("PUBLIC.A").properties["owner"] == "team-a"


def test_what_a_transaction_cannot_hold_is_refused_and_nothing_is_written(two: Two) -> None:
    catalog = staging(two.server)
    stage_append(catalog, "PUBLIC.A", range(10, 12))
    with pytest.raises(Staged), catalog.load_table("PUBLIC.B").transaction() as tx:
        tx.set_properties(owner="team-b")
    append, properties = catalog.staged
    missing = {**append, "identifier": {"namespace": ["PUBLIC"], "name": "NONE"}}
    refused = {
        "either adds snapshots to its tables or changes their metadata": [append, properties],
        "table PUBLIC.A is changed twice": [append, append],
        "names its table (identifier)": [{**append, "identifier": None}],
        "NONE": [missing],
    }
    commits = [len(_commits(two, t)) for t in "AB"]
    version = two.client.versions().latest
    for named, staged in refused.items():
        answer = send(two.server, staged)
        assert answer.status_code in (400, 404), answer.text
        assert named in answer.json()["error"]["message"]
    assert send(two.server, []).status_code == 400
    pinned = send(two.server, [append], prefix=f"main@v{version}/")
    assert pinned.status_code == 406 and "pinned and read-only" in pinned.text
    after = [len(_commits(two, t)) for t in "AB"]
    assert after == commits and two.client.versions().latest == version


def test_the_endpoint_is_advertised(iceberg_server: RunningServer) -> None:
    config = load_catalog("c", type="rest", uri=f"{iceberg_server.url}/iceberg")
    assert isinstance(config, RestCatalog)
    answer = requests.get(f"{iceberg_server.url}/iceberg/v1/config", timeout=10).json()
    assert "POST /v1/{prefix}/transactions/commit" in answer["endpoints"]
