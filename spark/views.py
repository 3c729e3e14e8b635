r"""The catalog's tables in Spark SQL, every one pinned to one timestamp: ``register_views``.

::

    ts = register_views(spark, "http://127.0.0.1:8000", schemas=["PUBLIC"])
    spark.sql("SELECT u.NAME, count(*) FROM PUBLIC.EVENTS e JOIN PUBLIC.USERS u "
              "ON e.USER_ID = u.ID GROUP BY u.NAME")

Each table becomes a view ``schema.table`` in Spark's session catalog (a database per schema,
names exact as in the catalog: quote them in SQL with backticks when they are not upper case).
A view reads exactly the Parquet files visible at the pinned timestamp that are rows of the
table then (``table_rows``: none written before a replace that made columns required), with
the table's columns at that timestamp: files written before a column was renamed, widened or
added are read by the names they were written with and cast, and a column they lack is its
default (or NULL). A STRUCT, ARRAY or MAP column is rebuilt field by field the same way (a
struct's fields by the names the file has, an array's elements and a map's values through
``transform``), so a field added, dropped, renamed or widened inside it reads as in the
catalog. The views read with Spark's own Parquet reader, so Spark prunes columns and pushes
filters into the files itself. A view registered again at another timestamp replaces it.

That reader cannot read TIME and UUID as files hold them (Iceberg's ``time`` and ``uuid``, the
Spark source's and PyIceberg's encoding): with Spark's defaults a TIME(MICROS) column fails
with ``UNSUPPORTED_TIME_TYPE``, and a UUID column with ``PARQUET_TYPE_ILLEGAL`` whatever the
settings. It fails on such a column even when the query leaves it out, and a file may hold a
column that was dropped since. So a table that has a TIME or UUID column, or whose visible
files were written with one, is refused before anything is registered: read it with
``spark.read.format("catalog")``, which reads every encoding. So is a table with rows an engine
deleted by position (merge-on-read delete files), which Spark's reader would not leave out.
A TIME or UUID field inside a nested column counts as such a column.
The views of a warehouse on S3 read ``s3a://`` URIs: the session needs Hadoop's S3A
(``hadoop-aws``) and keys of its own; ``spark.read.format("catalog")`` needs neither.
"""

from __future__ import annotations

import math
import re
from collections import defaultdict
from collections.abc import Iterable, Sequence
from pathlib import PurePosixPath
from typing import Any

from catalog.catalog import Catalog
from catalog.column_types import ColumnType
from catalog.data.files import DataCommit, rows_and_deletes, table_rows
from catalog.data.warehouse import S3, data_folder, on_s3
from catalog.descriptors import (
    ColumnDescriptor,
    SchemaDescriptor,
    TableDescriptor,
    TableVersion,
)
from catalog.descriptors.nested import path_words, walk
from catalog.descriptors.schemas import SYSTEM_SCHEMAS
from catalog.errors import ValidationError
from catalog.identifiers import quote_name
from spark.schema import AsOf, parse_as_of
from spark.source import client_of
from spark.types import default_scalar, spark_type


def quoted(name: str) -> str:
    """Return ``name`` as a Spark SQL identifier (backticks, doubled inside)."""
    return "`" + name.replace("`", "``") + "`"


def _string(text: str) -> str:
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


def sql_type(column: ColumnDescriptor) -> str:
    """Return the Spark SQL type of a column, its nested fields' names quoted."""
    if column.type is ColumnType.STRUCT:
        fields = ", ".join(f"{quoted(f.name)}: {sql_type(f)}" for f in column.fields)
        return f"STRUCT<{fields}>"
    if column.type is ColumnType.ARRAY:
        return f"ARRAY<{sql_type(column.fields[0])}>"
    if column.type is ColumnType.MAP:
        key, value = column.fields
        return f"MAP<{sql_type(key)}, {sql_type(value)}>"
    return str(spark_type(column).simpleString())


def _read_as(old: ColumnDescriptor, new: ColumnDescriptor, expression: str, depth: int = 0) -> str:
    """Return Spark SQL reading ``expression`` (``old``'s values in a file) as column ``new``.

    Nested values are rebuilt by field id: a struct field the file lacks is NULL, a renamed
    one is read by its old name; array elements and map values through lambdas (named by
    depth, so an inner one never hides an outer one).
    """
    if new.type is ColumnType.STRUCT:
        by_id = {f.id: f for f in old.fields}
        parts = []
        for f in new.fields:
            was = by_id.get(f.id)
            inner = (
                f"CAST(NULL AS {sql_type(f)})"
                if was is None
                else _read_as(was, f, f"{expression}.{quoted(was.name)}", depth + 1)
            )
            parts.append(f"{_string(f.name)}, {inner}")
        return f"IF({expression} IS NULL, NULL, named_struct({', '.join(parts)}))"
    if new.type is ColumnType.ARRAY:
        x = f"x{depth}"
        element = _read_as(old.fields[0], new.fields[0], x, depth + 1)
        return f"transform({expression}, {x} -> {element})"
    if new.type is ColumnType.MAP:
        k, v = f"k{depth}", f"v{depth}"  # a map's key never changes
        value = _read_as(old.fields[1], new.fields[1], v, depth + 1)
        return f"transform_values({expression}, ({k}, {v}) -> {value})"
    return f"CAST({expression} AS {sql_type(new)})"


