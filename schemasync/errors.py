"""Errors raised by schema synchronisation.

::

    SchemaSyncError                  code
    └── TimestampTooFarError         TIMESTAMP_IN_FUTURE
"""

from __future__ import annotations


class SchemaSyncError(Exception):
    """Root of the errors schema synchronisation raises."""

    code = "SCHEMA_SYNC_ERROR"

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class TimestampTooFarError(SchemaSyncError):
    """A read asked for a timestamp too far ahead of this node's clock to wait for."""

    code = "TIMESTAMP_IN_FUTURE"
