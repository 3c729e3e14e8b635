"""Run every benchmark and print one table; write ``bench/results.json``.

Usage: ``python -m bench [--quick] [--only NAME ...]``. With ``--only``, the figures measured
replace theirs in ``bench/results.json`` and the others of the last run stay.
"""

from __future__ import annotations

import argparse
import importlib
import json
import pkgutil
import sys
import traceback
from pathlib import Path

from bench.harness import Figure
from bench.pictures import draw


def _modules() -> list[str]:
    here = Path(__file__).parent
    return sorted(m.name for m in pkgutil.iter_modules([str(here)]) if m.name.startswith("bench_"))


def main() -> int:
    parser = argparse.ArgumentParser(prog="python -m bench")
    parser.add_argument("--quick", action="store_true", help="fewer repeats, smaller sizes")
    parser.add_argument("--only", nargs="*", default=None, help="module names (bench_*)")
    args = parser.parse_args()

    figures: list[Figure] = []
    failed: list[str] = []
    for name in _modules():
        if args.only and name not in args.only:
            continue
        print(f"== {name}", file=sys.stderr, flush=True)
        try:
            module = importlib.import_module(f"bench.{name}")
            figures.extend(module.run(quick=args.quick))
        except Exception:  # the other benchmarks' figures are still worth printing
            traceback.print_exc()
            failed.append(name)

    header = f"{'figure':<6} {'what':<58} {'value':>14} {'baseline':>14} {'ratio':>8} {'goal':>8}"
    print(header)
    print("-" * len(header))
    for f in figures:
        value = f"{f.value.median:.4g} {f.value.unit}"
        base = f"{f.baseline.median:.4g} {f.baseline.unit}"
        mark = "ok" if f.met else "MISS"
        print(
            f"{f.key:<6} {f.title[:58]:<58} {value:>14} {base:>14} {f.ratio:>8.3f}"
            f" {f.goal:>8} {mark}"
        )
    out = Path(__file__).parent / "results.json"
    results = [f.as_dict() for f in figures]
    if args.only and out.exists():
        # A partial run replaces its own figures and keeps the others of the last run.
        measured = {r["key"] for r in results}
        try:
            last = json.loads(out.read_text())
        except ValueError:
            last = []  # unreadable: nothing of it to keep
        kept = [r for r in last if isinstance(r, dict) and r.get("key") not in measured]
        results = kept + results
    out.write_text(json.dumps(results, indent=2) + "\n")
    print(f"\nwritten: {out}")
    for picture in draw(figures):
        print(f"drawn: {picture}")
    if failed:
        print(f"failed, no figures: {', '.join(failed)} (tracebacks above)", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
