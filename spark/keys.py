"""The primary key of a write: no key twice within the write, none the table already holds.

The driver checks a write's keys before it commits them (``spark.source.CatalogWriter``). It
reads the key columns of the write's own files and refuses keys that repeat; for an append it
then reads the key columns of the table's visible files that may hold a written key (a file
whose key bounds, from the column statistics of its data commit, hold none is not read) and
refuses keys the table holds. The check is as of the table's latest data commit, and the
commit goes through only if that commit is still the latest, so a writer that lost a race
checks again against what came in between (see ``KeyCheck``).
"""

from __future__ import annotations

import datetime as dt
from bisect import bisect_left
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from catalog.data.files import DataFile
from catalog.descriptors import ColumnDescriptor
from catalog.errors import ErrorCode, ValidationError
from spark.deletes import DeletedRows, without_deleted
from spark.evolution import column_ids, project
from spark.pruning import Bounds
from spark.statistics import bounds_of_file, comparable_values
from spark.table_folder import TableFolder
from spark.types import arrow_type

MAX_NAMED_KEYS = 5
"""How many offending keys a refusal names."""


class PrimaryKeyViolationError(ValidationError):
    """Rows of a write repeat a key, within the write or of rows the table holds.

    Attributes:
        keys: a few of the offending keys (at most ``MAX_NAMED_KEYS``), each column → value.
    """

    default_code = ErrorCode.PRIMARY_KEY_VIOLATION

    def __init__(self, message: str, keys: Sequence[Mapping[str, Any]]) -> None:
        super().__init__(message)
        self.keys = [dict(k) for k in keys]


def read_keys(
    folder: TableFolder,
    relative: str,
    key: Sequence[ColumnDescriptor],
    deleted: pa.Array | None = None,
) -> pa.Table:
    """Return the key columns of one data file as ``key`` has them (matched by column id).

    The rows at ``deleted`` positions (an engine's position deletes) are left out.
    """
    files, path = folder.file(relative)
    schema = pq.read_schema(path, filesystem=files)
    positions = column_ids(schema)
    names = [schema.field(positions[c.id]).name for c in key if c.id in positions]
    data = pq.read_table(path, columns=names, filesystem=files)
    return project(data if deleted is None else without_deleted(data, deleted), key)


def repeated_keys(keys: pa.Table) -> pa.Table:
    """Return the keys that occur more than once in ``keys``, each once."""
    names = keys.column_names
    counts = keys.group_by(names, use_threads=False).aggregate([([], "count_all")])
    return counts.filter(pc.greater(counts["count_all"], 1)).select(names)


def keys_held(keys: pa.Table, held: pa.Table) -> pa.Table:
    """Return the rows of ``keys`` whose key ``held`` holds too."""
    return keys.join(held, keys=keys.column_names, join_type="left semi", use_threads=False)


def _literal(value: Any) -> str:
    if isinstance(value, str):
        return "'" + value.replace("'", "''") + "'"
    if isinstance(value, bytes):
        return f"X'{value.hex().upper()}'"
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, dt.date | dt.datetime | dt.time):
        return f"'{value.isoformat()}'"
    return str(value)


def key_text(key: Mapping[str, Any]) -> str:
    """Return a key as a reader writes it: ``ID=7``, or ``(REGION='eu', ID=7)``."""
    parts = [f"{name}={_literal(value)}" for name, value in key.items()]
    return parts[0] if len(parts) == 1 else "(" + ", ".join(parts) + ")"


def keys_text(keys: Sequence[Mapping[str, Any]], more: bool) -> str:
    """Return a few keys for a message: ``ID=1, ID=2`` (``and more`` when ``more``)."""
    return ", ".join(key_text(k) for k in keys) + (" and more" if more else "")


class WrittenKeys:
    """A write's keys, each once, and per key column its values sorted for pruning.

    Args:
        keys: the keys (columns named as ``columns``), no key twice.
        columns: the key columns.
    """

    def __init__(self, keys: pa.Table, columns: Sequence[ColumnDescriptor]) -> None:
        self.keys = keys
        self.columns = tuple(columns)
        self._sorted = [comparable_values(c, keys.column(c.name)) for c in self.columns]

    def may_be_in(self, file: DataFile) -> bool:
        """Return False when ``file``'s statistics prove it holds none of the keys."""
        return all(
            _may_hold(values, bounds_of_file(file, column))
            for values, column in zip(self._sorted, self.columns, strict=True)
        )


