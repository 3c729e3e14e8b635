"""Ports of Ignite's ``CatalogManagerSelfTest``: versions 0 and 1, and which numbers exist."""

from __future__ import annotations

import pytest

from catalog import CatalogError, ErrorCode
from catalog.runtime.node import CatalogNode
from catalog.runtime.options import NodeOptions
from tests.integration.catalog.support import create_table, run

_OPTIONS = NodeOptions(delay_ms=0, max_clock_skew_ms=0)


def test_empty_catalog(store_url: str) -> None:
    """Version 0 is the empty catalog: no schema, no default zone, ids from 0, time 0."""

    async def scenario() -> None:
        async with CatalogNode.open(store_url, "n1", _OPTIONS) as node:
            empty = node.service.catalog(0)
            assert (empty.version, empty.activation_ts, empty.object_id_gen) == (0, 0, 0)
            assert empty.find_schema("PUBLIC") is None and empty.default_zone() is None
            assert not empty.schemas() and not empty.tables() and not empty.zones()
            # Active from the earliest time until version 1 activates.
            first = node.service.catalog(1)
            assert node.service.active_catalog(0) is empty
            assert node.service.active_catalog(first.activation_ts - 1) is empty
            assert node.service.active_catalog(first.activation_ts) is first

    run(scenario())


def test_initial_catalog(store_url: str) -> None:
    """Version 1 holds PUBLIC (id 0) and SYSTEM, both empty, and no zone."""

    async def scenario() -> None:
        async with CatalogNode.open(store_url, "n1", _OPTIONS) as node:
            initial = node.service.catalog(1)
            assert node.service.latest_version == 1
            public, system = initial.schema("PUBLIC"), initial.schema("SYSTEM")
            assert public.id == 0 and initial.schema_by_id(public.id) == public
            assert initial.schema_is_empty(public.id) and initial.schema_is_empty(system.id)
            # No zone until a table needs one (the first table creates Default).
            assert initial.zones() == [] and initial.default_zone() is None

    run(scenario())


def test_invalid_catalog_versions(store_url: str) -> None:
    async def scenario() -> None:
        async with CatalogNode.open(store_url, "n1", _OPTIONS) as node:
            latest = node.service.latest_version
            for version in (latest + 1, -1):
                with pytest.raises(CatalogError) as missing:
                    node.service.catalog(version)
                assert missing.value.code is ErrorCode.VERSION_NOT_FOUND
            with pytest.raises(CatalogError) as before_time:
                node.service.active_catalog(-1)
            assert before_time.value.code is ErrorCode.VERSION_NOT_FOUND

    run(scenario())


def test_assigns_successive_catalog_versions(store_url: str) -> None:
    async def scenario() -> None:
        async with CatalogNode.open(store_url, "n1", _OPTIONS) as node:
            versions = [
                (await node.manager.execute(create_table(f"T{i}"))).version for i in range(3)
            ]
            assert versions == [versions[0], versions[0] + 1, versions[0] + 2]

    run(scenario())
