"""Spark data plane: schemas at a timestamp and the ``catalog`` PySpark data source.

May import: catalog (read side), schemasync, api (client). Nothing imports ``spark``.
"""
