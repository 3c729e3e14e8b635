"""A bare in-memory Iceberg REST catalog: the baseline of P13 (``bench.bench_iceberg``).

``python -m bench.iceberg_bare PORT WAREHOUSE`` serves, on loopback with one uvicorn worker,
the few endpoints PyIceberg needs to create a namespace and a table, load it and append to
it: ``GET /v1/config``, create, list and load namespaces, create and load tables, and commit
(``POST /v1/namespaces/{ns}/tables/{t}``). Request and answer bodies are PyIceberg's own
models; a table's metadata is built by PyIceberg (``new_table_metadata``), a commit's
requirements are checked with ``TableRequirement.validate`` (409 ``CommitFailedException``
when one fails) and its updates applied with ``update_table_metadata``, as PyIceberg's own
catalogs do before they write a metadata file.

What it does not do: it keeps every table's metadata in a dict and writes no metadata JSON
file (the ``metadata-location`` it answers names one that does not exist, as the catalog's
own server answers too); it reads no manifest, records nothing durably, checks no role and
serves one process. A table's location is ``WAREHOUSE/<namespace>/<table>``, where the client
writes its data files, manifests and manifest lists.
"""

from __future__ import annotations

import json
import sys
import uuid
from pathlib import Path
from typing import Any

import uvicorn
from fastapi import FastAPI, Request
from fastapi.responses import Response
from pyiceberg.catalog.rest import CreateTableRequest, TableResponse
from pyiceberg.exceptions import CommitFailedException
from pyiceberg.partitioning import UNPARTITIONED_PARTITION_SPEC
from pyiceberg.table import CommitTableRequest, CommitTableResponse
from pyiceberg.table.metadata import TableMetadata, new_table_metadata
from pyiceberg.table.sorting import UNSORTED_SORT_ORDER
from pyiceberg.table.update import update_table_metadata
from pyiceberg.typedef import IcebergBaseModel

NAMESPACE_SEPARATOR = "\x1f"
"""PyIceberg's default separator of namespace levels in a path."""


def _json(body: IcebergBaseModel | dict[str, Any]) -> Response:
    text = body.model_dump_json() if isinstance(body, IcebergBaseModel) else json.dumps(body)
    return Response(text, media_type="application/json")


def _error(status: int, kind: str, message: str) -> Response:
    body = {"error": {"message": message, "type": kind, "code": status}}
    return Response(json.dumps(body), status_code=status, media_type="application/json")


class Tables:
    """The namespaces and each table's current metadata, in memory."""

    def __init__(self, warehouse: str) -> None:
        """Keep tables created without a location under ``warehouse``."""
        self.warehouse = warehouse
        self.namespaces: set[tuple[str, ...]] = set()
        self.metadata: dict[tuple[tuple[str, ...], str], TableMetadata] = {}
        self.versions: dict[tuple[tuple[str, ...], str], int] = {}

    def location_of(self, key: tuple[tuple[str, ...], str]) -> str:
        """Return the metadata location answered for the table's current version."""
        metadata = self.metadata[key]
        return f"{metadata.location}/metadata/{self.versions[key]:05d}-bare.metadata.json"


def bare_app(warehouse: str) -> FastAPI:
    """Return the bare Iceberg REST app, its tables under ``warehouse``."""
    app = FastAPI()
    tables = Tables(warehouse)

    def namespace_of(path: str) -> tuple[str, ...]:
        return tuple(path.split(NAMESPACE_SEPARATOR))

    @app.get("/v1/config")
    async def config() -> Response:
        return _json({"defaults": {}, "overrides": {}})

    @app.get("/v1/namespaces")
    async def list_namespaces() -> Response:
        names = [list(n) for n in sorted(tables.namespaces)]
        return _json({"namespaces": names})

    @app.post("/v1/namespaces")
    async def create_namespace(request: Request) -> Response:
        body = await request.json()
        namespace = tuple(body["namespace"])
        if namespace in tables.namespaces:
            return _error(409, "AlreadyExistsException", f"namespace {namespace} exists")
        tables.namespaces.add(namespace)
        return _json({"namespace": list(namespace), "properties": {}})

    @app.get("/v1/namespaces/{namespace}")
    async def load_namespace(namespace: str) -> Response:
        if namespace_of(namespace) not in tables.namespaces:
            return _error(404, "NoSuchNamespaceException", f"no namespace {namespace}")
        return _json({"namespace": list(namespace_of(namespace)), "properties": {}})

    @app.post("/v1/namespaces/{namespace}/tables")
    async def create_table(namespace: str, request: Request) -> Response:
        # PyIceberg leaves out the fields it sends as None, though its model requires them.
        optional = {"location": None, "partition-spec": None, "write-order": None}
        body = CreateTableRequest.model_validate({**optional, **await request.json()})
        key = (namespace_of(namespace), body.name)
        if key[0] not in tables.namespaces:
            return _error(404, "NoSuchNamespaceException", f"no namespace {namespace}")
        if key in tables.metadata:
            return _error(409, "AlreadyExistsException", f"table {body.name} exists")
        location = body.location or str(Path(tables.warehouse, *key[0], body.name))
        tables.metadata[key] = new_table_metadata(
            body.table_schema,
            body.partition_spec or UNPARTITIONED_PARTITION_SPEC,
            body.write_order or UNSORTED_SORT_ORDER,
            location,
            dict(body.properties),
            uuid.uuid4(),
        )
        tables.versions[key] = 0
        return _json(
            TableResponse(metadata_location=tables.location_of(key), metadata=tables.metadata[key])
        )

    @app.get("/v1/namespaces/{namespace}/tables/{table}")
    async def load_table(namespace: str, table: str) -> Response:
        key = (namespace_of(namespace), table)
        if key not in tables.metadata:
            return _error(404, "NoSuchTableException", f"no table {table}")
        return _json(
            TableResponse(metadata_location=tables.location_of(key), metadata=tables.metadata[key])
        )

    @app.post("/v1/namespaces/{namespace}/tables/{table}")
    async def commit_table(namespace: str, table: str, request: Request) -> Response:
        body = CommitTableRequest.model_validate_json(await request.body())
        key = (namespace_of(namespace), table)
        if key not in tables.metadata:
            return _error(404, "NoSuchTableException", f"no table {table}")
        current = tables.metadata[key]
        try:
            for requirement in body.requirements:
                requirement.validate(current)
        except CommitFailedException as e:
            return _error(409, "CommitFailedException", str(e))
        # No await between the check and the swap: one event loop, so the commit is atomic.
        tables.metadata[key] = update_table_metadata(current, body.updates)
        tables.versions[key] += 1
        return _json(
            CommitTableResponse(
                metadata_location=tables.location_of(key), metadata=tables.metadata[key]
            )
        )

    return app


def main() -> None:
    """Serve the bare catalog on ``127.0.0.1:PORT`` with its tables under ``WAREHOUSE``."""
    port, warehouse = int(sys.argv[1]), sys.argv[2]
    app = bare_app(warehouse)
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning", access_log=False)


if __name__ == "__main__":
    main()
