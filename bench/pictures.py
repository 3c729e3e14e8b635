"""Pictures of the benchmark curves, drawn as SVG into ``docs/`` by ``python -m bench``.

Each picture is drawn when the figures of the run hold its data (C1 for commits and scale, E2
for event delivery), so ``--only`` draws only what it measured. The SVGs carry no date or
random ids, so a picture changes in git only when its numbers do.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("svg")

import matplotlib.pyplot as plt

from bench.harness import Figure

DOCS = Path(__file__).resolve().parents[1] / "docs"
plt.rcParams.update({"svg.hashsalt": "catalog-bench", "svg.fonttype": "none"})


def _save(fig: Any, name: str) -> Path:
    path = DOCS / name
    fig.tight_layout()
    fig.savefig(path, format="svg", metadata={"Date": None})
    plt.close(fig)
    return path


def draw_commits(sweep: dict[str, Any]) -> Path:
    """DDL commits/s against concurrent clients, beside the raw etcd CAS rate."""
    fig, ax = plt.subplots(figsize=(6.4, 3.6))
    clients = sweep["clients"]
    ax.plot(clients, sweep["commits_per_s"], marker="o", label="catalog: DDL committed/s")
    ax.fill_between(
        clients, sweep["commits_per_s_min"], sweep["commits_per_s_max"], alpha=0.2, linewidth=0
    )
    ax.axhline(sweep["raw_txn_per_s"], color="grey", linestyle="--", label="raw etcd CAS txn/s")
    ax.set_xscale("log", base=2)
    ax.set_xticks(clients, [str(k) for k in clients])
    ax.set_xlabel("concurrent clients")
    ax.set_ylabel("per second")
    ax.set_ylim(bottom=0)
    ax.set_title("Commits against concurrent clients (one node, real etcd, fsync)")
    ax.legend(loc="lower right")
    ax.grid(alpha=0.3)
    return _save(fig, "bench-commits.svg")


def draw_scale(points: list[dict[str, Any]]) -> Path:
    """Resident memory (and the snapshot's size) and a fresh node's start time against the
    number of tables."""
    tables = [p["tables"] for p in points]
    fig, (mem, start) = plt.subplots(1, 2, figsize=(8.8, 3.6))
    built = [p["rss_bytes_per_table"] * p["tables"] / 2**20 for p in points]
    snapshot = [p["snapshot_bytes"] / 2**20 for p in points]
    mem.plot(tables, built, marker="o", label="resident, every version kept")
    mem.plot(tables, snapshot, marker="s", label="snapshot size")
    mem.set_ylabel("MiB")
    mem.set_title("Memory")
    start.plot(tables, [p["snapshot_load_ready_s"] for p in points], marker="o")
    start.set_ylabel("seconds")
    start.set_title("Fresh node start: snapshot → first lookup")
    for ax in (mem, start):
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xticks(tables, [f"{n:,}" for n in tables])
        ax.set_xlabel("tables")
        ax.grid(alpha=0.3, which="both")
    mem.legend(loc="upper left")
    return _save(fig, "bench-scale.svg")


def draw_events(extra: dict[str, Any]) -> Path:
    """Event delivery latency percentiles (commit → delivered to each subscriber)."""
    fig, ax = plt.subplots(figsize=(6.4, 3.6))
    percentiles = {int(q): v for q, v in extra["percentiles_ms"].items()}
    qs = sorted(percentiles)
    ax.plot(qs, [percentiles[q] for q in qs], label="commit → delivered")
    ax.axhline(50, color="grey", linestyle="--", label="budget (p99): 50 ms")
    ax.set_xlabel("percentile")
    ax.set_ylabel("ms")
    ax.set_ylim(bottom=0)
    subscribers = extra["deliveries"] // extra["commits"]
    ax.set_title(f"Event delivery: {extra['commits']:,} commits to {subscribers} SSE subscribers")
    ax.legend(loc="upper left")
    ax.grid(alpha=0.3)
    return _save(fig, "bench-events.svg")


def draw(figures: list[Figure]) -> list[Path]:
    """Draw every picture whose data the run measured; return the files written."""
    by_key = {f.key: f for f in figures}
    drawn = []
    if "C1" in by_key:
        drawn.append(draw_commits(by_key["C1"].extra["sweep"]))
        drawn.append(draw_scale(by_key["C1"].extra["scale"]))
    if "E2" in by_key:
        drawn.append(draw_events(by_key["E2"].extra))
    return drawn