def _may_hold(values: list[Any], bounds: Bounds | None) -> bool:
    if bounds is None:
        return True
    if bounds.nulls is not None and bounds.nulls >= bounds.rows:
        return False  # only nulls (or no rows): no key value
    try:
        start = 0 if bounds.lower is None else bisect_left(values, bounds.lower)
        return start < len(values) and (bounds.upper is None or values[start] <= bounds.upper)
    except TypeError:
        return True  # bounds of another kind than the values: never skip on doubt


class KeyCheck:
    """Checks a write's keys: within the write once, then against the table's files.

    ``table_files`` may run again after a lost race: files it read before (by path; a data
    file never changes) are not read again, so each round reads only what came in between.

    Args:
        folder: the table's folder in the warehouse.
        key: the key columns, as the write has them.
        table: the table's name, for messages.
    """

    def __init__(self, folder: TableFolder, key: Sequence[ColumnDescriptor], table: str) -> None:
        self.folder = folder
        self.key = tuple(key)
        self.table = table
        self._written: WrittenKeys | None = None
        self._checked: set[str] = set()

    def written_files(self, files: Sequence[DataFile]) -> None:
        """Read the keys of the write's ``files``; refuse keys that repeat among them.

        Raises:
            PrimaryKeyViolationError: a key occurs in more than one row of the write.
        """
        parts = [read_keys(self.folder, file.path, self.key) for file in files]
        keys = pa.concat_tables(parts) if parts else _no_keys(self.key)
        twice = repeated_keys(keys)
        if twice.num_rows:
            named = _first(twice, MAX_NAMED_KEYS)
            raise PrimaryKeyViolationError(
                f"{twice.num_rows} key(s) occur in more than one row of the write into "
                f"{self.table}: {keys_text(named, twice.num_rows > len(named))}. A primary key "
                "names one row: write one row per key. Nothing was committed.",
                named,
            )
        self._written = WrittenKeys(keys, self.key)

    def given_keys(self, keys: pa.Table) -> None:
        """Take ``keys`` (distinct, named as the key columns) as the write's keys: a delete's."""
        self._written = WrittenKeys(keys, self.key)

    @property
    def written(self) -> WrittenKeys:
        """The write's keys, once ``written_files`` read them."""
        if self._written is None:
            raise RuntimeError("KeyCheck.written_files must run first")
        return self._written

    def table_files(self, files: Iterable[DataFile], deleted: DeletedRows) -> None:
        """Refuse the write when the table's ``files`` hold one of its keys.

        ``deleted`` are the rows of the files an engine deleted by position.

        Raises:
            PrimaryKeyViolationError: the table holds a written key.
        """
        written = self.written
        found: list[dict[str, Any]] = []
        for file in files:
            if file.path in self._checked:
                continue
            if written.may_be_in(file):
                keys = read_keys(self.folder, file.path, self.key, deleted.get(file.path))
                held = keys_held(written.keys, keys)
                found.extend(k for k in _first(held, MAX_NAMED_KEYS + 1) if k not in found)
            self._checked.add(file.path)
            if len(found) > MAX_NAMED_KEYS:
                break
        if found:
            named = _in_order(found)[:MAX_NAMED_KEYS]
            raise PrimaryKeyViolationError(
                f"the table {self.table} already holds rows with key "
                f'{keys_text(named, len(found) > len(named))}. mode("append") adds rows '
                'whose keys the table does not hold yet (mode("overwrite") replaces every '
                "row). Nothing was committed.",
                named,
            )


def _first(keys: pa.Table, count: int) -> list[dict[str, Any]]:
    """Return the lowest ``count`` keys, so a message names the same keys every time."""
    ordered = keys.sort_by([(name, "ascending") for name in keys.column_names])
    rows: list[dict[str, Any]] = ordered.slice(0, count).to_pylist()
    return rows


def _in_order(keys: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return sorted(keys, key=lambda k: tuple(k.values()))


def _no_keys(key: Sequence[ColumnDescriptor]) -> pa.Table:
    return pa.table({c.name: pa.array([], type=arrow_type(c)) for c in key})
