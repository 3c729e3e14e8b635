"""Store URLs: parse ``sqlite://`` and ``etcd://`` URLs and open the matching ``UpdateLog``.

::

    sqlite:///relative/path/catalog.db        path relative to the working directory
    sqlite:////absolute/path/catalog.db       absolute path (the path keeps its leading "/")
    sqlite:///path.db?timeout=5                busy timeout in seconds
    etcd://h1:2379,h2:2379,[::1]:2379/prefix?ca=..&cert=..&key=..&user=..&password=..&timeout=..
    ...?user=..&password_file=/run/secrets/etcd  the password read from a file
    ...?max_request_bytes=65536               the store's request limit (larger values: chunks)
    ...?request_ttl=86400                      how long a request id keeps its outcome (s)

A password in the URL shows in the process list when the URL is given on the command line;
``password_file`` (or the URL in ``CATALOG_STORE``) keeps it out.

Everything after ``sqlite:///`` is the file path, as in SQLAlchemy. An etcd host without a port
uses 2379. The path of an etcd URL is the key prefix, so several catalogs can share one etcd.
Percent-escapes are decoded in paths, prefixes and parameters.
"""

from __future__ import annotations

import ipaddress
import math
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import parse_qsl, unquote, unquote_plus, urlsplit

from updatelog.errors import InvalidStoreUrlError, StorageUnavailableError
from updatelog.etcd_credentials import EtcdCredentials
from updatelog.kv_log import DEFAULT_REQUEST_TTL_S
from updatelog.kv_sqlite import DEFAULT_MAX_REQUEST_BYTES as DEFAULT_SQLITE_REQUEST_BYTES
from updatelog.log import UpdateLog
from updatelog.sqlite import SqliteUpdateLog

DEFAULT_ETCD_PORT = 2379
DEFAULT_TIMEOUT_S = 5.0

_SQLITE_PARAMS = frozenset({"timeout", "max_request_bytes", "request_ttl"})
_ETCD_PARAMS = _SQLITE_PARAMS | {"ca", "cert", "key", "user", "password", "password_file"}


@dataclass(frozen=True, slots=True)
class EtcdUrl:
    """A parsed ``etcd://`` store URL.

    Attributes:
        endpoints: ``(host, port)`` of every etcd member to try, in URL order. IPv6 hosts are
            given without brackets.
        prefix: the key prefix (no leading or trailing ``/``), empty for none.
        ca: path of the CA bundle that verifies the server certificates (enables TLS).
        cert: path of the client certificate (TLS client authentication).
        key: path of the client certificate's private key.
        user: etcd user name for etcd authentication.
        password: that user's password (given, or read from ``password_file``).
        timeout_s: bound of every etcd call, in seconds.
    """

    endpoints: list[tuple[str, int]]
    prefix: str = ""
    ca: str | None = None
    cert: str | None = None
    key: str | None = None
    user: str | None = None
    password: str | None = field(default=None, repr=False)
    timeout_s: float = DEFAULT_TIMEOUT_S
    max_request_bytes: int | None = None
    """The members' ``--max-request-bytes`` when not etcd's default (1.5 MiB)."""
    request_ttl_s: float = DEFAULT_REQUEST_TTL_S
    """How long a request id keeps its outcome (``?request_ttl=`` seconds; 24 h)."""

    @property
    def credentials(self) -> EtcdCredentials:
        """Return the TLS files and user the URL gives."""
        return EtcdCredentials(self.ca, self.cert, self.key, self.user, self.password)


@dataclass(frozen=True, slots=True)
class SqliteUrl:
    """A parsed ``sqlite://`` store URL.

    Attributes:
        path: the database file, as written in the URL (relative paths stay relative).
        timeout_s: how long an operation waits for another writer's lock, in seconds.
    """

    path: Path
    timeout_s: float = DEFAULT_TIMEOUT_S
    max_request_bytes: int | None = None
    """Values above this are written as chunks (default 4 MiB)."""
    request_ttl_s: float = DEFAULT_REQUEST_TTL_S
    """How long a request id keeps its outcome (``?request_ttl=`` seconds; 24 h)."""


StoreUrl = EtcdUrl | SqliteUrl


def _bad(url: str, why: str) -> InvalidStoreUrlError:
    return InvalidStoreUrlError(f"invalid store URL {_redact(url)!r}: {why}")


def _redact(url: str) -> str:
    """Hide a password in a URL, so it never reaches an error message or a log."""
    head, sep, query = url.partition("?")
    if not sep:
        return url
    # The name is compared decoded: "pass%77ord" is the same parameter to the parser.
    parts = [
        "password=***" if unquote_plus(part.split("=", 1)[0]).strip() == "password" else part
        for part in query.split("&")
    ]
    return f"{head}?{'&'.join(parts)}"


