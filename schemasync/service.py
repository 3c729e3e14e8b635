"""``SchemaSyncService``: exact reads "as of T" and the completion gate of DDL.

Two rules from docs/design.md ("Time"):

- **Metadata completeness.** A catalog version is active from ``u + delay`` where ``u`` is
  its proposal timestamp, and every append requires ``catalog.safe_time < u``. So once this
  node has observed safe time ``>= T - delay`` (and applied every version before it), no
  version active at ``T`` can still appear: ``active_catalog(T)`` is final.
- **Cluster-wide activation.** A command completes once the local clock has passed
  ``activation + max_clock_skew``; then every node's clock has passed ``activation``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging

from schemasync.clock import (
    LOGICAL_BITS,
    Clock,
    describe_ts,
    logical_of,
    physical_of,
    wait_until,
)
from schemasync.errors import TimestampTooFarError
from schemasync.watermark import Watermark
from updatelog.cluster import regressed
from updatelog.errors import StorageUnavailableError
from updatelog.log import UpdateLog

log = logging.getLogger(__name__)


def ms_to_hlc(ms: int) -> int:
    """Return a duration of ``ms`` milliseconds in hybrid-timestamp units."""
    return ms << LOGICAL_BITS


def ensured_activation(activation_ts: int, max_clock_skew_ms: int) -> int:
    """Return ``activation + skew`` rounded up to a whole millisecond (as Ignite does).

    Rounding up keeps nodes from disagreeing on the logical part (IGNITE-21084).
    """
    ts = activation_ts + ms_to_hlc(max_clock_skew_ms)
    return ts if logical_of(ts) == 0 else ms_to_hlc(physical_of(ts) + 1)


class SchemaSyncService:
    """Waits that make catalog reads at a timestamp exact.

    Args:
        log: the update log (its safe-time key).
        clock: this node's clock.
        delay_ms: the schema sync delay, fixed for the cluster's life.
        max_clock_skew_ms: the largest clock difference between nodes, fixed likewise.
        applied: the version applied locally (listeners finished).
        observed_safe_time: the safe time this node has observed with every earlier version
            applied; the catalog service advances it from the log's watch.
    """

    def __init__(
        self,
        log: UpdateLog,
        clock: Clock,
        *,
        delay_ms: int,
        max_clock_skew_ms: int,
        applied: Watermark,
        observed_safe_time: Watermark,
    ) -> None:
        self._log = log
        self.clock = clock
        self.delay_ms = delay_ms
        self.max_clock_skew_ms = max_clock_skew_ms
        self._applied = applied
        self.observed_safe_time = observed_safe_time
        self._ticker: asyncio.Task[None] | None = None
        self._halted: Exception | None = None

    async def wait_for_metadata_completeness(self, ts: int) -> None:
        """Wait until every catalog version active at ``ts`` is applied on this node.

        Returns at once when the observed safe time already covers ``ts - delay``. Otherwise
        waits for the local clock to reach ``ts - delay``, raises the log's safe time to it
        (never lowering it), and waits for the version the log reports to be applied.

        Raises:
            TimestampTooFarError: ``ts`` is beyond now + delay + max clock skew.
            StorageUnavailableError: the log could not be reached.
            StoreRegressedError: the log is below the version this node applied.
            Exception: the error this service was halted with (``halt``).
        """
        if self._halted is not None:
            raise self._halted
        target = ts - ms_to_hlc(self.delay_ms)
        if self.observed_safe_time.value >= target:
            return
        horizon = self.clock.now() + ms_to_hlc(self.delay_ms + self.max_clock_skew_ms)
        if ts > horizon:
            raise TimestampTooFarError(
                f"timestamp {describe_ts(ts)} is beyond this node's clock plus delay and skew "
                f"({describe_ts(horizon)}); a read cannot push safe time past its own clock"
            )
        await wait_until(self.clock, target)
        result = await self._log.raise_safe_time(target)
        went_back = regressed(result.version, self._applied.value, str(self._log))
        if went_back is not None:  # this node applied versions the store no longer has
            raise went_back
        await self._applied.wait_for(result.version)
        # Everything proposed at or before the raised safe time is in versions <= result.version,
        # all applied now; the watch will confirm the same value shortly.
        self.observed_safe_time.advance(min(result.safe_time, target))

    async def wait_for_activation(self, activation_ts: int) -> None:
        """Wait until the local clock passes ``activation + max_clock_skew`` (rounded up)."""
        await wait_until(self.clock, ensured_activation(activation_ts, self.max_clock_skew_ms))

    def start_ticker(self, interval_ms: int | None = None) -> None:
        """Keep the log's safe time near ``now - delay/2`` so reads at "now" need not wait.

        Does nothing when the delay is 0: safe time would then race every writer's proposal.
        """
        if self.delay_ms <= 0 or self._ticker is not None:
            return
        period = (interval_ms if interval_ms is not None else max(self.delay_ms // 4, 10)) / 1000
        self._ticker = asyncio.get_running_loop().create_task(
            self._tick_forever(period), name="safe-time-ticker"
        )

    async def _tick_forever(self, period_s: float) -> None:
        while True:
            await asyncio.sleep(period_s)
            target = self.clock.now() - ms_to_hlc(self.delay_ms // 2)
            try:
                await self._log.raise_safe_time(target)
            except StorageUnavailableError as e:
                log.warning("safe-time ticker: %s", e)

    def halt(self, error: Exception) -> None:
        """Refuse every later wait with ``error`` and stop raising the log's safe time.

        For a log that went back in time: the node must write nothing more to it, and raising
        its safe time to complete a read is a write.
        """
        self._halted = error
        if self._ticker is not None:
            self._ticker.cancel()

    async def close(self) -> None:
        """Stop the ticker. Idempotent."""
        ticker, self._ticker = self._ticker, None
        if ticker is not None:
            ticker.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await ticker
