"""``Listing``: what one read of the log's keys tells a watch."""

from __future__ import annotations

from dataclasses import dataclass

from updatelog.log import LogEntry


@dataclass(frozen=True, slots=True)
class Listing:
    """Updates from one version on, and the log's bounds, all read at one store revision."""

    revision: int
    snapshot_version: int
    safe_time: int
    entries: list[LogEntry]
    more: bool