def _params(url: str, query: str, allowed: frozenset[str]) -> dict[str, str]:
    params: dict[str, str] = {}
    try:
        pairs = parse_qsl(query, keep_blank_values=True, strict_parsing=bool(query))
    except ValueError as e:
        raise _bad(url, f"malformed query string ({e})") from None
    for name, value in pairs:
        if name not in allowed:
            known = ", ".join(sorted(allowed))
            raise _bad(url, f"unknown parameter {name!r} (known: {known})")
        if name in params:
            raise _bad(url, f"parameter {name!r} is given twice")
        if not value:
            raise _bad(url, f"parameter {name!r} is empty")
        params[name] = value
    return params


def _timeout(url: str, params: dict[str, str]) -> float:
    return _seconds(url, params, "timeout", DEFAULT_TIMEOUT_S)


def _seconds(url: str, params: dict[str, str], name: str, default: float) -> float:
    raw = params.get(name)
    if raw is None:
        return default
    try:
        value = float(raw)
    except ValueError:
        raise _bad(url, f"{name} {raw!r} is not a number of seconds") from None
    if not math.isfinite(value) or value <= 0:
        raise _bad(url, f"{name} must be a positive number of seconds, got {raw!r}")
    return value


def _endpoint(url: str, text: str) -> tuple[str, int]:
    if text.startswith("["):
        host, sep, rest = text[1:].partition("]")
        if not sep:
            raise _bad(url, f"endpoint {text!r} has an unclosed '['")
        try:
            ipaddress.IPv6Address(host)
        except ValueError:
            raise _bad(url, f"endpoint {text!r} is not a valid IPv6 address") from None
        if rest and not rest.startswith(":"):
            raise _bad(url, f"endpoint {text!r}: expected ':port' after ']'")
        port_text = rest[1:] if rest else None
    else:
        host, sep, port_part = text.partition(":")
        if ":" in port_part:
            raise _bad(url, f"endpoint {text!r}: write IPv6 addresses in brackets, [::1]:2379")
        port_text = port_part if sep else None
    if not host:
        raise _bad(url, f"endpoint {text!r} has no host")
    if port_text is None:
        return host, DEFAULT_ETCD_PORT
    if not port_text.isascii() or not port_text.isdigit() or not 0 < int(port_text) < 65536:
        raise _bad(url, f"endpoint {text!r} has an invalid port {port_text!r}")
    return host, int(port_text)


def _parse_etcd(url: str, netloc: str, path: str, query: str) -> EtcdUrl:
    if "@" in netloc:
        raise _bad(url, "put credentials in ?user=...&password=..., not before the host")
    if not netloc:
        raise _bad(url, "no etcd endpoint; expected etcd://host:port[,host:port...]/prefix")
    endpoints = [_endpoint(url, part) for part in netloc.split(",")]
    if len(set(endpoints)) != len(endpoints):
        raise _bad(url, "an endpoint is listed twice")
    prefix = unquote(path).strip("/")
    if any(ord(ch) < 0x20 or ch == "\x7f" for ch in prefix):
        raise _bad(url, "the prefix contains control characters")
    params = _params(url, query, _ETCD_PARAMS)
    if ("cert" in params) != ("key" in params):
        raise _bad(url, "cert and key must be given together")
    if "password" in params and "password_file" in params:
        raise _bad(url, "give password or password_file, not both")
    password = params.get("password")
    if "password_file" in params:
        password = _read_password(url, params["password_file"])
    if ("user" in params) != (password is not None):
        raise _bad(url, "user and password (or password_file) must be given together")
    return EtcdUrl(
        endpoints=endpoints,
        prefix=prefix,
        ca=params.get("ca"),
        cert=params.get("cert"),
        key=params.get("key"),
        user=params.get("user"),
        password=password,
        timeout_s=_timeout(url, params),
        max_request_bytes=_size(url, params),
        request_ttl_s=_seconds(url, params, "request_ttl", DEFAULT_REQUEST_TTL_S),
    )


def _read_password(url: str, path: str) -> str:
    """Return the password kept in the file at ``path`` (its first line)."""
    try:
        with open(path, encoding="utf-8") as f:
            password = f.readline().rstrip("\r\n")
    except OSError as e:
        raise _bad(url, f"cannot read password_file {path}: {e.strerror}") from None
    if not password:
        raise _bad(url, f"password_file {path} is empty")
    return password


def _size(url: str, params: dict[str, str]) -> int | None:
    raw = params.get("max_request_bytes")
    if raw is None:
        return None
    if not raw.isascii() or not raw.isdigit() or not 4096 <= int(raw) <= 2**31:
        raise _bad(url, f"max_request_bytes must be a whole number of bytes >= 4096, got {raw!r}")
    return int(raw)


