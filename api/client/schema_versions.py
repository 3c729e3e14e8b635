"""The pages of a table's schema versions, which both clients read through one pager."""

from __future__ import annotations

from api.client.calls import Call, Timestamp, json_of, read_call, segment
from api.wire.models import TableHistoryBody
from catalog.descriptors import TableVersion


def table_history_call(
    schema: str, name: str, version: int | None, at: Timestamp | None, from_schema_version: int
) -> Call[TableHistoryBody]:
    """``GET /v1/schemas/{schema}/tables/{name}/schema-versions``: one page, oldest first."""
    path = f"/v1/schemas/{segment(schema)}/tables/{segment(name)}/schema-versions"
    call = read_call(path, json_of(TableHistoryBody), version, at)
    call.params["from"] = str(from_schema_version)
    return call


class SchemaVersionPages:
    """Every schema version of a table, page by page, all read at one catalog version.

    Both clients send ``next`` and hand its answer to ``take`` until ``next`` is None.
    """

    def __init__(self, schema: str, name: str, version: int | None, at: Timestamp | None) -> None:
        self.schema, self.name = schema, name
        self.found: list[TableVersion] = []
        self.next: Call[TableHistoryBody] | None = table_history_call(schema, name, version, at, 1)

    def take(self, body: TableHistoryBody) -> None:
        """Keep a page's schema versions and set the call for the next page (None: done)."""
        self.found.extend(body.schema_versions)
        following = body.next_schema_version
        self.next = (
            None
            if following is None
            else table_history_call(self.schema, self.name, body.version, None, following)
        )
