"""Catalog at scale: memory per table with every version kept, snapshot encode and load.

``python -m bench.bench_scale_catalog --tables 100000`` (or 1000000) builds a catalog of N
tables of 6 columns, 1,000 CREATE TABLE commands per version, through the real apply path:
the writer's step (done first, not measured) marshals each batch's entries as a
``VersionedUpdate`` (the entries ``prepare`` gives, copied per table: see ``_like``), then
every update
is applied by a ``CatalogService`` exactly as it applies a log entry (decode, apply, seal,
publish). Every version is kept. It prints:

- resident bytes per table: the growth of live Python allocations (``tracemalloc``, after a
  full collection) while the service applies the updates, ÷ N; the growth of the process
  RSS over the same phase is printed beside it (it also holds freed, unreturned memory).
  The same measurement runs on the code of the base
  commit (``--base``, default 1255c90, extracted with ``git archive`` into a temporary
  directory and run in a child process) at ``min(N, --base-tables)`` tables, and the ratio
  of the two per-table figures is printed;
- snapshot encode time (``encode_snapshot`` of the latest version) and the digest time;
- snapshot decode + ready time: a fresh ``CatalogService`` loads the snapshot entry and
  answers ``latest_catalog().table("PUBLIC", name)``;
- lookups/s of ``table("PUBLIC", name)`` at the latest version, over random names (mostly
  first reads: each decodes its descriptor) and over 1,000 names read again and again.

``run(quick)`` (for ``python -m bench``) reports the memory ratio at 20k (quick) or 100k.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import importlib
import importlib.util
import json
import os
import random
import subprocess
import sys
import tarfile
import tempfile
import time
import tracemalloc
from pathlib import Path
from typing import Any, cast

from bench.harness import Figure, Sample, progress
from bench.tables import create_command
from catalog import Catalog, ColumnType, prepare
from catalog import commands as c
from catalog.entries import EntryBase, NewIndexEntry, NewTableEntry
from catalog.marshalling import encode_update
from catalog.service import CatalogService
from catalog.update import VersionedUpdate, initial_update
from updatelog.log import LogEntry, UpdateLog

BATCH = 1000
BASE_COMMIT = "1255c90"
REPO = Path(__file__).resolve().parent.parent
_NO_LOG = cast(UpdateLog, None)
"""Applying entries handed to it, a service never reads its log."""


def _snapshot_codec() -> Any:
    """Return the module holding ``encode_snapshot``/``decode_snapshot`` in this checkout.

    The base commit kept them in ``catalog.marshalling``; the bench runs against both.
    """
    name = "catalog.snapshots" if importlib.util.find_spec("catalog.snapshots") else None
    return importlib.import_module(name or "catalog.marshalling")


def _create(name: str) -> c.CreateTableCommand:
    return create_command(name, c.Column(name="NOTE", type=ColumnType.STRING))


def _rss() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def _apply(service: CatalogService, version: int, payload: bytes, snapshot: bool) -> None:
    # The service's own apply step for one log entry: what its watch loop calls.
    entry = LogEntry(version, payload, snapshot)
    if snapshot:  # loaded on a worker thread, which needs an event loop to hand it back
        asyncio.run(service._apply(entry, fire=False))
        return
    coroutine = service._apply(entry, fire=False)
    try:
        coroutine.send(None)
    except StopIteration:
        return
    raise RuntimeError("applying a log entry without listeners should not wait")


def _like(template: tuple[EntryBase, ...], first_id: int, names: range) -> list[EntryBase]:
    """Return the entries ``prepare`` gives for CREATE TABLE T<n> for ``names``.

    Validating a million commands with pydantic takes a quarter of an hour and is the
    writer's cost, not the node's: the entries of one prepared CREATE TABLE are copied
    with each table's ids and names instead (``_write`` checks they are equal).
    """
    new_table, new_index, id_gen = template
    assert isinstance(new_table, NewTableEntry) and isinstance(new_index, NewIndexEntry)
    entries: list[EntryBase] = []
    for offset, n in enumerate(names):
        table_id, name = first_id + 2 * offset, f"T{n}"
        table = {"id": table_id, "name": name, "pk_index_id": table_id + 1}
        index = {"id": table_id + 1, "table_id": table_id, "name": f"{name}_PK"}
        entries += [
            NewTableEntry(table=new_table.table.model_copy(update=table)),
            NewIndexEntry(index=new_index.index.model_copy(update=index)),
            id_gen,
        ]
    return entries


def _write(tables: int) -> list[bytes]:
    """Return the stored updates a writer produces: version 1 (and the default zone when the
    catalog starts without one), then 1,000 tables each."""
    first = initial_update(proposal_ts=1 << 16)
    payloads = [encode_update(first)]
    latest = first.apply_to(Catalog())
    if latest.default_zone() is None:  # a catalog starts without zones: make the default one
        zone = [c.CreateZone(name="Default"), c.SetDefaultZone(name="Default")]
        update = VersionedUpdate(
            version=2, proposal_ts=3 << 16, delay_ms=0, entries=prepare(latest, zone).entries
        )
        payloads.append(encode_update(update))
        latest = update.apply_to(latest)
    prepared = prepare(latest, [_create(f"T{i}") for i in range(min(BATCH, tables))])
    template = prepared.entries[:3]
    if list(prepared.entries) != _like(template, latest.object_id_gen, range(min(BATCH, tables))):
        raise AssertionError("the copied entries differ from prepare's")
    for start in range(0, tables, BATCH):
        version = start // BATCH + latest.version + 1
        names = range(start, min(start + BATCH, tables))
        update = VersionedUpdate(
            version=version,
            proposal_ts=(version + 2) << 16,
            delay_ms=0,
            entries=_like(template, latest.object_id_gen + 2 * start, names),
        )
        payloads.append(encode_update(update))
    return payloads


def _read(service: CatalogService, payloads: list[bytes]) -> None:
    """Apply every stored update, each read afresh from the log (a new bytes object)."""
    for index, payload in enumerate(payloads):
        payloads[index] = b""
        _apply(service, index + 1, bytes(memoryview(payload)), False)


def _lookups(service: CatalogService, names: list[str], rounds: int) -> float:
    catalog = service.latest_catalog()
    start = time.perf_counter()
    for _ in range(rounds):
        for name in names:
            catalog.table("PUBLIC", name)
    return rounds * len(names) / (time.perf_counter() - start)


def measure_checkout(tables: int, *, full: bool, traced: bool = True) -> dict[str, Any]:
    """Build ``tables`` tables with the ``catalog`` package importable here and measure.

    Args:
        tables: how many tables to create (1,000 per version, every version kept).
        full: also measure the snapshot and lookups (the base run measures memory only).
        traced: measure memory with ``tracemalloc`` (exact, but it slows the apply phase
            about fourfold); otherwise by RSS growth only.

    Returns:
        The figures, JSON-ready.
    """
    result: dict[str, Any] = {"tables": tables}
    started = time.perf_counter()
    payloads = _write(tables)
    result["write_s"] = time.perf_counter() - started
    gc.collect()
    service = CatalogService(_NO_LOG, node_name="bench")
    rss_before = _rss()
    if traced:
        tracemalloc.start()
    traced_before = tracemalloc.get_traced_memory()[0]
    started = time.perf_counter()
    _read(service, payloads)
    result["apply_s_traced" if traced else "apply_s"] = time.perf_counter() - started
    del payloads
    gc.collect()
    if traced:
        traced_now = tracemalloc.get_traced_memory()[0]
        result["traced_bytes_per_table"] = (traced_now - traced_before) / tables
        tracemalloc.stop()
    result["rss_bytes_per_table"] = (_rss() - rss_before) / tables
    result["versions_kept"] = service.latest_version - service.earliest_version + 1
    if not full:
        return result

    codec = _snapshot_codec()
    latest = service.latest_catalog()
    started = time.perf_counter()
    payload = codec.encode_snapshot(latest)
    result["snapshot_encode_s"] = time.perf_counter() - started
    result["snapshot_bytes"] = len(payload)
    started = time.perf_counter()
    digest = latest.digest()
    result["digest_s"] = time.perf_counter() - started

    rng = random.Random(1)
    last = f"T{tables - 1}"
    latest_version = latest.version
    del service, latest
    gc.collect()
    fresh = CatalogService(_NO_LOG, node_name="fresh")
    rss_before = _rss()
    started = time.perf_counter()
    _apply(fresh, latest_version, payload, True)
    fresh.latest_catalog().table("PUBLIC", last)
    result["snapshot_load_ready_s"] = time.perf_counter() - started
    gc.collect()
    result["loaded_rss_bytes_per_table"] = (_rss() - rss_before) / tables
    if fresh.latest_catalog().digest() != digest:
        raise AssertionError("the loaded snapshot's digest differs from the built catalog's")
    random_names = [f"T{rng.randrange(tables)}" for _ in range(min(tables, 100_000))]
    result["lookups_per_s_random"] = _lookups(fresh, random_names, 1)
    result["lookups_per_s_hot"] = _lookups(fresh, random_names[:1000], 100)
    return result


def _extract_base(commit: str, into: Path) -> None:
    archive = into / "base.tar"
    with archive.open("wb") as out:
        subprocess.run(
            ["git", "-C", str(REPO), "archive", commit, "catalog", "schemasync", "updatelog"],
            stdout=out,
            check=True,
        )
    with tarfile.open(archive) as tar:
        tar.extractall(into, filter="data")


def measure_in_child(
    tables: int, flags: list[str], *, cwd: str | Path = REPO, pythonpath: str = str(REPO)
) -> dict[str, Any]:
    """Run this module at ``tables`` in a child process with ``flags``; return its figures."""
    command = [sys.executable, "-m", "bench.bench_scale_catalog", "--tables", str(tables)]
    done = subprocess.run(
        [*command, *flags, "--json"],
        cwd=cwd,
        env={**os.environ, "PYTHONPATH": pythonpath},
        check=True,
        capture_output=True,
        text=True,
    )
    figures: dict[str, Any] = json.loads(done.stdout)
    return figures


def measure_base(tables: int, commit: str, *, rss: bool = False) -> dict[str, Any]:
    """Run the memory measurement on the code of ``commit`` in a child process."""
    with tempfile.TemporaryDirectory(prefix="bench-scale-base-") as tmp:
        _extract_base(commit, Path(tmp))
        # The child's working directory is the extracted tree, so its ``catalog`` shadows
        # this checkout's; ``bench`` still comes from here.
        flags = ["--memory-only", *(["--rss"] if rss else [])]
        return measure_in_child(tables, flags, cwd=tmp, pythonpath=f"{tmp}{os.pathsep}{REPO}")


def run(quick: bool) -> list[Figure]:
    """Return the memory figure for ``python -m bench``: bytes per table ÷ the base commit's."""
    tables = 20_000 if quick else 100_000
    progress(f"S1: {tables} tables, 1000 per version, every version kept (and base commit)")
    ours = measure_checkout(tables, full=False)
    base = measure_base(tables, BASE_COMMIT)

    def sample(figures: dict[str, Any]) -> Sample:
        value = float(figures["traced_bytes_per_table"])
        return Sample(value, value, value, "B")

    return [
        Figure(
            "S1",
            f"resident bytes/table, {tables} tables all versions ÷ base {BASE_COMMIT}",
            sample(ours),
            sample(base),
            "<= 0.2",
            extra={"ours": ours, "base": base},
        )
    ]