def _parse_sqlite(url: str, netloc: str, path: str, query: str) -> SqliteUrl:
    if netloc:
        raise _bad(url, "a SQLite URL names a file, not a host: write sqlite:///path/catalog.db")
    # urlsplit leaves "/relative.db" for sqlite:///relative.db and "//abs.db" for
    # sqlite:////abs.db; dropping the one slash that ends "sqlite://" gives the file path.
    file_path = unquote(path[1:] if path.startswith("/") else path)
    if not file_path or file_path.endswith("/"):
        raise _bad(url, "no database file; expected sqlite:///path/catalog.db")
    if file_path == ":memory:" or file_path.startswith("file:"):
        raise _bad(url, "the store must be a durable file that other processes can open")
    if "\x00" in file_path:
        raise _bad(url, "the path contains a NUL character")
    params = _params(url, query, _SQLITE_PARAMS)
    return SqliteUrl(
        path=Path(file_path),
        timeout_s=_timeout(url, params),
        max_request_bytes=_size(url, params),
        request_ttl_s=_seconds(url, params, "request_ttl", DEFAULT_REQUEST_TTL_S),
    )


def parse_store_url(url: str) -> StoreUrl:
    """Parse a store URL without opening anything.

    Args:
        url: ``sqlite:///path/catalog.db`` or ``etcd://host:port[,host:port...][/prefix][?...]``.

    Returns:
        ``SqliteUrl`` or ``EtcdUrl``.

    Raises:
        InvalidStoreUrlError: the URL is malformed, has an unknown scheme or parameter, or
            gives inconsistent options; the message says which.
    """
    if not isinstance(url, str) or not url:
        raise InvalidStoreUrlError("the store URL is empty; expected sqlite:///... or etcd://...")
    if url != url.strip() or any(ord(ch) < 0x20 for ch in url):
        raise _bad(url, "it contains whitespace or control characters")
    scheme, sep, _ = url.partition("://")
    if not sep:
        raise _bad(url, "expected sqlite:///path/catalog.db or etcd://host:port/prefix")
    try:
        parts = urlsplit(url)
    except ValueError as e:
        raise _bad(url, str(e)) from None
    if parts.fragment:
        raise _bad(url, "a store URL has no '#fragment'")
    if scheme == "sqlite":
        return _parse_sqlite(url, parts.netloc, parts.path, parts.query)
    if scheme == "etcd":
        return _parse_etcd(url, parts.netloc, parts.path, parts.query)
    raise _bad(url, f"unknown scheme {scheme!r}; expected 'sqlite' or 'etcd'")


def open_log(url: str) -> UpdateLog:
    """Open the update log a store URL names.

    A SQLite file and its parent directory are created if missing. The etcd backend is
    imported only when an ``etcd://`` URL is opened, so the SQLite store needs no etcd client.

    Args:
        url: a store URL, see ``parse_store_url``.

    Returns:
        A ``SqliteUpdateLog`` or an ``EtcdUpdateLog``; close it with ``await log.close()``.

    Raises:
        InvalidStoreUrlError: the URL is invalid, or names etcd without the etcd extra installed.
        StorageUnavailableError: the store cannot be reached or opened.
        FormatError: the store was written by a newer release or is not a catalog store.
    """
    parsed = parse_store_url(url)
    if isinstance(parsed, SqliteUrl):
        try:
            parsed.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise StorageUnavailableError(
                f"cannot create the directory of {parsed.path}: {e}"
            ) from e
        return SqliteUpdateLog(
            parsed.path,
            busy_timeout_s=parsed.timeout_s,
            max_request_bytes=parsed.max_request_bytes or DEFAULT_SQLITE_REQUEST_BYTES,
            request_ttl_s=parsed.request_ttl_s,
        )
    try:
        from updatelog.etcd import EtcdUpdateLog
    except ModuleNotFoundError as e:
        if e.name is not None and e.name.split(".")[0] == "updatelog":
            raise
        raise InvalidStoreUrlError(
            f"etcd:// needs the etcd client ({e.name} is missing): "
            "pip install 'event-catalog[etcd]'"
        ) from e
    # Connects lazily, on the first call. Without a limit in the URL, etcd's default applies.
    limit = {"max_request_bytes": parsed.max_request_bytes} if parsed.max_request_bytes else {}
    return EtcdUpdateLog(
        parsed.endpoints,
        prefix=parsed.prefix,
        credentials=parsed.credentials,
        timeout_s=parsed.timeout_s,
        request_ttl_s=parsed.request_ttl_s,
        **limit,
    )
