"""Short-lived keys for one table's folders, so engines never hold the catalog's own.

An engine that reads or writes a table on S3 gets keys from the store's STS (``AssumeRole``)
with an inline session policy: read (``s3:GetObject``, and ``s3:ListBucket`` under the
prefixes) or, for a writer, read-write (``s3:PutObject``, ``s3:DeleteObject``), on the
table's folders only: its location, and its folder of metadata files. Nothing outside them;
past their lifetime the store refuses them.

Settings, beside ``catalog.data.s3_store``'s: ``CATALOG_S3_ROLE_ARN``, the role the sessions
are of (AWS needs one; a store whose STS lets the catalog's own identity open a session needs
none), ``CATALOG_S3_STS_ENDPOINT`` (the store's endpoint by default), and
``CATALOG_S3_CREDENTIAL_SECONDS``, their lifetime (900 to 43200; 3600 by default).

Keys are kept and handed out again while more than half their lifetime is left, so a burst of
loads of one table asks STS once.
"""

from __future__ import annotations

import json
import os
import threading
import time
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from catalog.data.s3_store import S3Endpoint, S3Keys, own_keys, redacted
from catalog.data.warehouse import S3
from catalog.errors import ValidationError

ROLE_ENV = "CATALOG_S3_ROLE_ARN"
STS_ENDPOINT_ENV = "CATALOG_S3_STS_ENDPOINT"
SECONDS_ENV = "CATALOG_S3_CREDENTIAL_SECONDS"
DEFAULT_SECONDS = 3600
MIN_SECONDS, MAX_SECONDS = 900, 43200
SESSION_NAME = "event-catalog"
_KEPT = 4096


class VendingError(Exception):
    """The store would not hand out short-lived keys: the message says why, keys hidden."""


def session_policy(folders: tuple[str, ...], write: bool) -> dict[str, Any]:
    """Return the inline policy of keys for ``folders`` (``s3://bucket/key``), read or write."""
    actions = ["s3:GetObject"]
    if write:
        actions += ["s3:PutObject", "s3:DeleteObject", "s3:AbortMultipartUpload"]
    statements: list[dict[str, Any]] = []
    by_bucket: dict[str, list[str]] = {}
    for folder in folders:
        bucket, _, key = folder.removeprefix(S3).partition("/")
        by_bucket.setdefault(bucket, []).append(key)
    for bucket, keys in sorted(by_bucket.items()):
        objects = [
            f"arn:aws:s3:::{bucket}/{k}/*" if k else f"arn:aws:s3:::{bucket}/*" for k in keys
        ]
        statements.append({"Effect": "Allow", "Action": actions, "Resource": objects})
        listing: dict[str, Any] = {
            "Effect": "Allow",
            "Action": ["s3:ListBucket"],
            "Resource": [f"arn:aws:s3:::{bucket}"],
        }
        if all(keys):
            prefixes = [p for k in keys for p in (k, f"{k}/*")]
            listing["Condition"] = {"StringLike": {"s3:prefix": prefixes}}
        statements.append(listing)
    return {"Version": "2012-10-17", "Statement": statements}


@dataclass(frozen=True)
class VendingSettings:
    """How the catalog asks STS for sessions (the module doc)."""

    role_arn: str | None
    sts_url: str | None
    seconds: int

    @classmethod
    def from_env(cls, endpoint: S3Endpoint) -> VendingSettings:
        """Return the environment's settings.

        Raises:
            ValidationError: a lifetime that is not a whole number from 900 to 43200.
        """
        raw = os.environ.get(SECONDS_ENV) or str(DEFAULT_SECONDS)
        try:
            seconds = int(raw)
        except ValueError:
            seconds = 0
        if not MIN_SECONDS <= seconds <= MAX_SECONDS:
            raise ValidationError(
                f"{SECONDS_ENV}={raw}: a lifetime in seconds from {MIN_SECONDS} to {MAX_SECONDS}"
            )
        sts = os.environ.get(STS_ENDPOINT_ENV) or endpoint.url
        return cls(os.environ.get(ROLE_ENV) or None, sts, seconds)


