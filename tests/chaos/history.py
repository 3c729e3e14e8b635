"""A history of client operations against a catalog cluster, and the checker of its invariants.

In the manner of etcd's robustness tests: record every operation while faults are injected,
then check the record against what the cluster holds afterwards. ``History`` is the recorder
(thread-safe); ``Observed`` is what was read back from the log and from every node after the
run (``tests.chaos.observe`` gathers it); ``check(history, observed)`` returns every violation
of docs/design.md's invariants it can find, never stopping at the first:

- the log's retained versions are contiguous, and every node holds every one of them up to the
  log's latest (a node that skipped a version lacks it, or holds a different catalog there);
- every node that holds version N holds the same catalog N (same digest);
- an acknowledged request is in the log exactly once, at the version it was acknowledged
  with, with the same per-command ``applied`` flags (for versions compacted away, the
  ``catalog.request.<id>`` record must name that version); one that changed nothing is in no
  version, and its ``catalog.request.<id>`` record names the version it was judged at;
- a refused request is not in the log at all; a request of unknown outcome (timeout,
  connection error) is in it at most once; no request is in the log that no client sent;
- every read at a timestamp T saw the same version and the same catalog on every node (and
  the catalog that version has at the end), and a read at "now" that followed an
  acknowledgement includes that acknowledged version.
"""

from __future__ import annotations

import enum
import threading
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import NamedTuple

from updatelog.log import RequestRecord


class Outcome(enum.Enum):
    """How a DDL request ended, as its client saw it."""

    OK = "ok"
    """Acknowledged with a version: it must be in the log exactly once."""
    REFUSED = "refused"
    """Refused with a 4xx code: it must not be in the log."""
    UNKNOWN = "unknown"
    """Timeout, connection error or 5xx after every retry: in the log at most once."""


class Attempt(NamedTuple):
    """One HTTP attempt of a request: where it went and how it ended (status or error)."""

    url: str
    result: str


@dataclass(frozen=True, slots=True)
class Operation:
    """One client call of ``POST /v1/ddl`` (with all its retries).

    Several operations may share a ``request_id``: a client that re-sends a request after a
    lost answer records the re-send as a second operation.
    """

    request_id: str
    node: str | None
    """The URL that gave the final answer, None if none answered."""
    commands: tuple[str, ...]
    outcome: Outcome
    version: int | None = None
    applied: tuple[bool, ...] | None = None
    code: str | None = None
    started: float = 0.0
    finished: float = 0.0
    attempts: tuple[Attempt, ...] = ()


@dataclass(frozen=True, slots=True)
class Read:
    """A read of the whole catalog at timestamp ``at`` on one node.

    ``min_version`` is set for a read at "now" made right after a DDL was acknowledged with
    that version (invariant 6: the read must include it).
    """

    node: str
    at: int
    version: int
    digest: str
    min_version: int | None = None


@dataclass(frozen=True, slots=True)
class LoggedRequest:
    """A request id as the log records it: in which version, with which applied flags."""

    version: int
    applied: tuple[bool, ...]


@dataclass
class Observed:
    """What the cluster holds after the run.

    Attributes:
        log_earliest: the log's snapshot version (earliest retained).
        log_latest: the log's latest version.
        log_versions: the retained versions in the order a range read returned them.
        requests_in_log: per request id, every retained update that records it.
        request_keys: per request id asked about, what its ``catalog.request.<id>`` key
            records: the committing version or a refusal (None when there is no such key).
        node_versions: per node URL, the versions it serves (``/v1/versions``).
        digests: per node URL, per version, the digest of the catalog it serves.
    """

    log_earliest: int
    log_latest: int
    log_versions: list[int]
    requests_in_log: dict[str, list[LoggedRequest]] = field(default_factory=dict)
    request_keys: dict[str, RequestRecord | None] = field(default_factory=dict)
    node_versions: dict[str, list[int]] = field(default_factory=dict)
    digests: dict[str, dict[int, str]] = field(default_factory=dict)


