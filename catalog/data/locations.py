"""A location asked for a table: where it may be, checked against the catalog it joins.

A table's location is the folder of its files; the catalog records each file by its path in
that folder, and its data expiry deletes the folder once the table is dropped. So a location
an engine asks for (a create's ``location``, ``set-location``, a registered table's) is
honoured only when the catalog can own it:

- a local path or a ``file:`` URI (``file:/p``, ``file:///p``), or an S3 URI
  (``s3://bucket/p``), absolute, naming no ``.`` or ``..``; any other scheme is refused;
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

import re

from catalog.catalog import Catalog
from catalog.data.warehouse import METADATA_FOLDER, folder_of, inside, overlaps
from catalog.errors import ValidationError

_TABLE_FOLDER = re.compile(r"^table_(\d+)$")


def table_locations(cat: Catalog) -> list[str]:
    """Return the folders the tables of ``cat`` record (reading every table: O(tables))."""
    return [folder_of(t.location) for t in cat.tables() if t.location is not None]


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
    folder = folder_of(location)
    root = folder_of(warehouse)
    if not inside(folder, root):
        raise ValidationError(
            f"table {name}: location {location} is not inside the warehouse {root}; a table's "
            "location is a folder of the warehouse"
        )
    top = folder[len(root) + 1 :].split("/")[0]
    if top == METADATA_FOLDER:
        raise ValidationError(
            f"table {name}: location {location} is in the catalog's metadata folder "
            f"{root}/{METADATA_FOLDER}, which holds the tables' metadata files"
        )
    reserved = _TABLE_FOLDER.match(top)
    own = folder == f"{root}/table_{table_id}"
    if reserved is not None and int(reserved.group(1)) >= cat.object_id_gen and not own:
        raise ValidationError(
            f"table {name}: location {location} is in {root}/{top}, the folder of the "
            f"table that gets id {reserved.group(1)}"
        )
    for other in cat.tables():
        if other.id == table_id or other.location is None:
            continue
        if overlaps(folder, folder_of(other.location)):
            raise ValidationError(
                f"table {name}: location {location} overlaps the location "
                f"{other.location} of table {other.name}; each table has a folder of its own"
            )
    return location.rstrip("/")


_held: dict[int, tuple[Catalog, dict[str, int]]] = {}


def _recorded(cat: Catalog) -> dict[str, int]:
    """Return the folders the tables of ``cat`` record, by folder (remembered per catalog)."""
    kept = _held.get(id(cat))
    if kept is not None and kept[0] is cat:
        return kept[1]
    folders = {folder_of(t.location): t.id for t in cat.tables() if t.location is not None}
    if len(_held) >= 16:
        _held.clear()
    _held[id(cat)] = (cat, folders)
    return folders


def table_holding(cat: Catalog, warehouse: str, path: str) -> int | None:
    """Return the id of the table of ``cat`` whose folders hold ``path`` (None: no table's).

    A table's folders are its location, its warehouse folder ``table_<id>`` and its folder of
    metadata files ``metadata/table_<id>``. Looking one up reads every table's location once
    per catalog version, then walks up the path's folders.
    """
    root = folder_of(warehouse)
    if inside(path, root):
        parts = path[len(root) + 1 :].split("/")
        named = parts[1] if parts[0] == METADATA_FOLDER and len(parts) > 1 else parts[0]
        own = _TABLE_FOLDER.match(named)
        if own is not None and cat.has_table(int(own.group(1))):
            return int(own.group(1))
    recorded = _recorded(cat)
    folder = path
    while "/" in folder.removeprefix("s3://"):
        if folder in recorded:
            return recorded[folder]
        folder = folder.rpartition("/")[0]
    return recorded.get(folder)
