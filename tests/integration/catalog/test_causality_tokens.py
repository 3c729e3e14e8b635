"""Ports of Ignite's ``CatalogManagerDescriptorCausalityTokenTest``.

Every schema, table, index and zone carries ``update_ts``: the activation time of the version
that last changed it; a schema's moves with its tables and indexes. Run on real nodes, so the
tokens come from the timestamps the log assigned.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from api.sql.statements import parse_sql
from catalog.catalog import Catalog
from catalog.runtime.node import CatalogNode
from catalog.runtime.options import NodeOptions
from tests.integration.catalog.support import run

_OPTIONS = NodeOptions(delay_ms=0, max_clock_skew_ms=0)
_TABLE = "CREATE TABLE {name} (ID INT PRIMARY KEY, VAL INT, STR VARCHAR(100))"


def _on_node(store_url: str, scenario: Callable[[CatalogNode], Awaitable[None]]) -> None:
    async def main() -> None:
        async with CatalogNode.open(store_url, "n1", _OPTIONS) as node:
            await scenario(node)

    run(main())


async def _sql(node: CatalogNode, text: str) -> Catalog:
    result = await node.manager.execute(parse_sql(text))
    return node.service.catalog(result.version)


def test_empty_catalog(store_url: str) -> None:
    async def scenario(node: CatalogNode) -> None:
        first = node.service.catalog(1)
        assert first.schema("PUBLIC").update_ts == first.activation_ts > 0
        assert first.zones() == [] and first.default_zone() is None

    _on_node(store_url, scenario)


def test_create_table(store_url: str) -> None:
    async def scenario(node: CatalogNode) -> None:
        before = node.service.latest_catalog()
        cat = await _sql(node, _TABLE.format(name="T1"))
        assert before.schema("PUBLIC").update_ts < cat.activation_ts
        table = cat.table("PUBLIC", "T1")
        assert table.update_ts == cat.schema("PUBLIC").update_ts == cat.activation_ts
        later = await _sql(node, _TABLE.format(name="T2"))
        assert later.table("PUBLIC", "T2").update_ts > later.table("PUBLIC", "T1").update_ts
        assert later.table("PUBLIC", "T1").update_ts == table.update_ts  # untouched
        assert later.schema("PUBLIC").update_ts == later.table("PUBLIC", "T2").update_ts

    _on_node(store_url, scenario)


def test_drop_table(store_url: str) -> None:
    async def scenario(node: CatalogNode) -> None:
        cat = await _sql(node, _TABLE.format(name="T1") + "; " + _TABLE.format(name="T2"))
        dropped = await _sql(node, "DROP TABLE T1")
        assert dropped.schema("PUBLIC").update_ts > cat.schema("PUBLIC").update_ts
        assert dropped.table("PUBLIC", "T2").update_ts == cat.table("PUBLIC", "T2").update_ts

    _on_node(store_url, scenario)


def _altering_stamps_the_table_and_its_schema(store_url: str, ddl: str) -> None:
    async def scenario(node: CatalogNode) -> None:
        cat = await _sql(node, _TABLE.format(name="T"))
        altered = await _sql(node, ddl)
        table = altered.table("PUBLIC", "T")
        assert table.update_ts > cat.table("PUBLIC", "T").update_ts
        assert altered.schema("PUBLIC").update_ts == table.update_ts == altered.activation_ts

    _on_node(store_url, scenario)


def test_add_column(store_url: str) -> None:
    _altering_stamps_the_table_and_its_schema(
        store_url, "ALTER TABLE T ADD COLUMN NEWCOL VARCHAR(11) DEFAULT 'Ignite!'"
    )


def test_drop_column(store_url: str) -> None:
    _altering_stamps_the_table_and_its_schema(store_url, "ALTER TABLE T DROP COLUMN VAL")


def test_create_hash_index(store_url: str) -> None:
    async def scenario(node: CatalogNode) -> None:
        cat = await _sql(node, _TABLE.format(name="T"))
        indexed = await _sql(node, "CREATE INDEX I ON T USING HASH (VAL, ID)")
        index = indexed.index("PUBLIC", "I")
        assert index.update_ts == indexed.schema("PUBLIC").update_ts == indexed.activation_ts
        assert indexed.schema("PUBLIC").update_ts > cat.schema("PUBLIC").update_ts

    _on_node(store_url, scenario)


def test_create_sorted_index(store_url: str) -> None:
    async def scenario(node: CatalogNode) -> None:
        await _sql(node, _TABLE.format(name="T"))
        indexed = await _sql(node, "CREATE INDEX I ON T USING SORTED (VAL DESC)")
        assert indexed.index("PUBLIC", "I").update_ts == indexed.activation_ts

    _on_node(store_url, scenario)


def test_create_zone(store_url: str) -> None:
    async def scenario(node: CatalogNode) -> None:
        created = await _sql(node, _TABLE.format(name="T"))  # creates the Default zone
        default = created.default_zone()
        assert default is not None and default.update_ts == created.activation_ts
        cat = await _sql(node, "CREATE ZONE Z STORAGE PROFILES ['default']")
        assert cat.zone("Z").update_ts == cat.activation_ts
        assert cat.zone(default.name).update_ts == default.update_ts < cat.activation_ts

    _on_node(store_url, scenario)


def test_rename_zone(store_url: str) -> None:
    async def scenario(node: CatalogNode) -> None:
        cat = await _sql(node, "CREATE ZONE Z STORAGE PROFILES ['default']")
        renamed = await _sql(node, "ALTER ZONE Z RENAME TO Y")
        assert renamed.zone("Y").update_ts > cat.zone("Z").update_ts

    _on_node(store_url, scenario)


def test_alter_zone(store_url: str) -> None:
    async def scenario(node: CatalogNode) -> None:
        cat = await _sql(node, "CREATE ZONE Z STORAGE PROFILES ['default']")
        altered = await _sql(node, "ALTER ZONE Z SET REPLICAS 3")
        assert altered.zone("Z").update_ts == altered.activation_ts > cat.zone("Z").update_ts

    _on_node(store_url, scenario)


def test_tokens_are_equal_on_every_node_and_after_restart(store_url: str) -> None:
    """Stamps come from the update: a node replaying the log finds the writer's tokens."""

    async def main() -> None:
        async with CatalogNode.open(store_url, "a", _OPTIONS) as a:
            written = await _sql(a, _TABLE.format(name="T") + "; CREATE INDEX I ON T (VAL)")
            async with CatalogNode.open(store_url, "b", _OPTIONS) as b:
                await b.service.catalog_ready(written.version)
                replayed = b.service.catalog(written.version)
                assert replayed.digest() == written.digest()
                assert replayed.table("PUBLIC", "T").update_ts == written.activation_ts

    run(main())
