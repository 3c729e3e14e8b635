"""How a read's files become Spark input partitions: by bytes, as Spark plans its own files.

Spark's file sources pack files into partitions of at most ``maxSplitBytes = min(
maxPartitionBytes, max(openCostInBytes, total bytes / parallelism))``, each file counting its
size plus an opening cost, largest files first; a read of this source does the same with its
own options, so a small table is one task and a large one spreads over every core. A file is
never split. No files, no partitions (Spark then plans one empty task).
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from catalog.errors import ValidationError

DEFAULT_MAX_PARTITION_BYTES = 128 * 1024 * 1024
"""Spark's ``spark.sql.files.maxPartitionBytes`` default."""
DEFAULT_OPEN_COST_BYTES = 4 * 1024 * 1024
"""Spark's ``spark.sql.files.openCostInBytes`` default."""


@dataclass(frozen=True, slots=True)
class Packing:
    """How files are grouped into input partitions.

    Attributes:
        max_partition_bytes: the most bytes one partition reads (option
            ``max_partition_bytes``, default 128 MiB).
        open_cost_bytes: what opening a file costs, in bytes (``open_cost_bytes``, 4 MiB).
        parallelism: the tasks to spread a small read over (``parallelism``, default the
            planning machine's CPU count).
    """

    max_partition_bytes: int = DEFAULT_MAX_PARTITION_BYTES
    open_cost_bytes: int = DEFAULT_OPEN_COST_BYTES
    parallelism: int = 1

    @classmethod
    def of(cls, options: Mapping[str, str]) -> Packing:
        """Read the packing options of a read.

        Raises:
            ValidationError: an option that is not a positive whole number.
        """
        return cls(
            _positive(options, "max_partition_bytes", DEFAULT_MAX_PARTITION_BYTES),
            _positive(options, "open_cost_bytes", DEFAULT_OPEN_COST_BYTES),
            _positive(options, "parallelism", os.cpu_count() or 1),
        )

    def split_bytes(self, sizes: Sequence[int]) -> int:
        """Return the most bytes a partition of files of ``sizes`` reads."""
        total = sum(size + self.open_cost_bytes for size in sizes)
        return min(self.max_partition_bytes, max(self.open_cost_bytes, total // self.parallelism))

    def pack(self, files: Sequence[tuple[str, int]]) -> list[tuple[str, ...]]:
        """Group ``(path, size)`` files into partitions, largest first; return their paths."""
        limit = self.split_bytes([size for _, size in files])
        groups: list[tuple[str, ...]] = []
        current: list[str] = []
        filled = 0
        for path, size in sorted(files, key=lambda f: f[1], reverse=True):
            if current and filled + size > limit:
                groups.append(tuple(current))
                current, filled = [], 0
            current.append(path)
            filled += size + self.open_cost_bytes
        if current:
            groups.append(tuple(current))
        return groups


def _positive(options: Mapping[str, str], name: str, default: int) -> int:
    given = options.get(name)
    try:
        value = default if given is None else int(given)
    except ValueError:
        value = 0
    if value < 1:
        raise ValidationError(f"option {name} must be a positive whole number, got {given!r}")
    return value
