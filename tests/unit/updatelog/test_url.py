"""Store URL parsing: every accepted form and a clear InvalidStoreUrlError for the rest."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from updatelog import InvalidStoreUrlError, SqliteUpdateLog, open_log
from updatelog.url import DEFAULT_TIMEOUT_S, EtcdUrl, SqliteUrl, parse_store_url


@pytest.mark.parametrize(
    ("url", "path"),
    [
        ("sqlite:///catalog.db", "catalog.db"),
        ("sqlite:///./data/catalog.db", "data/catalog.db"),
        ("sqlite:////var/lib/catalog/catalog.db", "/var/lib/catalog/catalog.db"),
        ("sqlite:///dir%20with%20space/c.db", "dir with space/c.db"),
    ],
)
def test_sqlite_paths(url: str, path: str) -> None:
    assert parse_store_url(url) == SqliteUrl(path=Path(path), timeout_s=DEFAULT_TIMEOUT_S)


def test_sqlite_timeout() -> None:
    assert parse_store_url("sqlite:///c.db?timeout=0.5") == SqliteUrl(Path("c.db"), 0.5)


def test_etcd_full_url() -> None:
    url = (
        "etcd://h1:2379,h2:2380,[::1]:2381,h4/cat/alpha/"
        "?ca=/tls/ca.pem&cert=/tls/c.pem&key=/tls/c.key&user=root&password=s%26cret&timeout=2.5"
    )
    assert parse_store_url(url) == EtcdUrl(
        endpoints=[("h1", 2379), ("h2", 2380), ("::1", 2381), ("h4", 2379)],
        prefix="cat/alpha",
        ca="/tls/ca.pem",
        cert="/tls/c.pem",
        key="/tls/c.key",
        user="root",
        password="s&cret",
        timeout_s=2.5,
    )


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("etcd://127.0.0.1:2379", EtcdUrl(endpoints=[("127.0.0.1", 2379)])),
        ("etcd://127.0.0.1:2379/", EtcdUrl(endpoints=[("127.0.0.1", 2379)])),
        ("etcd://localhost/p", EtcdUrl(endpoints=[("localhost", 2379)], prefix="p")),
        ("etcd://[::1]/p", EtcdUrl(endpoints=[("::1", 2379)], prefix="p")),
    ],
)
def test_etcd_minimal_urls(url: str, expected: EtcdUrl) -> None:
    assert parse_store_url(url) == expected


def test_password_is_not_in_repr() -> None:
    parsed = parse_store_url("etcd://h:1/p?user=u&password=hunter2")
    assert "hunter2" not in repr(parsed)


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("", "empty"),
        ("catalog.db", "expected sqlite"),
        ("postgres://h/db", "unknown scheme 'postgres'"),
        (" sqlite:///c.db", "whitespace"),
        ("sqlite://host/c.db", "names a file, not a host"),
        ("sqlite:///", "no database file"),
        ("sqlite:///data/", "no database file"),
        ("sqlite:///:memory:", "durable file"),
        ("sqlite:///c.db?mode=ro", "unknown parameter 'mode'"),
        ("sqlite:///c.db?timeout=0", "positive"),
        ("sqlite:///c.db?timeout=nan", "positive"),
        ("sqlite:///c.db?timeout=soon", "not a number"),
        ("sqlite:///c.db?timeout=1&timeout=2", "given twice"),
        ("sqlite:///c.db#frag", "fragment"),
        ("etcd:///prefix", "no etcd endpoint"),
        ("etcd://h1:2379,,h2/p", "has no host"),
        ("etcd://h1:0/p", "invalid port"),
        ("etcd://h1:65536/p", "invalid port"),
        ("etcd://h1:http/p", "invalid port"),
        ("etcd://::1:2379/p", "brackets"),
        ("etcd://[::1/p", "Invalid IPv6"),
        ("etcd://[nothost]:2379/p", "IPv6"),
        ("etcd://[::1]x/p", "expected ':port'"),
        ("etcd://h1,h1:2379/p", "listed twice"),
        ("etcd://u:pw@h1/p", "user=...&password="),
        ("etcd://h1/p?cert=/c.pem", "cert and key"),
        ("etcd://h1/p?user=root", "user and password"),
        ("etcd://h1/p?ca=", "is empty"),
        ("etcd://h1/p?tls=1", "unknown parameter 'tls'"),
        ("etcd://h1/p%0Aq", "control characters"),
    ],
)
def test_bad_urls_say_why(url: str, message: str) -> None:
    with pytest.raises(InvalidStoreUrlError, match=message) as raised:
        parse_store_url(url)
    assert raised.value.code == "INVALID_STORE_URL"


@pytest.mark.parametrize("name", ["password", "pass%77ord", "%70assword"])
def test_password_is_not_in_error_messages(name: str) -> None:
    with pytest.raises(InvalidStoreUrlError) as raised:
        parse_store_url(f"etcd://h1/p?{name}=hunter2&user=root&bogus=1")
    assert "hunter2" not in str(raised.value)


def test_password_from_a_file(tmp_path: Path) -> None:
    secret = tmp_path / "etcd-password"
    secret.write_text("hunter2\n")
    parsed = parse_store_url(f"etcd://h1/p?user=root&password_file={secret}")
    assert isinstance(parsed, EtcdUrl) and parsed.password == "hunter2"
    with pytest.raises(InvalidStoreUrlError, match="cannot read password_file"):
        parse_store_url(f"etcd://h1/p?user=root&password_file={tmp_path}/missing")
    with pytest.raises(InvalidStoreUrlError, match="not both"):
        parse_store_url(f"etcd://h1/p?user=root&password=x&password_file={secret}")


def test_open_log_creates_the_parent_directory(tmp_path: Path) -> None:
    db = tmp_path / "nested" / "dir" / "catalog.db"
    log = open_log(f"sqlite:///{db}")
    try:
        assert isinstance(log, SqliteUpdateLog)
        assert db.exists()
    finally:
        asyncio.run(log.close())


def test_open_log_refuses_a_bad_url_before_touching_disk(tmp_path: Path) -> None:
    with pytest.raises(InvalidStoreUrlError):
        open_log(f"sqlite:///{tmp_path}/x/c.db?bogus=1")
    assert not (tmp_path / "x").exists()


def test_request_limit_and_request_ttl() -> None:
    parsed = parse_store_url("etcd://h:2379/p?max_request_bytes=65536&request_ttl=3600")
    assert isinstance(parsed, EtcdUrl)
    assert (parsed.max_request_bytes, parsed.request_ttl_s) == (65536, 3600.0)
    sqlite = parse_store_url("sqlite:///c.db?max_request_bytes=4096&request_ttl=1.5")
    assert isinstance(sqlite, SqliteUrl)
    assert (sqlite.max_request_bytes, sqlite.request_ttl_s) == (4096, 1.5)
    for bad in ("max_request_bytes=12", "max_request_bytes=x", "request_ttl=0", "request_ttl=x"):
        with pytest.raises(InvalidStoreUrlError, match=bad.split("=")[0]):
            parse_store_url(f"sqlite:///c.db?{bad}")
