"""SQL DDL → catalog commands: ``parse_sql`` turns statements into ``CatalogCommand``s.

``tokens`` reads the text, ``statements`` splits and dispatches it, ``tables``, ``columns`` and
``zones`` translate each kind of statement, ``nodes`` holds helpers over the parsed tree. Nothing
here speaks HTTP: the routes call ``parse_sql`` and turn its errors into answers.

May import: sqlglot, catalog.
"""

from api.sql.statements import parse_script, parse_sql, refused_statement

__all__ = ["parse_script", "parse_sql", "refused_statement"]
