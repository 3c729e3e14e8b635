"""The Apache Iceberg REST catalog protocol: a sub-application (``app``) served at ``/iceberg/v1``.

Namespaces are schemas, tables are tables; a table's Iceberg metadata is projected from its
descriptor (field ids are column ids) and its data commits (one snapshot each), its schema
changes become catalog commands, and a snapshot an Iceberg writer adds becomes one data
commit. Protocol bodies are this package's own pydantic models; a commit's requirements and
updates are one model per kind of the protocol (``requirements``, ``updates``), each checking,
recording or refusing itself. Manifests are read and written with PyIceberg's manifest
reader and writer (``manifests``).

It has its own error model (``errors``: every error, whatever raised it, in the protocol's
shape) and runs its batches through the server's ``api.server.execution``, as the DDL routes
do.

May import: api.server (execution, auth, errors, responses, request checks; never its
routes), api.wire, catalog, schemasync, updatelog, pyiceberg (its manifests only). Nothing
but ``api.server.app`` imports it.
"""
