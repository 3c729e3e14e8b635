"""Signing an engine's S3 request with the catalog's keys (AWS Signature Version 4).

Iceberg's remote signing: an engine that holds no keys sends each S3 request it is about to
make (method, URI, headers) to the catalog, which checks that the caller may do it to that
table and answers the headers that sign it. The signature covers the payload hash the engine
declares (``x-amz-content-sha256``), so the body is never sent to the catalog.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from urllib.parse import unquote, urlsplit

from catalog.data.s3_store import S3Endpoint, own_keys
from catalog.data.warehouse import S3

_CONTENT_SHA = "x-amz-content-sha256"
_UNSIGNED = "UNSIGNED-PAYLOAD"
_DROPPED = frozenset({"authorization", "x-amz-date", "x-amz-security-token"})


def object_of(uri: str, endpoint: S3Endpoint) -> str | None:
    """Return the ``s3://bucket/key`` an S3 request's URI names (None: not one of the store's).

    Both addressings are read: path style (``host/bucket/key``) and virtual hosts
    (``bucket.host/key``).
    """
    parts = urlsplit(uri)
    path = unquote(parts.path).lstrip("/")
    host = parts.hostname or ""
    expected = urlsplit(endpoint.url).hostname if endpoint.url else None
    if expected is not None and host != expected and not host.endswith(f".{expected}"):
        return None
    if expected is not None and host == expected:
        bucket, _, key = path.partition("/")
    elif expected is not None:
        bucket, key = host[: -len(expected) - 1], path
    elif ".s3." in host or host.startswith("s3."):
        bucket, key = (host.split(".s3.")[0], path) if ".s3." in host else path.partition("/")[::2]
    else:
        return None
    if not bucket:
        return None
    return f"{S3}{bucket}/{key}".rstrip("/")


def signed_headers(
    method: str, uri: str, headers: Mapping[str, Sequence[str]], region: str
) -> dict[str, list[str]]:
    """Return ``headers`` with the catalog's signature of the request added.

    Raises:
        ValueError: the catalog has no keys of its own in its environment.
    """
    from botocore.auth import S3SigV4Auth
    from botocore.awsrequest import AWSRequest
    from botocore.credentials import Credentials

    keys = own_keys()
    if keys is None:
        raise ValueError("the catalog has no S3 keys of its own to sign with")
    kept = {k: ",".join(v) for k, v in headers.items() if k.lower() not in _DROPPED}
    declared = next((v for k, v in kept.items() if k.lower() == _CONTENT_SHA), _UNSIGNED)

    request = AWSRequest(method=method, url=uri, headers=kept)
    credentials = Credentials(keys.access_key_id, keys.secret_access_key, keys.session_token)
    signer = S3SigV4Auth(credentials, "s3", region)
    signer.payload = lambda _request: declared  # the hash the engine declared, body unseen
    signer.add_auth(request)
    return {name: [value] for name, value in request.headers.items()}
