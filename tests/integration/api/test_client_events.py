"""The client's event iterator: replay then live, resumption across server restarts."""

from __future__ import annotations

import threading

import pytest

from api.client import CatalogClient, CatalogEventMessage, RetryPolicy
from catalog import CatalogEvent
from catalog.entries import NewTableEntry
from catalog.runtime.blocking import SyncCatalogNode
from catalog.runtime.options import NodeOptions
from tests.integration.api.servers import RunningServer, ServerFactory
from tests.integration.api.support import create_table, take

RECONNECT = RetryPolicy(max_attempts=4, backoff_s=0.05, backoff_cap_s=0.5, max_reconnects=40)


def expected_ids(server: RunningServer, from_version: int = 1) -> list[str]:
    """Every event id the server's node holds from ``from_version`` on, in order."""
    service = server.node.service
    return [
        f"{v}.{e.index}"
        for v in range(from_version, service.latest_version + 1)
        for e in service.events(v)
    ]


@pytest.mark.timeout(60)
def test_replay_then_live(api_server: RunningServer) -> None:
    with CatalogClient(api_server.url) as client:
        client.execute(create_table("T"))
        replayed = expected_ids(api_server)
        with client.events(from_version=1) as events:
            got = take(events, len(replayed))
            assert [e.id for e in got] == replayed
            table_event = next(e for e in got if e.event is CatalogEvent.TABLE_CREATE)
            assert isinstance(table_event.entry, NewTableEntry)
            # The entry holds the table as proposed; the version stamps it when it applies.
            table = client.table("PUBLIC", "T")
            assert table.update_ts == table_event.activation_ts
            assert table_event.entry.table == table.model_copy(update={"update_ts": 0})
            assert table_event.to_json()["subject"] == {
                "type": "table",
                "id": table_event.entry.table.id,
                "name": "T",
                "schema": "PUBLIC",
            }

            writer = threading.Thread(target=lambda: client.execute(create_table("U")))
            writer.start()
            live = take(events, 2)
            writer.join(30)
            assert [e.event for e in live] == [CatalogEvent.TABLE_CREATE, CatalogEvent.INDEX_CREATE]
            assert live[0].version == 3 and live[0].subject.name == "U"
            assert events.last_event_id == live[-1].id


@pytest.mark.timeout(60)
def test_live_only_stream_starts_after_the_latest_version(api_server: RunningServer) -> None:
    with CatalogClient(api_server.url) as client, client.events() as events:
        client.execute(create_table("T"))
        first = next(events)  # the first table creates the Default zone first
        assert (first.id, first.event) == ("2.0", CatalogEvent.ZONE_CREATE)


@pytest.mark.timeout(90)
def test_resumes_across_a_server_restart_without_loss_or_duplicates(
    api_servers: ServerFactory, store_url: str
) -> None:
    server = api_servers.start(store_url, sse_heartbeat_s=1.0)
    settings = server.settings

    def write_while_down() -> None:
        with SyncCatalogNode.open(
            store_url,
            "offline-writer",
            NodeOptions(delay_ms=settings.delay_ms, max_clock_skew_ms=settings.max_clock_skew_ms),
        ) as node:
            node.execute(create_table("WHILE_DOWN"))

    restarted: list[RunningServer] = []

    def restart_and_write() -> None:
        new = api_servers.restart(server, between=write_while_down)
        restarted.append(new)
        with CatalogClient(new.url) as writer:
            writer.execute(create_table("AFTER"))

    with CatalogClient(server.url, retry=RECONNECT) as client:
        client.execute(create_table("BEFORE"))
        before = expected_ids(server)
        with client.events(from_version=1) as events:
            got: list[CatalogEventMessage] = take(events, len(before))
            assert [e.id for e in got] == before
            thread = threading.Thread(target=restart_and_write)
            thread.start()
            # WHILE_DOWN and AFTER: two events each (table and its primary-key index).
            got += take(events, 4)
            thread.join(60)
        assert restarted, "the server did not restart"
        assert [e.id for e in got] == expected_ids(restarted[0])
        names = [e.subject.name for e in got if e.event is CatalogEvent.TABLE_CREATE]
        assert names == ["BEFORE", "WHILE_DOWN", "AFTER"]

        # A stream can also resume from a saved id in a later run.
        with client.events(last_event_id=got[-3].id) as resumed:
            assert [e.id for e in take(resumed, 2)] == [e.id for e in got[-2:]]


@pytest.mark.timeout(60)
def test_stream_fails_over_to_another_node(api_servers: ServerFactory, store_url: str) -> None:
    a = api_servers.start(store_url, node_name="a", sse_heartbeat_s=1.0)
    b = api_servers.start(store_url, node_name="b", sse_heartbeat_s=1.0)
    with CatalogClient([a.url, b.url], retry=RECONNECT) as client:
        with client.events(from_version=1) as events:
            got = take(events, len(expected_ids(a)))
            a.stop()
            with CatalogClient(b.url) as writer:
                writer.execute(create_table("T"))
            got += take(events, 4)  # the Default zone, made default, the table, its key
        assert [e.id for e in got] == expected_ids(b)
