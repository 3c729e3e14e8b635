"""Iceberg's remote signing: ``POST /v1/aws/s3/sign`` signs an engine's S3 request.

An engine told ``s3.remote-signing-enabled`` (``storage_access``) holds no keys: before each
S3 request it sends the method, URI and headers here, and sends the request with the headers
answered. The catalog signs only a request on a table's folders (its location, its folder of
metadata files) that the caller may make: reading (``GET``, ``HEAD``) takes ``SELECT`` or
``MODIFY`` on the table, anything else ``MODIFY``. A bulk delete names its keys in its body;
each must be the table's. Anything else is a 403 ``ForbiddenException`` naming the object,
and nothing is signed.

Two routes sign: ``/v1/aws/s3/sign`` (the signer a table load names, ``s3.signer.endpoint``,
which Iceberg clients before 1.11 and PyIceberg call), and the protocol's table-scoped
``/v1/namespaces/{namespace}/tables/{table}/sign`` (what Iceberg 1.11 and later call, whatever
the load named), which signs only requests on that table's files.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from typing import Literal
from urllib.parse import parse_qs, urlsplit

from fastapi import APIRouter, Request
from fastapi.responses import Response
from pydantic import Field

from api.iceberg.errors import bad_request, unavailable
from api.iceberg.models import IcebergModel
from api.iceberg.paths import READ, NamespacePath, TablePath
from api.iceberg.pins import pin_of
from api.iceberg.reads import read_catalog, warehouse_of
from api.iceberg.visibility import seen_table
from api.server.errors import ApiError
from api.server.permits import may, permit
from api.server.responses import json_response
from api.wire.codes import Code
from catalog.data.locations import table_holding
from catalog.data.s3_signing import object_of, signed_headers
from catalog.data.s3_store import S3Endpoint
from catalog.data.warehouse import on_s3, warehouse_root
from catalog.descriptors import Privilege, SecurableKind
from catalog.errors import ValidationError

router = APIRouter()

_READS = frozenset({"GET", "HEAD"})
_MAX_DELETED = 1000


class S3SignRequest(IcebergModel):
    """An S3 request to sign: where it goes and the headers it carries."""

    region: str = Field(max_length=100)
    uri: str = Field(max_length=8192)
    method: Literal["PUT", "GET", "HEAD", "POST", "DELETE"]
    headers: dict[str, list[str]] = Field(default_factory=dict)
    properties: dict[str, str] = Field(default_factory=dict)
    body: str | None = Field(default=None, max_length=1 << 20)


class S3SignResponse(IcebergModel):
    """The signed request: its URI and the headers to send it with."""

    uri: str
    headers: dict[str, list[str]]


def _objects(body: S3SignRequest, endpoint: S3Endpoint) -> list[str]:
    """Return the ``s3://bucket/key`` every object the request touches (a listing: its prefix)."""
    named = object_of(body.uri, endpoint)
    if named is None:
        raise bad_request(f"{body.uri} is not an address of the warehouse's S3 store")
    query = parse_qs(urlsplit(body.uri).query, keep_blank_values=True)
    bucket = named.split("/")[2]
    if "prefix" in query:  # a listing of the bucket
        return [f"s3://{bucket}/{query['prefix'][0]}".rstrip("/")]
    if body.method == "POST" and "delete" in query:  # a bulk delete: its keys are in the body
        try:
            root = ET.fromstring(body.body or "")
        except ET.ParseError as e:
            raise bad_request("a bulk delete's body is not S3's Delete XML") from e
        keys = [e.text or "" for e in root.iter() if e.tag.rsplit("}", 1)[-1] == "Key"]
        if not keys or len(keys) > _MAX_DELETED:
            raise bad_request(f"a bulk delete names 1 to {_MAX_DELETED} keys")
        return [f"s3://{bucket}/{k}" for k in keys]
    return [named]


@router.post("/aws/s3/sign", response_model=S3SignResponse, dependencies=READ)
async def sign_request(request: Request, body: S3SignRequest) -> Response:
    """Sign one S3 request on a table's files the caller may read (or change)."""
    return _signed(request, body, None)


@router.post(
    "/namespaces/{namespace}/tables/{table}/sign",
    response_model=S3SignResponse,
    dependencies=READ,
)
async def sign_table_request(
    request: Request, namespace: NamespacePath, table: TablePath, body: S3SignRequest
) -> Response:
    """Sign one S3 request on the files of this table, which the caller may read (or change)."""
    if pin_of(request) is not None and body.method not in _READS:
        raise ApiError(
            Code.FORBIDDEN,
            "a pinned prefix reads the catalog as of a moment: no "
            "request that changes a table's files is signed there",
        )
    _, found = seen_table(
        request, read_catalog(request), namespace, table, (Privilege.SELECT, Privilege.MODIFY)
    )
    return _signed(request, body, found.id)


def _signed(request: Request, body: S3SignRequest, only: int | None) -> Response:
    """Sign ``body`` if every object it touches is a file of a table the caller may read.

    A change takes ``MODIFY``; with ``only``, every object must be a file of table ``only``.
    """
    warehouse = warehouse_of(request)
    if not on_s3(warehouse_root(warehouse)):
        raise bad_request("the warehouse is a local folder: there is no S3 request to sign")
    try:
        endpoint = S3Endpoint.from_env()
    except ValidationError as e:
        raise unavailable(str(e)) from e
    cat = read_catalog(request)  # a pinned prefix's: the table as of the pin
    privilege = Privilege.SELECT if body.method in _READS else Privilege.MODIFY
    for path in _objects(body, endpoint):
        table_id = table_holding(cat, warehouse, path)
        if table_id is None or (only is not None and table_id != only):
            whose = "a table" if only is None else "the table named in the path"
            raise ApiError(
                Code.FORBIDDEN,
                f"{path} is not a file of {whose}: the catalog signs requests "
                "on tables' files only",
            )
        if privilege is Privilege.SELECT and may(
            request, cat, Privilege.MODIFY, SecurableKind.TABLE, table_id
        ):
            continue  # a writer reads what it commits against
        permit(request, cat, privilege, SecurableKind.TABLE, table_id)
    try:
        headers = signed_headers(body.method, body.uri, body.headers, endpoint.region)
    except ValueError as e:
        raise unavailable(str(e)) from e
    return json_response(S3SignResponse(uri=body.uri, headers=headers))
