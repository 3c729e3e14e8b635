"""Random DDL drawn against the current catalog: mostly valid, sometimes not.

Driven by a ``random.Random`` so the same generator serves hypothesis (``st.randoms()``) and
the multi-node stress tests. Commands pick existing objects from the catalog they are drawn
against, so long sequences keep exercising alters, renames, index lifecycles and drops.
"""

from __future__ import annotations

import random
from collections.abc import Callable

from catalog import Catalog, ColumnType, IndexStatus
from catalog import commands as c
from catalog.commands import CommandBase

_TYPES: list[tuple[ColumnType, dict[str, object]]] = [
    (ColumnType.BOOLEAN, {"default": True}),
    (ColumnType.INT8, {"default": 7}),
    (ColumnType.INT16, {}),
    (ColumnType.INT32, {"default": -5}),
    (ColumnType.INT64, {}),
    (ColumnType.FLOAT32, {"default": 1.5}),
    (ColumnType.FLOAT64, {}),
    (ColumnType.DECIMAL, {"precision": 10, "scale": 2, "default": "12.5"}),
    (ColumnType.STRING, {"length": 40, "default": "x"}),
    (ColumnType.BYTES, {"length": 16, "default": "00ff"}),
    (ColumnType.DATE, {"default": "2024-02-29"}),
    (ColumnType.TIME, {"precision": 3}),
    (ColumnType.TIMESTAMP, {"default": "2024-01-01T00:00:00"}),
    (ColumnType.TIMESTAMP_TZ, {}),
    (ColumnType.UUID, {}),
]

_NAMES = ["A", "B", "C", "D", "ORDERS", "ITEMS", "Users", "users", "T_1", "ÄÖ", "x y"]


def _name(rng: random.Random) -> str:
    return rng.choice(_NAMES) + str(rng.randrange(6))


def _column(rng: random.Random, name: str, *, nullable: bool = True) -> c.Column:
    ctype, params = rng.choice(_TYPES)
    if rng.random() < 0.5:
        params = {k: v for k, v in params.items() if k != "default"}
    return c.Column(name=name, type=ctype, nullable=nullable, **params)


def _schema_name(rng: random.Random, cat: Catalog) -> str:
    names = [s.name for s in cat.schemas() if s.name != "SYSTEM"]
    return rng.choice(names) if names and rng.random() < 0.95 else _name(rng)


def _table(rng: random.Random, cat: Catalog) -> tuple[str, str] | None:
    tables = cat.tables()
    if not tables:
        return None
    t = rng.choice(tables)
    return cat.schema_by_id(t.schema_id).name, t.name


def _create_table(rng: random.Random, cat: Catalog) -> CommandBase:
    names = rng.sample(["ID", "K2", "V1", "V2", "V3", "V4"], k=rng.randint(1, 5))
    pk = names[: rng.randint(1, max(1, len(names) - 1))]
    zones = [z.name for z in cat.zones()]
    return c.CreateTable(
        schema=_schema_name(rng, cat),
        name=_name(rng),
        columns=[_column(rng, n, nullable=n not in pk) for n in names],
        primary_key=pk,
        primary_key_kind=rng.choice(["hash", "sorted"]),
        colocation_columns=pk[:1] if rng.random() < 0.3 else None,
        zone=rng.choice(zones) if zones and rng.random() < 0.3 else None,
        if_not_exists=rng.random() < 0.2,
    )


