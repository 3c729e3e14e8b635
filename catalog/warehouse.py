"""Where a table's data lives: the warehouse folder, and each table's folder in it.

Layout: ``<warehouse>/table_<id>/...``. A table re-created under the same name has a new id,
hence a new folder: it never sees the old files. The Spark source writes there, and the
Iceberg REST catalog gives it as each table's location.
"""

from __future__ import annotations

import os
from pathlib import Path

WAREHOUSE_ENV = "CATALOG_WAREHOUSE"
"""The environment variable naming the warehouse folder."""
DEFAULT_WAREHOUSE = "./warehouse"
"""The warehouse folder, relative to the working directory, when nothing names one."""


def warehouse_path(option: str | None) -> Path:
    """Return the warehouse folder, absolute: ``option``, $CATALOG_WAREHOUSE or ./warehouse."""
    return Path(option or os.environ.get(WAREHOUSE_ENV) or DEFAULT_WAREHOUSE).resolve()


def table_folder(warehouse: Path, table_id: int) -> Path:
    """Return the folder of table ``table_id``'s files."""
    return warehouse / f"table_{table_id}"