def _literal(column: ColumnDescriptor) -> str:
    """Return the column's constant default as a Spark SQL expression of its type (or NULL)."""
    value: Any = column.default
    target = sql_type(column)
    if value is None:
        return f"CAST(NULL AS {target})"
    if column.type is ColumnType.BYTES:
        return f"X{_string(str(value))}"
    if column.type is ColumnType.TIME:  # microseconds since midnight
        return f"CAST({default_scalar(column)} AS {target})"
    if isinstance(value, bool):
        return f"CAST({'true' if value else 'false'} AS {target})"
    if isinstance(value, int):
        return f"CAST({value} AS {target})"
    if isinstance(value, float):
        text = (
            repr(value)
            if math.isfinite(value)
            else {"nan": "NaN", "inf": "Infinity"}.get(repr(value), "-Infinity")
        )
        return f"CAST({_string(text)} AS {target})"
    return f"CAST({_string(str(value))} AS {target})"


def _glob_part(names: Iterable[str]) -> str:
    ordered = sorted(names)
    return ordered[0] if len(ordered) == 1 else "{" + ",".join(ordered) + "}"


def _select(
    columns: Sequence[ColumnDescriptor], written: TableVersion, folder: str, files: list[str]
) -> list[str]:
    """Return one SELECT per folder of ``files`` (written with ``written``'s columns)."""
    in_file = {c.id: c for c in written.columns}
    items = []
    for column in columns:
        old = in_file.get(column.id)
        if old is None:
            items.append(f"{_literal(column)} AS {quoted(column.name)}")
        else:
            items.append(f"{_read_as(old, column, quoted(old.name))} AS {quoted(column.name)}")
    by_folder: dict[str, list[str]] = defaultdict(list)
    for path in files:
        relative = PurePosixPath(path)
        by_folder[str(relative.parent)].append(relative.name)
    selects = []
    for parent, names in sorted(by_folder.items()):
        # A glob names the files of one folder exactly: braces within one path part.
        where = folder if parent == "." else f"{folder}/{parent}"
        pattern = f"{_spark_uri(where)}/{_glob_part(names)}"
        selects.append(f"SELECT {', '.join(items)} FROM parquet.{quoted(pattern)}")
    return selects


def _spark_uri(folder: str) -> str:
    """Return a folder as Spark's Parquet reader names it (S3 through Hadoop's S3A)."""
    return "s3a://" + folder.removeprefix(S3) if on_s3(folder) else f"file://{folder}"


def view_sql(
    table: TableDescriptor,
    history: Sequence[TableVersion],
    commits: Sequence[DataCommit],
    folder: str,
) -> str:
    """Return the query of the view of ``table`` that reads exactly the files of ``commits``.

    Args:
        table: the table at the pinned moment (its current columns are the view's).
        history: its schema versions up to then (the columns each file was written with).
        commits: the data commits visible then.
        folder: the table's data folder.
    """
    columns = table.columns
    versions = {v.version: v for v in (*history, table.versions[-1])}
    files: dict[int, list[str]] = defaultdict(list)
    for commit in commits:
        for f in commit.files:
            files[commit.schema_version_of(f)].append(f.path)
    selects = [
        select
        for schema_version, paths in sorted(files.items())
        if paths
        for select in _select(columns, versions[schema_version], folder, paths)
    ]
    if not selects:
        items = ", ".join(f"CAST(NULL AS {sql_type(c)}) AS {quoted(c.name)}" for c in columns)
        return f"SELECT * FROM (SELECT {items}) WHERE false"
    return "\nUNION ALL\n".join(selects)


