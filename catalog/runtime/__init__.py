"""The node runtime: a running catalog node and what it needs beside the DDL core.

Owns: ``CatalogNode`` (``node``: opens the log, recovers, watches, compacts, closes), its
``NodeOptions`` (``options``), the node registry (``registry``, ``registry_entries``: each
node's lease-bound entry and its keys) and ``SyncCatalogNode``, the blocking facade for
callers without an event loop (``blocking``).

May import: the rest of ``catalog`` (core, data, storage), schemasync, updatelog. Never api or
spark.
"""
