"""A location asked for a table: where it may be, checked against the catalog it joins.

A table's location is the folder of its files; the catalog records each file by its path in
that folder, and its data expiry deletes the folder once the table is dropped. So a location
an engine asks for (a create's ``location``, ``set-location``, a registered table's) is
honoured only when the catalog can own it:

- a local path or a ``file:`` URI (``file:/p``, ``file:///p``), absolute, naming no ``.`` or
  ``..``; any other scheme is refused;
- inside the cluster's warehouse, and not the warehouse itself;
- not the catalog's ``metadata/`` folder nor inside it (the tables' metadata files);
- not a warehouse folder ``table_<n>`` (nor inside one) whose id the catalog has not given out
  yet: the table that gets that id will live there;
- not the location of another table of the catalog, nor inside one, nor holding one: two
  tables never share a file, and dropping one never deletes the other's.

The last rule reads every table's location: a create or move that names a location costs
O(tables); one that names none checks nothing.
"""

from __future__ import annotations

import os
import re
from pathlib import PurePosixPath

from catalog.catalog import Catalog
from catalog.data.warehouse import METADATA_FOLDER, local_folder
from catalog.errors import ValidationError

_TABLE_FOLDER = re.compile(r"^table_(\d+)$")


def _inside(path: PurePosixPath, folder: PurePosixPath) -> bool:
    return path == folder or folder in path.parents


def overlaps(a: str, b: str) -> bool:
    """Return whether two folders are one, or one holds the other."""
    left, right = PurePosixPath(a), PurePosixPath(b)
    return _inside(left, right) or _inside(right, left)


def table_locations(cat: Catalog) -> list[str]:
    """Return the locations the tables of ``cat`` record (reading every table: O(tables))."""
    return [local_folder(t.location) for t in cat.tables() if t.location is not None]


def checked_location(
    cat: Catalog, warehouse: str | None, location: str, table_id: int, name: str
) -> str:
    """Return the location table ``table_id`` records for ``location`` (see the module doc).

    It is kept as asked (a path or a ``file:`` URI, less a trailing slash), so engines read
    back the location they gave.

    Args:
        cat: the catalog the table is created or moved in (the batch's, so far).
        warehouse: the cluster's warehouse (None: it has none, and no location is honoured).
        location: the location asked for.
        table_id: the table's id (its own folder and location are its to keep).
        name: the table's name, for messages.

    Raises:
        ValidationError: the location breaks a rule of the module doc; the message names it.
    """
    if warehouse is None:
        raise ValidationError(
            f"table {name}: the cluster has no warehouse, so it honours no location"
        )
    folder = PurePosixPath(local_folder(location))
    root = PurePosixPath(os.path.normpath(warehouse))
    if folder == root or root not in folder.parents:
        raise ValidationError(
            f"table {name}: location {location} is not inside the warehouse {root}; a table's "
            "location is a folder of the warehouse"
        )
    top = folder.relative_to(root).parts[0]
    if top == METADATA_FOLDER:
        raise ValidationError(
            f"table {name}: location {location} is in the catalog's metadata folder "
            f"{root / METADATA_FOLDER}, which holds the tables' metadata files"
        )
    reserved = _TABLE_FOLDER.match(top)
    own = folder == root / f"table_{table_id}"
    if reserved is not None and int(reserved.group(1)) >= cat.object_id_gen and not own:
        raise ValidationError(
            f"table {name}: location {location} is in {root / top}, the folder of the "
            f"table that gets id {reserved.group(1)}"
        )
    for other in cat.tables():
        if other.id == table_id or other.location is None:
            continue
        if overlaps(str(folder), local_folder(other.location)):
            raise ValidationError(
                f"table {name}: location {location} overlaps the location "
                f"{other.location} of table {other.name}; each table has a folder of its own"
            )
    return location.rstrip("/")
