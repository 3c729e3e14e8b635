"""Entity tags of table answers: ``ETag`` on load, create and commit, ``If-None-Match`` on load.

A tag is a digest of the answer's body, so two answers differ in tag exactly when they
differ in content: the same table loaded with ``snapshots=refs`` and with ``snapshots=all``
has two tags, as the protocol asks, and a load after any change of the table (a catalog
version that touched it, a data commit) has a new one. A load whose ``If-None-Match`` names
the current tag is answered 304 Not Modified, with no body.
"""

from __future__ import annotations

import hashlib

from fastapi.responses import Response

from api.iceberg.models import IcebergModel

JSON = "application/json"


def etag_of(body: bytes) -> str:
    """Return the strong entity tag of an answer's ``body`` (quoted, as HTTP sends it)."""
    return '"' + hashlib.sha256(body).hexdigest()[:32] + '"'


def tagged_response(model: IcebergModel, if_none_match: str | None = None) -> Response:
    """Answer ``model`` with its ``ETag``; 304 with no body when ``if_none_match`` names it."""
    body = model.model_dump_json(by_alias=True).encode()
    etag = etag_of(body)
    if if_none_match is not None and _names(if_none_match, etag):
        return Response(status_code=304, headers={"ETag": etag})
    return Response(content=body, media_type=JSON, headers={"ETag": etag})


def _names(if_none_match: str, etag: str) -> bool:
    """Return whether an ``If-None-Match`` value names ``etag`` (weakly compared, RFC 9110)."""
    for candidate in if_none_match.split(","):
        tag = candidate.strip()
        if tag == "*" or tag.removeprefix("W/") == etag:
            return True
    return False
