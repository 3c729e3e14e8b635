"""A server process for the REST benchmark: the catalog app, or a bare FastAPI endpoint.

``python -m bench.serve_api catalog|bare PORT STORE_URL``. The bare app answers the same
bytes the catalog app would for the table, precomputed, so the ratio measures what the
catalog adds (routing to the node, the lookup, serialisation), not the payload size.
"""

from __future__ import annotations

import sys

import uvicorn
from fastapi import FastAPI
from fastapi.responses import Response

from api.server.app import create_app
from api.server.config import ServerSettings


def bare_app(body: bytes) -> FastAPI:
    """Return a FastAPI app with one endpoint that answers ``body``."""
    app = FastAPI()

    @app.get("/v1/schemas/PUBLIC/tables/ORDERS")
    async def table() -> Response:
        return Response(body, media_type="application/json")

    return app


def main() -> None:
    mode, port, store = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    if mode == "bare":
        app = bare_app(open(store, "rb").read())  # noqa: SIM115 - read once at start
    else:
        settings = ServerSettings(
            store=store,
            node_name="bench",
            host="127.0.0.1",
            port=port,
            delay_ms=0,
            max_clock_skew_ms=0,
        )
        app = create_app(settings)
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning", access_log=False)


if __name__ == "__main__":
    main()