def main() -> int:
    """Measure at ``--tables`` and print the figures (and the base commit's)."""
    parser = argparse.ArgumentParser(prog="python -m bench.bench_scale_catalog")
    parser.add_argument("--tables", type=int, default=100_000)
    parser.add_argument("--base", default=BASE_COMMIT, help="commit to compare with")
    parser.add_argument("--base-tables", type=int, default=100_000, help="cap for the base run")
    parser.add_argument("--no-base", action="store_true", help="skip the base commit's run")
    parser.add_argument("--memory-only", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--rss", action="store_true", help="measure memory by RSS only (faster)")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args()
    ours = measure_checkout(args.tables, full=not args.memory_only, traced=not args.rss)
    if args.json:
        print(json.dumps(ours))
        return 0
    for key, value in ours.items():
        print(f"{key:<28} {value:,.3f}" if isinstance(value, float) else f"{key:<28} {value:,}")
    if args.no_base:
        return 0
    base_tables = min(args.tables, args.base_tables)
    print(f"\nbase {args.base}, {base_tables} tables (memory only):", flush=True)
    base = measure_base(base_tables, args.base, rss=args.rss)
    for key, value in base.items():
        print(f"{key:<28} {value:,.3f}" if isinstance(value, float) else f"{key:<28} {value:,}")
    method = "rss" if args.rss else "traced"
    ratio = ours[f"{method}_bytes_per_table"] / base[f"{method}_bytes_per_table"]
    print(f"\nresident bytes/table ({method}), ours ÷ base ({base_tables} tables): {ratio:.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
