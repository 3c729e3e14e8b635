"""SQL DDL → catalog commands: ``parse_sql`` turns statements into ``CatalogCommand``s.

``tokens`` reads the text, ``statements`` splits and dispatches it, ``tables``, ``columns``,
``nested_alter``, ``zones``, ``views`` and ``grants`` translate each kind of statement,
``nodes`` holds helpers over the parsed tree. ``show_grants`` reads ``SHOW GRANTS``, a read
that is no command. Nothing here speaks HTTP: the routes call ``parse_sql`` and turn its
errors into answers.

May import: sqlglot, catalog.
"""

from api.sql.grants import ShowGrants, show_grants
from api.sql.statements import parse_script, parse_sql, refused_statement

__all__ = ["ShowGrants", "parse_script", "parse_sql", "refused_statement", "show_grants"]
