"""The S3 store of a warehouse on S3: where it is, and the keys that open it.

The catalog reads its own keys as every S3 tool does: ``AWS_ACCESS_KEY_ID``,
``AWS_SECRET_ACCESS_KEY`` (and ``AWS_SESSION_TOKEN``), or a credentials file
(``AWS_SHARED_CREDENTIALS_FILE``, ``AWS_PROFILE``), with ``AWS_REGION``. A store other than
AWS is named by ``CATALOG_S3_ENDPOINT`` (``http://127.0.0.1:8333``), and
``CATALOG_S3_PATH_STYLE`` (``true``, the default with an endpoint) addresses buckets in the
path rather than the host name. Keys are never written to the log nor printed: every message
of the store is passed through ``redacted`` before it is shown.

The files are reached through pyarrow's S3 filesystem (the AWS SDK for C++), one per set of
keys, kept.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from catalog.errors import ValidationError

if TYPE_CHECKING:
    from pyarrow.fs import S3FileSystem

ENDPOINT_ENV = "CATALOG_S3_ENDPOINT"
PATH_STYLE_ENV = "CATALOG_S3_PATH_STYLE"
DEFAULT_REGION = "us-east-1"
_KEY_ENVS = ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN")
CONNECT_TIMEOUT_S = 5.0
REQUEST_TIMEOUT_S = 30.0


@dataclass(frozen=True, slots=True)
class S3Keys:
    """Keys of the store: the catalog's own, or short-lived ones it handed an engine.

    ``repr`` shows the key id's first four characters only.
    """

    access_key_id: str
    secret_access_key: str
    session_token: str | None = None
    expires_at_ms: int | None = None

    def __repr__(self) -> str:
        return f"S3Keys({self.access_key_id[:4]}…, expires_at_ms={self.expires_at_ms})"


@dataclass(frozen=True, slots=True)
class S3Endpoint:
    """Where the store is: its endpoint (None: AWS), its region, and how buckets are addressed.

    Attributes:
        url: the endpoint, ``http(s)://host:port``; None for AWS's own.
        region: the region requests are signed for.
        path_style: buckets in the path (``host/bucket/key``), not the host name.
    """

    url: str | None
    region: str
    path_style: bool

    @classmethod
    def from_env(cls) -> S3Endpoint:
        """Return the endpoint the environment names (the module doc).

        Raises:
            ValidationError: an endpoint that is not an http(s) URL, or a path style that is
                not true or false.
        """
        url = os.environ.get(ENDPOINT_ENV) or None
        if url is not None:
            parts = urlsplit(url)
            if parts.scheme not in ("http", "https") or not parts.netloc:
                raise ValidationError(
                    f"{ENDPOINT_ENV}={url} is not an http:// or https:// address of an S3 store"
                )
            url = f"{parts.scheme}://{parts.netloc}"
        style = os.environ.get(PATH_STYLE_ENV, "true" if url else "false").strip().lower()
        if style not in ("true", "false"):
            raise ValidationError(f"{PATH_STYLE_ENV} is true or false, not {style!r}")
        region = os.environ.get("AWS_REGION") or os.environ.get("AWS_DEFAULT_REGION")
        return cls(url, region or DEFAULT_REGION, style == "true")


def own_keys() -> S3Keys | None:
    """Return the catalog's keys from the environment; None: the credentials file's (if any)."""
    key, secret, token = (os.environ.get(name) for name in _KEY_ENVS)
    if key and secret:
        return S3Keys(key, secret, token or None)
    return None


def redacted(message: str, keys: S3Keys | None = None) -> str:
    """Return a store's message with any key in it (the environment's, or ``keys``) hidden."""
    secrets = [os.environ.get(name) for name in _KEY_ENVS]
    if keys is not None:
        secrets += [keys.access_key_id, keys.secret_access_key, keys.session_token]
    for secret in secrets:
        if secret and len(secret) >= 4:
            message = message.replace(secret, "[redacted]")
    return message


@lru_cache(maxsize=64)
def _filesystem(endpoint: S3Endpoint, keys: S3Keys | None) -> S3FileSystem:
    from pyarrow import fs

    options: dict[str, object] = {
        "region": endpoint.region,
        "connect_timeout": CONNECT_TIMEOUT_S,
        "request_timeout": REQUEST_TIMEOUT_S,
        "force_virtual_addressing": not endpoint.path_style and endpoint.url is not None,
        "retry_strategy": fs.AwsStandardS3RetryStrategy(max_attempts=3),
        "check_directory_existence_before_creation": False,
        "allow_bucket_creation": False,
        "allow_bucket_deletion": False,
    }
    if endpoint.url is not None:
        parts = urlsplit(endpoint.url)
        options["endpoint_override"] = parts.netloc
        options["scheme"] = parts.scheme
    if keys is not None:
        options["access_key"] = keys.access_key_id
        options["secret_key"] = keys.secret_access_key
        if keys.session_token:
            options["session_token"] = keys.session_token
    return fs.S3FileSystem(**options)


def filesystem(keys: S3Keys | None = None, endpoint: S3Endpoint | None = None) -> S3FileSystem:
    """Return the S3 filesystem of ``keys`` (None: the catalog's own) at ``endpoint``.

    Raises:
        ValidationError: the environment names the endpoint wrongly (``S3Endpoint.from_env``).
    """
    return _filesystem(endpoint or S3Endpoint.from_env(), keys or own_keys())
