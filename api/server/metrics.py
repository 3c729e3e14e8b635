"""Prometheus metrics of one node, on a registry of its own (several apps may share a process)."""

from __future__ import annotations

import time

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily
from prometheus_client.registry import Collector

from catalog.runtime.node import CatalogNode
from schemasync.clock import physical_of


class _NodeCollector(Collector):
    """Reads the node's state at scrape time, so the numbers are never stale."""

    def __init__(self) -> None:
        self.node: CatalogNode | None = None
        self.log_latest = 0

    def collect(self):  # type: ignore[no-untyped-def]  # prometheus_client's own signature
        node = self.node
        if node is None:
            return
        service = node.service
        stats = node.manager.stats
        yield CounterMetricFamily(
            "catalog_cas_conflicts",
            "Appends that lost the compare-and-set",
            value=stats["conflicts"],
        )
        yield CounterMetricFamily(
            "catalog_cas_retries", "Batches re-validated after a lost CAS", value=stats["retries"]
        )
        yield CounterMetricFamily(
            "catalog_appends", "Versions this node tried to append", value=stats["appends"]
        )
        yield CounterMetricFamily(
            "catalog_merged_requests",
            "Requests that rode along in a group commit",
            value=stats["merged"],
        )
        yield GaugeMetricFamily(
            "catalog_latest_version", "Latest version applied here", value=service.latest_version
        )
        yield GaugeMetricFamily(
            "catalog_earliest_version", "Earliest retained version", value=service.earliest_version
        )
        yield GaugeMetricFamily(
            "catalog_apply_lag_versions",
            "Versions in the log not yet applied here (as of the last scrape)",
            value=max(0, self.log_latest - service.latest_version),
        )
        safe = service.observed_safe_time.value
        lag_ms = physical_of(node.clock.now()) - physical_of(safe) if safe else 0
        yield GaugeMetricFamily(
            "catalog_safe_time_lag_ms", "Local clock minus the observed safe time", value=lag_ms
        )
        yield GaugeMetricFamily(
            "catalog_ready", "1 when the node serves reads", value=int(node.ready)
        )
        yield GaugeMetricFamily(
            "catalog_store_regressed",
            "1 once the store went back in time under this node (it stopped; restart it)",
            value=int(service.regression is not None),
        )


LOG_READ_INTERVAL_S = 1.0
"""How often ``/metrics`` reads the log's latest version from the store at most."""


class ApiMetrics:
    """The metrics an app exports at ``/metrics``."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        self.ddl = Counter(
            "catalog_ddl_commands",
            "DDL commands by op and outcome (ok, noop, or an error code)",
            ["op", "outcome"],
            registry=self.registry,
        )
        self.execute_seconds = Histogram(
            "catalog_execute_seconds",
            "Time from receiving a DDL batch to answering it",
            registry=self.registry,
            buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 1.5, 2, 5, 10),
        )
        self.iceberg_reports = Counter(
            "catalog_iceberg_metrics_reports",
            "Iceberg clients' metrics reports received, by report type (scan-report, ...)",
            ["report_type"],
            registry=self.registry,
        )
        self.auth_denials = Counter(
            "catalog_auth_denials",
            "Requests and sign-ins refused (UNAUTHENTICATED, FORBIDDEN, invalid_client, ...)",
            ["code"],
            registry=self.registry,
        )
        self.sse_subscribers = Gauge(
            "catalog_sse_subscribers", "Open event streams", registry=self.registry
        )
        self._node = _NodeCollector()
        self.registry.register(self._node)
        self._log_read_at = float("-inf")

    def bind(self, node: CatalogNode) -> None:
        """Export ``node``'s state."""
        self._node.node = node

    async def render(self) -> bytes:
        """Return the exposition text.

        What needs a store read is refreshed at most once a second, so frequent scrapes
        cost the store nothing more.
        """
        node = self._node.node
        if node is not None and time.monotonic() - self._log_read_at >= LOG_READ_INTERVAL_S:
            self._log_read_at = time.monotonic()
            self._node.log_latest = await node.log.latest_version()
        return generate_latest(self.registry)

    def record(self, ops: list[str], outcomes: list[str], started: float) -> None:
        """Count one batch's commands and observe its latency."""
        for op, outcome in zip(ops, outcomes, strict=True):
            self.ddl.labels(op=op, outcome=outcome).inc()
        self.execute_seconds.observe(time.perf_counter() - started)
