"""The Apache Iceberg REST catalog protocol over the catalog, served at ``/iceberg/v1``.

Namespaces are schemas, tables are tables; a table's Iceberg metadata is projected from its
descriptor (field ids are column ids) and its data commits (one snapshot each), its schema
changes become catalog commands, and a snapshot an Iceberg writer adds becomes one data
commit. Protocol bodies are this package's own pydantic models; manifests are read and
written with PyIceberg's manifest reader and writer (``manifests``).

May import: api (its errors, auth and route helpers), catalog, schemasync, updatelog,
pyiceberg (its manifests only). Nothing but ``api.server.app`` imports it.
"""