class SessionVendor:
    """Hands out keys for a table's folders, asking STS once per half lifetime."""

    def __init__(self) -> None:
        self._kept: dict[tuple[tuple[str, ...], bool], tuple[int, S3Keys]] = {}
        self._gates: dict[tuple[tuple[str, ...], bool], threading.Lock] = {}
        self._lock = threading.Lock()

    def keys_for(self, folders: tuple[str, ...], write: bool) -> S3Keys:
        """Return keys for ``folders`` (blocking: call it in a thread).

        Keys handed out before are handed out again while more than half their lifetime
        (as the store granted it) is left.

        Raises:
            VendingError: STS refused or could not be reached.
            ValidationError: the settings are wrong (``VendingSettings.from_env``).
        """
        key = (tuple(sorted(folders)), write)
        kept = self._fresh(key)
        if kept is not None:
            return kept
        with self._lock:
            gate = self._gates.setdefault(key, threading.Lock())
        with gate:  # one STS call per table's folders at a time; the others take its keys
            kept = self._fresh(key)
            if kept is not None:
                return kept
            now_ms = time.time_ns() // 1_000_000
            fresh = self._assume(key[0], write)
            with self._lock:
                if len(self._kept) >= _KEPT:
                    self._kept.clear()
                    self._gates = {key: gate}
                self._kept[key] = (now_ms, fresh)
            return fresh

    def _fresh(self, key: tuple[tuple[str, ...], bool]) -> S3Keys | None:
        now_ms = time.time_ns() // 1_000_000
        with self._lock:
            kept = self._kept.get(key)
        if kept is None:
            return None
        issued_ms, keys = kept
        expires_ms = keys.expires_at_ms or issued_ms
        return keys if expires_ms - now_ms > (expires_ms - issued_ms) // 2 else None

    def _assume(self, folders: tuple[str, ...], write: bool) -> S3Keys:
        from botocore.exceptions import BotoCoreError, ClientError

        endpoint = S3Endpoint.from_env()
        settings = VendingSettings.from_env(endpoint)
        client = _sts_client(endpoint, settings.sts_url, own_keys())
        asked: dict[str, Any] = {
            "RoleSessionName": SESSION_NAME,
            "DurationSeconds": settings.seconds,
            "Policy": json.dumps(session_policy(folders, write), separators=(",", ":")),
        }
        if settings.role_arn is not None:
            asked["RoleArn"] = settings.role_arn
        try:
            answer = client.assume_role(**asked)
        except ClientError as e:
            error = e.response.get("Error", {})
            raise VendingError(
                "the S3 store's STS would not hand out short-lived keys "
                f"({error.get('Code', 'refused')}: {redacted(str(error.get('Message', '')))})"
            ) from e
        except BotoCoreError as e:
            raise VendingError(
                f"the S3 store's STS could not be reached: {redacted(str(e))}"
            ) from e
        found = answer["Credentials"]
        return S3Keys(
            found["AccessKeyId"],
            found["SecretAccessKey"],
            found.get("SessionToken"),
            int(found["Expiration"].timestamp() * 1000),
        )


@lru_cache(maxsize=8)
def _sts_client(endpoint: S3Endpoint, sts_url: str | None, keys: S3Keys | None) -> Any:
    """Return an STS client of ``keys`` (None: the environment's chain), kept.

    Making one loads botocore's service models, which takes longer than the call; a client
    is safe to share between threads.
    """
    from botocore.config import Config
    from botocore.session import get_session

    return get_session().create_client(
        "sts",
        region_name=endpoint.region,
        endpoint_url=sts_url,
        aws_access_key_id=None if keys is None else keys.access_key_id,
        aws_secret_access_key=None if keys is None else keys.secret_access_key,
        aws_session_token=None if keys is None else keys.session_token,
        config=Config(
            parameter_validation=False,  # a store's STS may take no role
            connect_timeout=5,
            read_timeout=15,
            retries={"max_attempts": 2, "mode": "standard"},
        ),
    )


VENDOR = SessionVendor()
"""This process's keys handed out, kept per table's folders while fresh."""
