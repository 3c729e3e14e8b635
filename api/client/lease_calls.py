"""The retention-lease calls both clients share (``/v1/leases``)."""

from __future__ import annotations

from urllib.parse import quote

import httpx

from api.client.calls import Call, Timestamp, json_of, timestamp_param
from api.wire.models import LeasesBody
from catalog.leases import RetentionLease


def take_lease_call(at: Timestamp, ttl_s: float, owner: str) -> Call[RetentionLease]:
    """Take a lease keeping reads as of ``at`` answerable for ``ttl_s`` seconds.

    While it holds, compaction and data expiry keep what a read at ``at`` needs; it ends on
    its own after ``ttl_s`` (``POST /v1/leases``).
    """
    body = {"at": timestamp_param(at), "ttl_s": ttl_s, "owner": owner}
    return Call("POST", "/v1/leases", json_of(RetentionLease), body=body)


def _listed(response: httpx.Response) -> list[RetentionLease]:
    return LeasesBody.model_validate_json(response.content).leases


def leases_call() -> Call[list[RetentionLease]]:
    """Return the leases that hold, earliest moment first (``GET /v1/leases``)."""
    return Call("GET", "/v1/leases", _listed)


def release_lease_call(lease_id: str) -> Call[None]:
    """Release a lease at once (``DELETE /v1/leases/{id}``)."""
    return Call("DELETE", f"/v1/leases/{quote(lease_id, safe='')}", lambda _: None)
