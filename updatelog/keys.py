"""The key layout of the update log: the one place that builds the log's keys.

Both backends store the same keys (docs/design.md, "Storage: the update log"), so an etcd dump and
an SQLite file read the same way. The log's own keys::

    <prefix>/catalog.version            latest version N
    <prefix>/catalog.update.<N>         update N, or a manifest naming its chunks
    <prefix>/catalog.snapshot.version   earliest retained version S
    <prefix>/catalog.snapshot.<S>       the snapshot at S, or a manifest naming its chunks
    <prefix>/catalog.chunk.<tag>.<i>    chunk i of a large value (tag: u<N>.<id> or s<S>.<id>)
    <prefix>/catalog.safe_time          schema safe time
    <prefix>/catalog.request.<id>       version that committed request <id>
    <prefix>/catalog.settings           cluster settings

What lives beside the log in the same store is keyed by the package that owns it, under a
subspace the layout hands out (``KeyLayout.subspace``): ``catalog.data.`` (data commits,
``catalog/data/keys.py``), ``catalog.nodes.`` (the node registry,
``catalog/runtime/registry_entries.py``) and ``catalog.auth.`` (the API's token-signing keys).
The log knows none of their meanings; an owner whose records carry request ids registers their
prefix with the log's garbage collection (``KvUpdateLog.collect_requests_under``).

Version numbers in update keys are zero-padded to ``VERSION_DIGITS`` digits so that byte order
of the keys equals numeric order and one range read returns versions in order. Keys are
``str``; backends encode them as UTF-8, whose byte order matches code-point order.

Integers stored as values (version, safe time) use ``encode_u64``: 8 bytes, big-endian,
unsigned, so comparing two encoded values byte by byte (as etcd's ``Compare`` does) orders them
numerically.
"""

from __future__ import annotations

from updatelog.errors import FormatError

VERSION_DIGITS = 20
"""Width of the zero-padded version in update keys: enough for every unsigned 64-bit value."""

U64_MAX = 2**64 - 1

_CATALOG = "catalog."
_LOG_NAMES = frozenset(
    {"version", "update", "snapshot", "chunk", "safe_time", "request", "settings", "cluster"}
)


def encode_u64(value: int) -> bytes:
    """Encode ``value`` as 8 big-endian bytes, so byte order equals numeric order.

    Args:
        value: an integer in ``0..2**64-1``.

    Returns:
        The fixed-width encoding.

    Raises:
        ValueError: ``value`` is negative or does not fit in 64 bits.
    """
    if not 0 <= value <= U64_MAX:
        raise ValueError(f"{value} does not fit in an unsigned 64-bit integer")
    return value.to_bytes(8, "big")


def decode_u64(data: bytes) -> int:
    """Decode 8 big-endian bytes written by ``encode_u64``.

    Args:
        data: exactly 8 bytes.

    Returns:
        The integer.

    Raises:
        FormatError: ``data`` is not exactly 8 bytes long.
    """
    if len(data) != 8:
        raise FormatError(f"expected an 8-byte unsigned integer, got {len(data)} bytes")
    return int.from_bytes(data, "big")


def check_int(name: str, value: int, low: int) -> None:
    """Raise ValueError unless ``value`` is an int in ``low..U64_MAX``."""
    if type(value) is not int or not low <= value <= U64_MAX:
        raise ValueError(f"{name} must be an integer in {low}..{U64_MAX}, got {value!r}")


def check_key_part(what: str, name: str) -> str:
    """Return ``name``, a part of a key, unless it is empty or holds control characters.

    Raises:
        ValueError: ``name`` is empty or holds control characters.
    """
    if not name:
        raise ValueError(f"{what} must not be empty")
    if any(ord(ch) < 0x20 or ch == "\x7f" for ch in name):
        raise ValueError(f"{what} {name!r} contains control characters")
    return name


