"""What every chaos test shares: its time budget, fault bookkeeping, the final check, figures."""

from __future__ import annotations

import json
import os
import time
import urllib.request
from dataclasses import dataclass, field

from deploy.local_cluster import LocalCluster
from tests.chaos.history import CheckReport, History, check
from tests.chaos.observe import observe
from tests.chaos.workload import Workload

CHAOS_SECONDS = float(os.environ.get("CATALOG_CHAOS_SECONDS", "15"))
"""The base duration of a chaos test's load; ``make chaos`` raises it."""


@dataclass
class Fault:
    """One injected fault: when (monotonic), what, and when the next DDL succeeded after it."""

    at: float
    what: str
    windowed: bool = True
    """Whether an unavailability window is measured (not for a standing condition)."""
    recovered_s: float | None = None


@dataclass
class Faults:
    """The faults a test injected, in order."""

    items: list[Fault] = field(default_factory=list)

    def inject(self, what: str, *, windowed: bool = True) -> Fault:
        """Note a fault injected now."""
        fault = Fault(time.monotonic(), what, windowed)
        self.items.append(fault)
        return fault

    def measure(self, history: History) -> None:
        """Set each fault's unavailability window: from the fault to the first DDL that
        started after it and was acknowledged."""
        acks = history.ack_times()
        for fault in self.items:
            if not fault.windowed:
                continue
            after = [done for started, done in acks if started >= fault.at]
            fault.recovered_s = min(after) - fault.at if after else None

    def lines(self) -> list[str]:
        """Return one line per fault."""
        lines = []
        for i, fault in enumerate(self.items):
            line = f"  fault {i + 1}: {fault.what}"
            if fault.windowed:
                recovered = "never" if fault.recovered_s is None else f"{fault.recovered_s:.2f} s"
                line += f"; unavailable for {recovered} (next DDL acknowledged after it)"
            lines.append(line)
        return lines


def finish(
    name: str,
    cluster: LocalCluster,
    history: History,
    load: Workload,
    faults: Faults,
    started: float,
) -> CheckReport:
    """Re-read pinned timestamps, read the cluster back, check the history, print figures."""
    checking = time.monotonic()
    reread = load.reread_pinned()
    ids = {op.request_id for op in history.operations}
    observed = observe(cluster.urls, cluster.store_url, ids)
    report = check(history, observed)
    checking = time.monotonic() - checking
    faults.measure(history)
    counts = history.counts()
    print(
        f"\n[{name}] {time.monotonic() - started:.1f} s ({checking:.1f} s to read back and "
        f"check), {len(cluster.nodes)} catalog nodes"
    )
    print(
        f"  operations: {counts['operations']} DDL requests ({counts['ok']} ok, "
        f"{counts['refused']} refused, {counts['unknown']} unknown outcome, "
        f"{counts['retried']} needed retries); {counts['reads']} reads "
        f"({reread} pinned timestamps re-read at the end)"
    )
    print(f"  versions: {observed.log_earliest}..{observed.log_latest} retained in the log")
    print(f"  faults injected: {len(faults.items)}")
    for line in faults.lines():
        print(line)
    print(f"  {report.summary()}")
    return report


def etcd_members_agree(cluster: LocalCluster) -> tuple[bool, str]:
    """Compare every etcd member's HashKV at one revision (catches lost or diverged writes).

    etcd 3.5.0-3.5.2 can lose applied writes on a member killed mid-apply (etcd-io/etcd#13766);
    such a member then answers with different data than its peers. The client gateway maps
    HashKV and Hash to one path, so this asks the peer endpoint the corruption check uses.
    """
    members = cluster.etcd.members
    revision = min(m.revision() for m in members)
    hashes: dict[str, str] = {}
    for member in members:
        body = json.dumps({"revision": revision}).encode()
        request = urllib.request.Request(
            member.config.peer_url + "/members/hashkv", data=body, method="GET"
        )
        with urllib.request.urlopen(request, timeout=10) as response:
            hashes[member.config.name] = str(json.loads(response.read()).get("hash"))
    return len(set(hashes.values())) == 1, f"HashKV at revision {revision}: {hashes}"
