"""How a node keeps catalog versions in memory: storage internals of ``Catalog``.

Owns: ``RelationStore`` (``relation_store``: tables and indexes of every sealed version, as
bytes shared by all of them), its ``records`` and ``relations`` (a version's reads over it),
``DescriptorCache`` (decoded descriptors, bounded), ``StampedCounts`` (``counts``) and
``Namespaces`` (schemas, zones, system views by id and name).

May import: the DDL core's descriptors, errors and model, and the stored form
(``catalog.wire``); nothing of the node runtime or of ``catalog.data``. Never api or spark.
"""