class History:
    """A thread-safe record of operations and reads."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._operations: list[Operation] = []
        self._reads: list[Read] = []

    def record(self, operation: Operation) -> None:
        """Record one DDL operation."""
        with self._lock:
            self._operations.append(operation)

    def record_read(self, read: Read) -> None:
        """Record one read at a timestamp."""
        with self._lock:
            self._reads.append(read)

    @property
    def operations(self) -> list[Operation]:
        """Return a copy of the operations recorded so far."""
        with self._lock:
            return list(self._operations)

    @property
    def reads(self) -> list[Read]:
        """Return a copy of the reads recorded so far."""
        with self._lock:
            return list(self._reads)

    def counts(self) -> dict[str, int]:
        """Return how many operations ended each way, and how many reads were made."""
        ops = self.operations
        tally = Counter(op.outcome.value for op in ops)
        return {
            "operations": len(ops),
            "ok": tally["ok"],
            "refused": tally["refused"],
            "unknown": tally["unknown"],
            "retried": sum(1 for op in ops if len(op.attempts) > 1),
            "reads": len(self.reads),
        }

    def ack_times(self) -> list[tuple[float, float]]:
        """Return ``(started, finished)`` of every acknowledged operation, by finish time."""
        return sorted(
            ((op.started, op.finished) for op in self.operations if op.outcome is Outcome.OK),
            key=lambda pair: pair[1],
        )


@dataclass
class CheckReport:
    """The checker's verdict: every problem found, and what was checked."""

    problems: list[str]
    checked: dict[str, int]

    @property
    def ok(self) -> bool:
        """Return True when no invariant was violated."""
        return not self.problems

    def summary(self) -> str:
        """Return one line of figures, and the problems (at most 30) if any."""
        figures = ", ".join(f"{k}={v}" for k, v in self.checked.items())
        if self.ok:
            return f"history OK: nothing lost, nothing duplicated ({figures})"
        shown = "\n  ".join(self.problems[:30])
        more = f"\n  ... and {len(self.problems) - 30} more" if len(self.problems) > 30 else ""
        return f"history has {len(self.problems)} problem(s) ({figures}):\n  {shown}{more}"


def _contiguous(versions: Sequence[int]) -> bool:
    return list(versions) == list(range(versions[0], versions[0] + len(versions)))


def _check_log(observed: Observed, problems: list[str]) -> None:
    versions = observed.log_versions
    if not versions:
        problems.append("the log holds no version")
        return
    duplicated = sorted(v for v, n in Counter(versions).items() if n > 1)
    if duplicated:
        problems.append(f"log: versions stored twice: {duplicated[:10]}")
    expected = list(range(observed.log_earliest, observed.log_latest + 1))
    if sorted(set(versions)) != expected:
        missing = sorted(set(expected) - set(versions))
        extra = sorted(set(versions) - set(expected))
        problems.append(
            f"log: retained versions are not {observed.log_earliest}..{observed.log_latest}: "
            f"missing {missing[:10]}, unexpected {extra[:10]}"
        )
    elif versions != expected:
        problems.append("log: a range read returned versions out of order")


def _check_nodes(observed: Observed, problems: list[str]) -> int:
    """Check every node's versions and the digests across nodes; return versions compared."""
    for node, versions in sorted(observed.node_versions.items()):
        if not versions:
            problems.append(f"{node}: serves no version")
            continue
        if not _contiguous(versions):
            problems.append(f"{node}: served versions are not contiguous: {versions[:20]}...")
        if versions[-1] != observed.log_latest:
            problems.append(
                f"{node}: latest version {versions[-1]}, the log's is {observed.log_latest}"
            )
        held = set(versions)
        lacking = [
            v for v in range(observed.log_earliest, observed.log_latest + 1) if v not in held
        ]
        if lacking:
            problems.append(f"{node}: lacks retained versions {lacking[:10]}")
    by_version: dict[int, dict[str, str]] = defaultdict(dict)
    for node, digests in observed.digests.items():
        for version, digest in digests.items():
            by_version[version][node] = digest
    for version in sorted(by_version):
        seen = by_version[version]
        if len(set(seen.values())) > 1:
            listing = ", ".join(f"{n}: {d[:12]}" for n, d in sorted(seen.items()))
            problems.append(f"version {version}: digests differ across nodes ({listing})")
    return len(by_version)