class KeyLayout:
    """Builds every key of one catalog, under an optional prefix.

    The prefix lets several catalogs share one etcd (or one SQLite file). Leading and trailing
    slashes are ignored, so ``"a/b"``, ``"/a/b"`` and ``"a/b/"`` name the same catalog; a
    non-empty prefix is joined to the key names with ``"/"``.

    Args:
        prefix: the catalog's key prefix; empty for none.

    Raises:
        ValueError: the prefix contains control characters.
    """

    def __init__(self, prefix: str = "") -> None:
        normalized = prefix.strip("/")
        if normalized:
            check_key_part("key prefix", normalized)
        self.prefix = normalized
        self._base = f"{normalized}/{_CATALOG}" if normalized else _CATALOG
        self.version = self._base + "version"
        self.snapshot_version = self._base + "snapshot.version"
        self.safe_time = self._base + "safe_time"
        self.settings = self._base + "settings"
        self.cluster = self._base + "cluster"
        self.update_prefix = self._base + "update."
        self.snapshot_prefix = self._base + "snapshot."
        self.chunk_prefix = self._base + "chunk."
        self.request_prefix = self._base + "request."
        # The API's signing keys: kept here until the API's server owns a key module of its
        # own; built as any owner builds its keys, under a subspace.
        self.auth_keys = self.subspace("auth") + "keys"

    def __repr__(self) -> str:
        return f"KeyLayout(prefix={self.prefix!r})"

    def subspace(self, name: str) -> str:
        """Return the key root an owner beside the log builds its own keys under.

        The log neither reads nor interprets those keys; they only share its prefix, so
        ``all_range`` covers them and several catalogs in one store stay apart.

        Args:
            name: the owner's name, e.g. ``"data"``; ASCII letters and underscores.

        Returns:
            ``<prefix>/catalog.<name>.``

        Raises:
            ValueError: ``name`` is empty, not made of letters and underscores, or names one of
                the log's own keys.
        """
        if not name or not name.replace("_", "").isascii() or not name.replace("_", "").isalpha():
            raise ValueError(f"a key subspace is named with letters and underscores, not {name!r}")
        if name in _LOG_NAMES:
            raise ValueError(f"{name!r} is one of the update log's own keys")
        return f"{self._base}{name}."

    @property
    def all_range(self) -> tuple[str, str]:
        """Return ``[start, end)`` covering every key of this catalog (and nothing else)."""
        return self._base, prefix_range_end(self._base)

    def update(self, version: int) -> str:
        """Return the key of update ``version``.

        Args:
            version: a version in ``0..10**VERSION_DIGITS-1``.

        Returns:
            ``<prefix>/catalog.update.<zero-padded version>``.

        Raises:
            ValueError: the version is negative or too large for the fixed width.
        """
        return f"{self.update_prefix}{_padded(version)}"

    def update_range(self, from_version: int, to_version: int) -> tuple[str, str]:
        """Return ``[start, end)`` keys covering updates ``from_version..to_version`` inclusive.

        Args:
            from_version: first version of the range.
            to_version: last version of the range (inclusive).

        Returns:
            The start key (inclusive) and the end key (exclusive), for a range read or delete.
        """
        return self.update(from_version), self.update(to_version + 1)

    def snapshot(self, version: int) -> str:
        """Return the key of the snapshot at ``version``."""
        return f"{self.snapshot_prefix}{_padded(version)}"

    def chunk_tag(self, kind: str, version: int, nonce: str) -> str:
        """Return the tag of one large value's chunks: ``u`` (update) or ``s`` (snapshot).

        Tags sort by kind, then version, so one range delete drops every chunk of the updates
        or snapshots older than a version.
        """
        if kind not in ("u", "s") or not nonce.isalnum():
            raise ValueError(f"bad chunk tag parts {kind!r}, {nonce!r}")
        return f"{kind}{_padded(version)}.{nonce}"

    def chunk(self, tag: str, index: int) -> str:
        """Return the key of chunk ``index`` of the value tagged ``tag``."""
        return f"{self.chunk_prefix}{tag}.{index:06d}"

    def chunks_before(self, kind: str, version: int) -> tuple[str, str]:
        """Return ``[start, end)`` covering the chunks of ``kind`` values before ``version``."""
        return f"{self.chunk_prefix}{kind}", f"{self.chunk_prefix}{kind}{_padded(version)}"

    def version_of_update(self, key: str) -> int:
        """Return the version encoded in an update key built by ``update``.

        Args:
            key: a key from this layout's update range.

        Returns:
            The version number.

        Raises:
            FormatError: ``key`` is not an update key of this layout.
        """
        digits = key[len(self.update_prefix) :]
        if (
            not key.startswith(self.update_prefix)
            or len(digits) != VERSION_DIGITS
            or not digits.isascii()
            or not digits.isdigit()
        ):
            raise FormatError(f"{key!r} is not an update key under {self.update_prefix!r}")
        return int(digits)

    def request(self, request_id: str) -> str:
        """Return the key recording which version committed ``request_id``.

        Args:
            request_id: a client-chosen idempotency key; not empty, no control characters.

        Returns:
            ``<prefix>/catalog.request.<request_id>``.

        Raises:
            ValueError: the request id is empty or contains control characters.
        """
        return self.request_prefix + check_key_part("request id", request_id)


def _padded(version: int) -> str:
    if not 0 <= version < 10**VERSION_DIGITS:
        raise ValueError(f"version {version} is outside 0..{10**VERSION_DIGITS - 1}")
    return f"{version:0{VERSION_DIGITS}d}"


def prefix_range_end(prefix: str) -> str:
    """Return the smallest key greater than every key that starts with ``prefix``.

    This is etcd's ``range_end`` for a prefix read, as a ``str``: the last character is
    incremented (keys here never end in U+10FFFF, as they are built from ASCII separators).

    Args:
        prefix: a non-empty key prefix.

    Returns:
        The exclusive end of the prefix range.

    Raises:
        ValueError: ``prefix`` is empty.
    """
    if not prefix:
        raise ValueError("an empty prefix has no range end")
    return prefix[:-1] + chr(ord(prefix[-1]) + 1)
