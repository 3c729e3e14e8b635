"""The data plane: what the catalog keeps of each table's data, such as its Iceberg state.

May import the catalog's models, errors and column types; nothing here imports ``api/``.
"""
