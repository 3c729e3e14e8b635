"""Measure a figure and its baseline in one run, and report the ratio against a goal.

Each benchmark module exposes ``run(quick: bool) -> list[Figure]``. ``measure`` runs a warm-up
and several repeats and keeps the median with min and max, so a noisy machine shows up as a
wide range instead of a wrong number.
"""

from __future__ import annotations

import statistics
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any


@dataclass(frozen=True)
class Sample:
    """A repeated measurement: median with min and max."""

    median: float
    low: float
    high: float
    unit: str

    @classmethod
    def of(cls, values: Sequence[float], unit: str) -> Sample:
        """Summarise ``values`` (at least one)."""
        return cls(statistics.median(values), min(values), max(values), unit)


@dataclass(frozen=True)
class Figure:
    """One reported figure: value ÷ baseline compared with a goal.

    ``goal`` is a string such as ``"<= 3"`` or ``">= 0.7"``; ``met`` is computed from it.
    """

    key: str
    title: str
    value: Sample
    baseline: Sample
    goal: str
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def ratio(self) -> float:
        """Return value ÷ baseline (medians)."""
        return self.value.median / self.baseline.median if self.baseline.median else float("inf")

    @property
    def met(self) -> bool:
        """Return whether the ratio meets the goal."""
        op, _, bound = self.goal.partition(" ")
        limit = float(bound)
        return self.ratio <= limit if op == "<=" else self.ratio >= limit

    def as_dict(self) -> dict[str, Any]:
        """Return a JSON-ready dict of the figure."""
        return {**asdict(self), "ratio": self.ratio, "met": self.met}


def progress(message: str) -> None:
    """Print a progress line to stderr."""
    print(f"  .. {message}", file=sys.stderr, flush=True)


def measure(
    fn: Callable[[], float],
    *,
    repeats: int,
    warmup: int = 1,
    unit: str,
) -> Sample:
    """Run ``fn`` ``warmup`` times unrecorded, then ``repeats`` times; summarise its results.

    ``fn`` returns the quantity itself (seconds, ops/s, bytes...), not necessarily its own time.
    """
    for _ in range(warmup):
        fn()
    return Sample.of([fn() for _ in range(repeats)], unit)


def alternate(
    sides: Sequence[Callable[[], float]], *, repeats: int, warmup: int = 1
) -> list[list[float]]:
    """Run each of ``sides`` in turn, ``repeats`` rounds after ``warmup`` unrecorded rounds.

    Alternating spreads a noisy neighbour, a growing store or a warming disk over every side
    alike instead of whichever side runs last. Returns each side's results, in order.
    """
    for _ in range(warmup):
        for side in sides:
            side()
    results: list[list[float]] = [[] for _ in sides]
    for _ in range(repeats):
        for side, values in zip(sides, results, strict=True):
            values.append(side())
    return results


def timed(fn: Callable[[], object]) -> Callable[[], float]:
    """Wrap ``fn`` so that calling the wrapper returns the seconds ``fn`` took."""

    def run() -> float:
        start = time.perf_counter()
        fn()
        return time.perf_counter() - start

    return run


def rate(fn: Callable[[], int]) -> Callable[[], float]:
    """Wrap ``fn`` (returning an operation count) so that the wrapper returns ops per second."""

    def run() -> float:
        start = time.perf_counter()
        count = fn()
        return count / (time.perf_counter() - start)

    return run
