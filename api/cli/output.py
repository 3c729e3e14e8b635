"""How the ``catalog`` command line prints: rich tables for people, JSON or YAML for scripts.

Every command hands over a ``View``: the JSON-ready data, and optionally the columns and rows
of its table form. ``-o json`` prints the data, ``-o yaml`` the same as YAML, ``-o table`` the
rows (or the data as a key/value table when a command has no rows).
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass, field
from typing import Any, TextIO

import yaml
from rich.console import Console
from rich.table import Table

from schemasync.clock import physical_of, rfc3339

FORMATS = ("table", "json", "yaml")


@dataclass
class View:
    """What a command shows.

    Attributes:
        data: the JSON-ready result (what ``-o json`` prints).
        columns: the table's column titles (``-o table``); none for a key/value table.
        rows: the table's rows, one string per column.
        title: the table's title.
        caption: a line under the table.
    """

    data: Any
    columns: list[str] = field(default_factory=list)
    rows: list[list[str]] = field(default_factory=list)
    title: str | None = None
    caption: str | None = None


def default_format(stream: TextIO) -> str:
    """Return ``table`` on a terminal, ``json`` otherwise (pipes, files, scripts)."""
    isatty = getattr(stream, "isatty", None)
    return "table" if isatty is not None and isatty() else "json"


def show(view: View, fmt: str, stream: TextIO | None = None) -> None:
    """Print ``view`` to ``stream`` (stdout by default) as ``fmt``."""
    out = stream or sys.stdout
    if fmt == "json":
        out.write(json.dumps(view.data, indent=2, ensure_ascii=False) + "\n")
    elif fmt == "yaml":
        out.write(yaml.safe_dump(view.data, sort_keys=False, allow_unicode=True))
    else:
        Console(file=out, soft_wrap=False).print(_table(view))
    out.flush()


def show_line(data: dict[str, Any], line: str, fmt: str, stream: TextIO | None = None) -> None:
    """Print one item of a stream: a JSON line, a YAML document, or ``line`` for people."""
    out = stream or sys.stdout
    if fmt == "json":
        out.write(json.dumps(data, ensure_ascii=False) + "\n")
    elif fmt == "yaml":
        out.write("---\n" + yaml.safe_dump(data, sort_keys=False, allow_unicode=True))
    else:
        Console(file=out, soft_wrap=True, highlight=False).print(line, markup=False)
    out.flush()


def _table(view: View) -> Table:
    table = Table(title=view.title, caption=view.caption)
    if view.columns:
        for column in view.columns:
            table.add_column(column)
        for row in view.rows:
            table.add_row(*row)
        return table
    table.add_column("KEY")
    table.add_column("VALUE")
    items = view.data.items() if isinstance(view.data, dict) else enumerate(view.data or [])
    for key, value in items:
        text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
        table.add_row(str(key), text)
    return table


def hlc_time(ts: int | None) -> str:
    """Return a hybrid timestamp's physical time, as UTC ISO 8601 (empty for None)."""
    return "" if ts is None else rfc3339(physical_of(ts))
