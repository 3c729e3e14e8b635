"""The data plane's records in the catalog: data commits and what keeps them.

Owns: the data commits of tables (``files``: their stored form and the merge rule; ``log``:
their compare-and-set records over the update log's store; ``keys``: where they are kept;
``group``: several tables' commits in one transaction; ``cache``: the commits a node has read;
``commits``: ``DataCommits``, the node's entry point), their ``expiry`` at compaction, the
``warehouse`` layout of table folders, the Iceberg table identity rules
(``iceberg_identity``: snapshot ids, sequence numbers, table uuids) and the Iceberg table
state the catalog keeps per table (``iceberg_table``: partition specs, sort orders,
properties, column docs, format version).

May import: the DDL core of ``catalog`` (descriptors, errors, ``CatalogService``), schemasync,
updatelog. Never pyiceberg (the Iceberg protocol is ``api/iceberg``'s), never api or spark.
"""
