"""Errors raised by the update log.

::

    UpdateLogError                      code
    ├── VersionConflictError            VERSION_CONFLICT
    ├── LogCompactedError               VERSION_COMPACTED
    ├── StorageUnavailableError         STORAGE_UNAVAILABLE
    │   └── UnknownOutcomeError         STORAGE_UNAVAILABLE (a write that may have committed)
    ├── UpdateTooLargeError             UPDATE_TOO_LARGE
    ├── StoreQuotaExceededError         STORE_QUOTA_EXCEEDED
    ├── FormatError                     FORMAT_ERROR
    ├── SettingsMismatchError           SETTINGS_MISMATCH
    ├── StoreRegressedError             STORE_REGRESSED
    ├── StoreNotEmptyError              STORE_NOT_EMPTY (``updatelog.seed``)
    └── InvalidStoreUrlError            INVALID_STORE_URL

Every error carries a stable ``code`` that the REST layer maps to an HTTP status.
"""

from __future__ import annotations


class UpdateLogError(Exception):
    """Root of every error the update log raises."""

    code: str = "UPDATE_LOG_ERROR"

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class VersionConflictError(UpdateLogError):
    """A compare-and-set lost: someone else moved the guarded key first."""

    code = "VERSION_CONFLICT"


class LogCompactedError(UpdateLogError):
    """The requested version is older than the snapshot and no longer retained."""

    code = "VERSION_COMPACTED"

    def __init__(self, message: str, *, earliest_version: int) -> None:
        super().__init__(message)
        self.earliest_version = earliest_version


class StorageUnavailableError(UpdateLogError):
    """The store did not answer within the bounded timeouts and retries."""

    code = "STORAGE_UNAVAILABLE"


class UnknownOutcomeError(StorageUnavailableError):
    """A write got no answer: it may or may not have committed (read back to tell)."""


class UpdateTooLargeError(UpdateLogError):
    """The store refused a request as too large, or a value is over the log's hard limit.

    A definite refusal: nothing was written.
    """

    code = "UPDATE_TOO_LARGE"


class StoreQuotaExceededError(UpdateLogError):
    """The store refused a write because it is full (etcd's space quota, a full disk).

    A definite refusal: nothing was written. Compaction (a snapshot) frees room.
    """

    code = "STORE_QUOTA_EXCEEDED"


class FormatError(UpdateLogError):
    """A stored or received value is corrupted, or of an unknown or newer format version."""

    code = "FORMAT_ERROR"


class SettingsMismatchError(UpdateLogError):
    """This node is configured differently from the cluster settings stored in the log."""

    code = "SETTINGS_MISMATCH"


class StoreRegressedError(UpdateLogError):
    """The store went back in time under this node (``updatelog.cluster``): it stopped.

    Attributes:
        store_version: the store's latest version when it was noticed.
        applied_version: the latest version this node had applied.
    """

    code = "STORE_REGRESSED"

    def __init__(self, message: str, *, store_version: int, applied_version: int) -> None:
        super().__init__(message)
        self.store_version = store_version
        self.applied_version = applied_version


class InvalidStoreUrlError(UpdateLogError):
    """The store URL cannot be understood."""

    code = "INVALID_STORE_URL"
