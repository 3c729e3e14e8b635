"""Server configuration from flags and the environment (flags win)."""

from __future__ import annotations

import os
import socket
from dataclasses import dataclass, field

from api.server.outside_tokens import OidcSettings
from catalog.data.warehouse import DEFAULT_WAREHOUSE, WAREHOUSE_ENV
from catalog.runtime.options import NodeOptions
from catalog.storage.descriptor_cache import DEFAULT_CACHE_SIZE
from schemasync.clock import HybridClock
from updatelog.url import SqliteUrl, parse_store_url

DEFAULT_STORE = "sqlite:///./data/catalog.db"


def _env_int(name: str, default: int) -> int:
    raw = os.environ.get(name)
    return default if raw is None or raw == "" else int(raw)


def _env_float(name: str, default: float) -> float:
    raw = os.environ.get(name)
    return default if raw is None or raw == "" else float(raw)


@dataclass(frozen=True)
class ServerSettings:
    """How ``catalog serve`` runs.

    Attributes:
        store: the update-log URL (``CATALOG_STORE``).
        node_name: this node's name (``CATALOG_NODE_NAME``; the host name by default).
        host: the bind address (``CATALOG_HOST``).
        port: the bind port (``CATALOG_PORT``).
        delay_ms: schema sync delay (``CATALOG_DELAY_MS``); fixed for the cluster's life.
        max_clock_skew_ms: maximum clock skew (``CATALOG_MAX_CLOCK_SKEW_MS``); likewise.
        max_body_bytes: the largest request body accepted (``CATALOG_MAX_BODY_BYTES``).
        clock_offset_ms: added to this node's wall clock (``CATALOG_CLOCK_OFFSET_MS``; 0). For
            fault-injection tests that give nodes skewed clocks; leave 0 in production.
        advertise_url: the address other nodes and clients reach this one at, published in
            the node registry (``CATALOG_ADVERTISE_URL``; ``http://{host}:{port}`` by default).
        registry_ttl_s: how long this node's registry entry outlives its last heartbeat
            (``CATALOG_REGISTRY_TTL_S``; 10).
        auth: bearer tokens: ``on``, ``off`` or ``auto`` (``CATALOG_AUTH``; the default: on for
            every bind address but loopback).
        token_secret_file: the file holding the token secret every server of the cluster
            shares (``CATALOG_TOKEN_SECRET_FILE``); needed when auth is on, so that store
            read access is not enough to sign tokens.
        allowed_hosts: with auth off, the ``Host`` names answered besides loopback names and
            the bind address (``CATALOG_ALLOWED_HOSTS``, comma-separated; none by default).
        max_commands: the most commands (or SQL statements) one batch may hold
            (``CATALOG_MAX_COMMANDS``; 1000).
        max_subscribers: the most event streams this node serves at once
            (``CATALOG_MAX_SUBSCRIBERS``; 256); more are refused with 503 and Retry-After.
        max_subscribers_per_principal: the most event streams one principal (a token's
            subject; with auth off, every caller alike) holds at once
            (``CATALOG_MAX_SUBSCRIBERS_PER_PRINCIPAL``; 32), so one client cannot take them all.
        max_inflight_ddl: the most DDL requests (``/v1/ddl``, ``/v1/sql``) this node works on
            at once (``CATALOG_MAX_INFLIGHT_DDL``; 256); more are refused with 429 and
            Retry-After.
        max_inflight_ddl_per_principal: the most DDL requests one principal has in flight
            at once (``CATALOG_MAX_INFLIGHT_DDL_PER_PRINCIPAL``; 32), so one client cannot
            hold up everyone else's changes.
        header_timeout_s: the longest a connection may take to send a request's line and
            headers, from when it opens or its last response completed
            (``CATALOG_HEADER_TIMEOUT_S``; 10); slower connections are closed.
        request_timeout_s: the longest a request may take before it is answered 504
            (``CATALOG_REQUEST_TIMEOUT_S``; 60); event streams and ready-waits have their own.
        ready_timeout_max_s: the longest wait ``/v1/versions/{N}/ready`` allows.
        sse_heartbeat_s: how often an idle event stream sends a keep-alive or a bookmark.
        sse_backlog_versions: how many versions an event stream may fall behind the catalog
            before it is cut off with its resume position.
        sse_send_timeout_s: how long an event stream waits for a subscriber that stopped
            reading before its connection is closed.
        descriptor_cache: how many recently read descriptors the node keeps decoded
            (``CATALOG_DESCRIPTOR_CACHE``; 4096, about 1 KB each for a table of six columns,
            up to twice as many held); size it to the tables read often.
        warehouse: the cluster's warehouse, the folder (or ``s3://bucket/prefix``, see
            ``docs/storage.md``) holding each table's data as ``<warehouse>/table_<id>``
            (``CATALOG_WAREHOUSE``). Recorded when the cluster is
            created; each table records its own folder (its location) when it is created, so
            jobs need only the catalog's URL and the table's name. None: the cluster's, or,
            for a new cluster, ``warehouse`` beside the SQLite file (``./warehouse`` on etcd).
        oidc_issuer: an outside OpenID Connect provider whose access tokens are accepted
            (``CATALOG_OIDC_ISSUER``; none by default), with the audience they must name
            (``CATALOG_OIDC_AUDIENCE``; ``event-catalog``), the groups that give each role
            (``CATALOG_OIDC_ROLES``, ``reader=analysts,writer=etl``), and the claims naming
            the caller and its groups (``CATALOG_OIDC_SUBJECT_CLAIM``, ``sub``;
            ``CATALOG_OIDC_GROUPS_CLAIM``, ``groups``). See ``api.server.outside_tokens``.
    """

    store: str = field(default_factory=lambda: os.environ.get("CATALOG_STORE", DEFAULT_STORE))
    node_name: str = field(
        default_factory=lambda: os.environ.get("CATALOG_NODE_NAME") or socket.gethostname()
    )
    host: str = field(default_factory=lambda: os.environ.get("CATALOG_HOST", "127.0.0.1"))
    port: int = field(default_factory=lambda: _env_int("CATALOG_PORT", 8000))
    delay_ms: int = field(default_factory=lambda: _env_int("CATALOG_DELAY_MS", 500))
    max_clock_skew_ms: int = field(
        default_factory=lambda: _env_int("CATALOG_MAX_CLOCK_SKEW_MS", 500)
    )
    max_body_bytes: int = field(
        default_factory=lambda: _env_int("CATALOG_MAX_BODY_BYTES", 1024 * 1024)
    )
    clock_offset_ms: int = field(default_factory=lambda: _env_int("CATALOG_CLOCK_OFFSET_MS", 0))
    advertise_url: str | None = field(
        default_factory=lambda: os.environ.get("CATALOG_ADVERTISE_URL") or None
    )
    registry_ttl_s: float = field(
        default_factory=lambda: _env_float("CATALOG_REGISTRY_TTL_S", 10.0)
    )
    auth: str = field(default_factory=lambda: os.environ.get("CATALOG_AUTH", "auto"))
    token_secret_file: str | None = field(
        default_factory=lambda: os.environ.get("CATALOG_TOKEN_SECRET_FILE") or None
    )
    allowed_hosts: frozenset[str] = field(
        default_factory=lambda: frozenset(
            h.strip() for h in os.environ.get("CATALOG_ALLOWED_HOSTS", "").split(",") if h.strip()
        )
    )
    max_commands: int = field(default_factory=lambda: _env_int("CATALOG_MAX_COMMANDS", 1000))
    max_subscribers: int = field(default_factory=lambda: _env_int("CATALOG_MAX_SUBSCRIBERS", 256))
    max_subscribers_per_principal: int = field(
        default_factory=lambda: _env_int("CATALOG_MAX_SUBSCRIBERS_PER_PRINCIPAL", 32)
    )
    max_inflight_ddl: int = field(default_factory=lambda: _env_int("CATALOG_MAX_INFLIGHT_DDL", 256))
    max_inflight_ddl_per_principal: int = field(
        default_factory=lambda: _env_int("CATALOG_MAX_INFLIGHT_DDL_PER_PRINCIPAL", 32)
    )
    header_timeout_s: float = field(
        default_factory=lambda: _env_float("CATALOG_HEADER_TIMEOUT_S", 10.0)
    )
    request_timeout_s: float = field(
        default_factory=lambda: _env_float("CATALOG_REQUEST_TIMEOUT_S", 60.0)
    )
    ready_timeout_max_s: float = 300.0
    sse_heartbeat_s: float = 15.0
    sse_backlog_versions: int = 10_000
    sse_send_timeout_s: float = 30.0
    descriptor_cache: int = field(
        default_factory=lambda: _env_int("CATALOG_DESCRIPTOR_CACHE", DEFAULT_CACHE_SIZE)
    )
    warehouse: str | None = field(default_factory=lambda: os.environ.get(WAREHOUSE_ENV) or None)
    oidc_issuer: str | None = field(
        default_factory=lambda: os.environ.get("CATALOG_OIDC_ISSUER") or None
    )
    oidc_audience: str = field(
        default_factory=lambda: os.environ.get("CATALOG_OIDC_AUDIENCE") or "event-catalog"
    )
    oidc_roles: str = field(default_factory=lambda: os.environ.get("CATALOG_OIDC_ROLES", ""))
    oidc_subject_claim: str = field(
        default_factory=lambda: os.environ.get("CATALOG_OIDC_SUBJECT_CLAIM") or "sub"
    )
    oidc_groups_claim: str = field(
        default_factory=lambda: os.environ.get("CATALOG_OIDC_GROUPS_CLAIM") or "groups"
    )

    def oidc(self) -> OidcSettings | None:
        """Return the outside identity provider the server trusts, if one is named.

        Raises:
            ValueError: ``oidc_roles`` is not ``ROLE=GROUP,...``.
        """
        if self.oidc_issuer is None:
            return None
        return OidcSettings(
            issuer=self.oidc_issuer,
            audience=self.oidc_audience,
            roles=OidcSettings.parse_roles(self.oidc_roles),
            subject_claim=self.oidc_subject_claim,
            groups_claim=self.oidc_groups_claim,
        )

    @property
    def address(self) -> str:
        """Return the URL this node publishes in the node registry."""
        return self.advertise_url or f"http://{self.host}:{self.port}"

    def node_options(self) -> NodeOptions:
        """Return the options of the catalog node this server runs."""
        return NodeOptions(
            delay_ms=self.delay_ms,
            max_clock_skew_ms=self.max_clock_skew_ms,
            clock=HybridClock(offset_ms=self.clock_offset_ms),
            address=self.address,
            registry_ttl_s=self.registry_ttl_s,
            descriptor_cache=self.descriptor_cache,
            warehouse=self.warehouse,
            default_warehouse=self.default_warehouse,
        )

    @property
    def default_warehouse(self) -> str:
        """Return the warehouse a new cluster records when none is named.

        That is ``warehouse`` beside the SQLite file, or ``./warehouse`` for etcd.
        """
        store = parse_store_url(self.store)
        if isinstance(store, SqliteUrl):
            return str(store.path.parent / "warehouse")
        return DEFAULT_WAREHOUSE
