"""The Apache Iceberg REST catalog protocol over the catalog's DDL, served at ``/iceberg/v1``.

Namespaces are schemas, tables are tables; a table's Iceberg metadata is projected from its
descriptor (field ids are column ids) and its schema changes become catalog commands. No
data: a table's files go through the Spark source. Protocol bodies are this package's own
pydantic models, so the server does not need PyIceberg.

May import: api (its errors, auth and route helpers), catalog, schemasync, updatelog.
Nothing but ``api.app`` imports it.
"""