def register_views(
    spark: Any,
    catalog_url: str | None = None,
    *,
    schemas: Sequence[str] | None = None,
    as_of: AsOf = None,
    token: str | None = None,
    warehouse: str | None = None,
) -> int:
    """Make the catalog's tables queryable in Spark SQL as of one timestamp; return it.

    Args:
        spark: the Spark session.
        catalog_url: the catalog's base URL(s), comma-separated (default ``$CATALOG_URL``
            or http://127.0.0.1:8000).
        schemas: the schemas whose tables to register, by exact name (default: every
            schema but the system ones).
        as_of: the moment to pin: a hybrid timestamp, ``"version=N"``, an RFC 3339 time, or
            None (now).
        token: a bearer token, when the server checks them.
        warehouse: the warehouse of tables that record no location.

    Returns:
        The hybrid timestamp every view is pinned to.

    Raises:
        CatalogApiError: the catalog refused a read (a bad timestamp).
        ValueError: a schema not in the catalog, or a table Spark's session catalog cannot
            name (letters, digits and _ only, regardless of case); nothing is registered.
        ValidationError: a table with a TIME or UUID column (see above), named with the
            column, or with position delete files; nothing is registered.
    """
    options = {"catalog_url": catalog_url or "", "token": token or ""}
    databases: list[str] = []
    views: list[tuple[str, str, str]] = []
    unreadable: list[str] = []
    deleted: list[str] = []
    with client_of(options) as client:
        pin = parse_as_of(as_of)
        if pin.version is not None:
            cat = client.catalog(version=pin.version)
            ts = cat.activation_ts
        else:
            ts = client.now() if pin.ts is None else pin.ts
            cat = client.catalog(at=ts)
        for schema, tables in _targets(cat, schemas):
            databases.append(schema.name)
            for table in tables:
                history = (
                    client.schema_versions(quote_name(schema.name), quote_name(table.name), at=ts)
                    if table.schema_version > 1
                    else []
                )
                visible = client.data_commits(table.id, at=ts).commits
                commits = table_rows(visible, table.rows_from)
                name = f"{quote_name(schema.name)}.{quote_name(table.name)}"
                unreadable.extend(
                    f"{name} (column {column.name}, {column.type})"
                    for column in _time_or_uuid(table, history, commits)
                )
                if rows_and_deletes(commits)[1]:
                    deleted.append(name)
                query = view_sql(table, history, commits, data_folder(table, warehouse))
                views.append((schema.name, table.name, query))
    if deleted:
        raise ValidationError(
            "Spark's own Parquet reader does not apply position delete files, and these "
            f"tables have rows deleted by them (merge-on-read): {', '.join(deleted)}; read "
            'them with spark.read.format("catalog").load(...), or compact them (Iceberg\'s '
            "rewrite_data_files), or register the other schemas; nothing was registered"
        )
    if unreadable:
        raise ValidationError(
            "Spark's own Parquet reader cannot read the TIME and UUID columns of these tables "
            f"as their files hold them (Iceberg's time and uuid): {', '.join(unreadable)}; "
            'read them with spark.read.format("catalog").load(...), or register the other '
            "schemas; nothing was registered"
        )
    for database in databases:
        spark.sql(f"CREATE DATABASE IF NOT EXISTS {quoted(database)}")
    for schema_name, table_name, query in views:
        spark.sql(f"CREATE OR REPLACE VIEW {quoted(schema_name)}.{quoted(table_name)} AS {query}")
    return ts


_NOT_NATIVE = (ColumnType.TIME, ColumnType.UUID)
"""The types whose encoding in files Spark's own Parquet reader cannot read."""


def _time_or_uuid(
    table: TableDescriptor, history: Sequence[TableVersion], commits: Sequence[DataCommit]
) -> list[ColumnDescriptor]:
    """Return the TIME and UUID columns or nested fields of ``table`` or of its files' versions.

    A nested field is returned named by its path.
    """
    written = {commit.schema_version_of(f) for commit in commits for f in commit.files}
    found = {f.id: (path, f) for path, f in walk(table.columns)}
    for version in history:
        if version.version in written:
            found = {f.id: (path, f) for path, f in walk(version.columns)} | found
    return [
        f.model_copy(update={"name": path_words(path)})
        for path, f in found.values()
        if f.type in _NOT_NATIVE
    ]


_SPARK_NAME = re.compile(r"[A-Za-z0-9_]+")
"""The names Spark's session catalog takes for databases and tables (without regard to case)."""


def _targets(
    cat: Catalog, schemas: Sequence[str] | None
) -> list[tuple[SchemaDescriptor, list[TableDescriptor]]]:
    """Return the schemas to register with their tables; refuse names Spark cannot hold.

    Raises:
        ValueError: a schema is not in the catalog, or a name Spark's session catalog cannot
            hold (nothing is registered then).
    """
    if schemas is None:
        chosen = [s for s in cat.schemas() if s.name not in SYSTEM_SCHEMAS]
    else:
        missing = [name for name in schemas if cat.find_schema(name) is None]
        if missing:
            present = ", ".join(s.name for s in cat.schemas())
            raise ValueError(
                f"no schema {', '.join(missing)} in the catalog at version {cat.version} (it "
                f"has {present}; names are exact); nothing was registered"
            )
        chosen = [cat.schema(name) for name in schemas]
    targets = [(s, cat.schema_tables(s.id)) for s in chosen]
    seen: set[tuple[str, str]] = set()
    refused = []
    for schema, tables in targets:
        for table in tables:
            folded = (schema.name.lower(), table.name.lower())
            spark_name = _SPARK_NAME.fullmatch(schema.name) and _SPARK_NAME.fullmatch(table.name)
            if not spark_name or folded in seen:
                refused.append(f"{quote_name(schema.name)}.{quote_name(table.name)}")
            seen.add(folded)
    if refused:
        raise ValueError(
            "Spark's session catalog names schemas and tables with letters, digits and _ only, "
            f"regardless of case, so these tables cannot be views: {', '.join(refused)}; "
            'read them with spark.read.format("catalog").load(...) or register the other '
            "schemas; nothing was registered"
        )
    return targets


__all__ = ["quoted", "register_views", "sql_type", "view_sql"]
