"""Where data commits are kept: their keys, under the log's ``data`` subspace.

Beside the update log, in its store (``KeyLayout.subspace("data")``)::

    <prefix>/catalog.data.<T>.seq            latest data commit number of table <T>
    <prefix>/catalog.data.<T>.commit.<K>     data commit <K> of table <T> (zero-padded)
    <prefix>/catalog.data.request.<id>       data commit number that committed request <id>
    <prefix>/catalog.data.expiry             compactions whose unreachable data is still kept
    <prefix>/catalog.data.swept              the horizon up to which unreachable files went
    <prefix>/catalog.data.merged             the horizon up to which commits were merged

Commit numbers are zero-padded to ``VERSION_DIGITS`` so that one range read returns a table's
commits in order. These strings are stored: never change them.
"""

from __future__ import annotations

from updatelog.keys import U64_MAX, VERSION_DIGITS, KeyLayout, check_key_part

_LAST = 10**VERSION_DIGITS - 1


class DataKeys:
    """Builds every data-commit key of one catalog.

    Args:
        keys: the update log's key layout, whose ``data`` subspace holds them.
    """

    def __init__(self, keys: KeyLayout) -> None:
        self.prefix = keys.subspace("data")
        """The root of every data-commit key (a prefix range covers them all)."""
        self.request_prefix = self.prefix + "request."
        self.expiry = self.prefix + "expiry"
        self.swept = self.prefix + "swept"
        self.merged = self.prefix + "merged"

    def __repr__(self) -> str:
        return f"DataKeys(prefix={self.prefix!r})"

    def seq(self, table_id: int) -> str:
        """Return the key holding table ``table_id``'s latest data commit number."""
        return f"{self.prefix}{_checked_table(table_id)}.seq"

    def commit(self, table_id: int, seq: int) -> str:
        """Return the key of data commit ``seq`` of table ``table_id`` (zero-padded).

        Raises:
            ValueError: ``seq`` is negative or too large for the fixed width.
        """
        if not 0 <= seq <= _LAST:
            raise ValueError(f"data commit {seq} is outside 0..{_LAST}")
        return f"{self.prefix}{_checked_table(table_id)}.commit.{seq:0{VERSION_DIGITS}d}"

    def commit_range(self, table_id: int) -> tuple[str, str]:
        """Return ``[start, end)`` covering every data commit of table ``table_id``."""
        return self.commit(table_id, 0), self.commit(table_id, _LAST)

    def request(self, request_id: str) -> str:
        """Return the key recording which data commit committed ``request_id``.

        Raises:
            ValueError: the request id is empty or contains control characters.
        """
        return self.request_prefix + check_key_part("request id", request_id)


def _checked_table(table_id: int) -> int:
    if type(table_id) is not int or not 0 <= table_id <= U64_MAX:
        raise ValueError(f"table id must be an integer in 0..{U64_MAX}, got {table_id!r}")
    return table_id
