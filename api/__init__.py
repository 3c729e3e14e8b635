"""REST API, Python client and the ``catalog`` command line (arrives with the REST issue).

May import: catalog, schemasync, updatelog. Nothing imports ``api``.
"""
