"""The catalog server: one node behind the REST API (FastAPI).

Owns the app (``app``), its settings (``config``), token checks (``auth``, ``signing_keys``),
problem+json answers (``errors``), the one way a request runs a batch (``execution``),
metrics, admission slots, the per-request checks, the ASGI ``middleware`` and the REST
``routes``, and the catalog browser's static files (``ui/``). The Iceberg REST protocol is
its own sub-application (``api.iceberg``), mounted by ``app``.

May import: catalog, schemasync, updatelog, api.wire, api.sql, api.iceberg (to mount it).
Imported by the Iceberg protocol (execution, auth, errors; never the routes) and by the CLI's
``serve`` and admin commands.
"""
