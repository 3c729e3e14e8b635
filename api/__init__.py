"""REST API, Python client and the ``catalog`` command line.

May import: catalog, schemasync, updatelog. Nothing imports ``api``.
"""
