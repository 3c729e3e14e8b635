"""The CREATE TABLE the catalog benchmarks issue: a realistic row of typical column types."""

from __future__ import annotations

from catalog import ColumnType
from catalog import commands as c


def create_command(name: str, *extra: c.Column) -> c.CreateTableCommand:
    """Return CREATE TABLE PUBLIC.``name`` with five typical columns, then ``extra``."""
    return c.CreateTable(
        schema="PUBLIC",
        name=name,
        columns=[
            c.Column(name="ID", type=ColumnType.INT64, nullable=False),
            c.Column(name="NAME", type=ColumnType.STRING, length=64),
            c.Column(name="AMOUNT", type=ColumnType.DECIMAL, precision=18, scale=2),
            c.Column(name="CREATED", type=ColumnType.TIMESTAMP),
            c.Column(name="ACTIVE", type=ColumnType.BOOLEAN, default=True),
            *extra,
        ],
        primary_key=["ID"],
    )