def _check_acknowledged(
    request_id: str, ops: list[Operation], observed: Observed, problems: list[str]
) -> bool:
    """Check a request some client saw acknowledged; return False if it could not be verified."""
    acks = [op for op in ops if op.outcome is Outcome.OK]
    versions = {op.version or 0 for op in acks}
    if len(versions) > 1:
        problems.append(f"{request_id}: acknowledged with different versions {sorted(versions)}")
    refusals = [op.code for op in ops if op.outcome is Outcome.REFUSED]
    if refusals:
        problems.append(f"{request_id}: acknowledged, but a retry was refused with {refusals}")
    version = acks[0].version
    assert version is not None
    logged = observed.requests_in_log.get(request_id, [])
    if version <= observed.log_earliest:  # compacted: only the request key is left
        if logged:
            problems.append(
                f"{request_id}: acknowledged with compacted version {version}, but retained "
                f"versions {[e.version for e in logged]} record it"
            )
        if request_id not in observed.request_keys:
            return False
        key = _committed_by(observed.request_keys[request_id])
        if key != version:
            problems.append(
                f"{request_id}: acknowledged with version {version} (compacted since), "
                f"but catalog.request.{request_id} names {key} (lost acknowledgement)"
            )
        return True
    unchanged = acks[0].applied is not None and not any(acks[0].applied)
    if not logged and unchanged:
        # It changed nothing: recorded under its id at the version judged, with no version.
        if _committed_by(observed.request_keys.get(request_id)) != version:
            problems.append(
                f"{request_id}: acknowledged as changing nothing at version {version}, but "
                f"its request key names {_committed_by(observed.request_keys.get(request_id))}"
            )
        return True
    if not logged:
        problems.append(f"{request_id}: acknowledged with version {version}, not in the log")
    elif len(logged) > 1:
        problems.append(
            f"{request_id}: applied more than once, in versions {[e.version for e in logged]}"
        )
    elif logged[0].version != version:
        problems.append(
            f"{request_id}: acknowledged with version {version}, "
            f"the log has it in version {logged[0].version}"
        )
    else:
        applied = acks[0].applied
        if applied is not None and logged[0].applied != applied:
            problems.append(
                f"{request_id}: acknowledged applied={applied}, logged {logged[0].applied}"
            )
    key = _committed_by(observed.request_keys.get(request_id, RequestRecord(version)))
    if key != version:
        problems.append(f"{request_id}: catalog.request key names {key}, acknowledged {version}")
    return True


def _check_requests(history: History, observed: Observed, problems: list[str]) -> dict[str, int]:
    by_id: dict[str, list[Operation]] = defaultdict(list)
    for op in history.operations:
        by_id[op.request_id].append(op)
    tally = Counter[str]()
    for request_id, ops in by_id.items():
        outcomes = {op.outcome for op in ops}
        logged = observed.requests_in_log.get(request_id, [])
        if Outcome.OK in outcomes:
            tally["acknowledged"] += 1
            if not _check_acknowledged(request_id, ops, observed, problems):
                tally["unverifiable"] += 1
        elif Outcome.REFUSED in outcomes:
            tally["refused"] += 1
            key = _committed_by(observed.request_keys.get(request_id))
            if logged or isinstance(key, int):
                where = [e.version for e in logged] or [int(key or 0)]
                codes = sorted({op.code or "?" for op in ops})
                problems.append(f"{request_id}: refused ({codes}) but applied in {where}")
        else:
            tally["unknown"] += 1
            if len(logged) > 1:
                problems.append(
                    f"{request_id}: outcome unknown, applied more than once in "
                    f"{[e.version for e in logged]}"
                )
            elif logged:
                tally["unknown_applied"] += 1
    phantoms = sorted(set(observed.requests_in_log) - set(by_id))
    if phantoms:
        problems.append(f"the log records requests no client sent: {phantoms[:10]}")
    return dict(tally)


def _check_reads(reads: Iterable[Read], observed: Observed, problems: list[str]) -> int:
    by_time: dict[int, list[Read]] = defaultdict(list)
    for read in reads:
        by_time[read.at].append(read)
        if read.min_version is not None and read.version < read.min_version:
            problems.append(
                f"{read.node}: read at now={read.at} saw version {read.version}, but version "
                f"{read.min_version} had been acknowledged before it (invariant 6)"
            )
        final = observed.digests.get(read.node, {}).get(read.version)
        if final is not None and final != read.digest:
            problems.append(
                f"{read.node}: read at {read.at} saw version {read.version} with digest "
                f"{read.digest[:12]}, the node now serves {final[:12]} for it"
            )
    for at, group in sorted(by_time.items()):
        versions = {r.version for r in group}
        digests = {r.digest for r in group}
        if len(versions) > 1 or len(digests) > 1:
            seen = ", ".join(f"{r.node}: v{r.version}/{r.digest[:8]}" for r in group)
            problems.append(f"reads at {at} disagree (invariant 5): {seen}")
    return len(by_time)


def check(history: History, observed: Observed) -> CheckReport:
    """Check ``history`` against what the cluster holds; return every violation found."""
    problems: list[str] = []
    _check_log(observed, problems)
    compared = _check_nodes(observed, problems)
    tally = _check_requests(history, observed, problems)
    timestamps = _check_reads(history.reads, observed, problems)
    checked = {
        "versions": observed.log_latest - observed.log_earliest + 1,
        "digests_compared": compared,
        **tally,
        "read_timestamps": timestamps,
    }
    return CheckReport(problems, checked)


def _committed_by(record: RequestRecord | None) -> int | str | None:
    """The version a request key says committed the request; "refused"; or None (no key)."""
    if record is None:
        return None
    return "refused" if record.refused else record.version
