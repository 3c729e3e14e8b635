"""The catalog's REST API, one subpackage per job.

- ``api.server``: the server (FastAPI app, routes, middleware, tokens, the browser's files);
- ``api.iceberg``: the Iceberg REST protocol, a sub-application the server mounts;
- ``api.sql``: SQL DDL → catalog commands;
- ``api.client``: the Python client (sync and async), installable alone (``client`` extra);
- ``api.cli``: the ``catalog`` command line, over the client;
- ``api.wire``: what server and client share (bodies, roles, error codes).

This module imports nothing, so importing the client loads no server. The packages may
import catalog, schemasync and updatelog (the client: only the catalog's models); nothing
outside ``api`` imports it but ``spark`` (the client).
"""