def _alter_table(rng: random.Random, cat: Catalog) -> CommandBase:
    found = _table(rng, cat)
    if found is None:
        return _create_table(rng, cat)
    schema, name = found
    table = cat.table(schema, name)
    cols = [col.name for col in table.columns]
    kind = rng.randrange(6)
    if kind == 0:
        return c.AddColumns(schema=schema, table=name, columns=[_column(rng, _name(rng))])
    if kind == 1:
        return c.DropColumns(schema=schema, table=name, columns=[rng.choice(cols)])
    if kind == 2:
        col = table.column(rng.choice(cols))
        assert col is not None
        widen = {
            ColumnType.INT8: ColumnType.INT16,
            ColumnType.INT16: ColumnType.INT32,
            ColumnType.INT32: ColumnType.INT64,
            ColumnType.FLOAT32: ColumnType.FLOAT64,
        }
        if col.type in widen and rng.random() < 0.7:
            return c.AlterColumn(schema=schema, table=name, column=col.name, type=widen[col.type])
        if col.length is not None:
            return c.AlterColumn(schema=schema, table=name, column=col.name, length=col.length + 1)
        return c.AlterColumn(schema=schema, table=name, column=col.name, nullable=True)
    if kind == 3:
        return c.RenameTable(schema=schema, name=name, new_name=_name(rng))
    if kind == 4:
        return c.DropTable(schema=schema, name=name, if_exists=rng.random() < 0.2)
    return c.CreateIndex(
        schema=schema,
        table=name,
        name=_name(rng) + "_IX",
        columns=rng.sample(cols, k=rng.randint(1, len(cols))),
        kind=rng.choice(["hash", "sorted"]),
        unique=rng.random() < 0.2,
        if_not_exists=rng.random() < 0.2,
    )


def _index_op(rng: random.Random, cat: Catalog) -> CommandBase:
    indexes = cat.indexes()
    if not indexes:
        return _alter_table(rng, cat)
    index = rng.choice(indexes)
    schema = cat.schema_by_id(index.schema_id).name
    by_status: dict[IndexStatus, Callable[[], CommandBase]] = {
        IndexStatus.REGISTERED: lambda: c.StartBuildingIndex(index_id=index.id),
        IndexStatus.BUILDING: lambda: c.MakeIndexAvailable(index_id=index.id),
        IndexStatus.STOPPING: lambda: c.RemoveIndex(index_id=index.id),
        IndexStatus.AVAILABLE: lambda: c.DropIndex(schema=schema, name=index.name),
    }
    if rng.random() < 0.15:
        return c.RenameIndex(schema=schema, name=index.name, new_name=_name(rng) + "_IX")
    if rng.random() < 0.1:  # the wrong lifecycle step: refused with INDEX_STATUS_CONFLICT
        return c.MakeIndexAvailable(index_id=index.id)
    return by_status[index.status]()


def _zone_op(rng: random.Random, cat: Catalog) -> CommandBase:
    zones = [z.name for z in cat.zones()]
    kind = rng.randrange(5)
    if kind == 0 or not zones:
        replicas = rng.randint(1, 5)
        return c.CreateZone(name="Z" + _name(rng), partitions=rng.randint(1, 64), replicas=replicas)
    zone = rng.choice(zones)
    if kind == 1:
        return c.AlterZone(name=zone, replicas=rng.randint(1, 7))
    if kind == 2:
        return c.RenameZone(name=zone, new_name="Z" + _name(rng))
    if kind == 3:
        return c.DropZone(name=zone, if_exists=True)
    return c.SetDefaultZone(name=zone)


def _schema_op(rng: random.Random, cat: Catalog) -> CommandBase:
    if rng.random() < 0.6:
        return c.CreateSchema(name="S" + _name(rng), if_not_exists=rng.random() < 0.3)
    return c.DropSchema(name=_schema_name(rng, cat), cascade=rng.random() < 0.7, if_exists=True)


def random_command(rng: random.Random, cat: Catalog) -> CommandBase:
    """Return one command drawn against ``cat``; it may be refused by ``prepare``."""
    roll = rng.random()
    if roll < 0.3:
        return _create_table(rng, cat)
    if roll < 0.6:
        return _alter_table(rng, cat)
    if roll < 0.8:
        return _index_op(rng, cat)
    if roll < 0.92:
        return _zone_op(rng, cat)
    return _schema_op(rng, cat)


def random_batch(rng: random.Random, cat: Catalog, max_size: int = 3) -> list[CommandBase]:
    """Return 1..max_size commands drawn against ``cat`` (later ones may fail validation)."""
    return [random_command(rng, cat) for _ in range(rng.randint(1, max_size))]
