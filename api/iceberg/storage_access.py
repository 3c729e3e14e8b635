"""How an engine reaches a table's files on S3 without the catalog's keys.

A table load (and a create, and ``/credentials``) answers, for a warehouse on S3, where the
store is (``s3.endpoint``, ``s3.path-style-access``, ``client.region``) and, as the engine
asked in ``X-Iceberg-Access-Delegation``:

- ``vended-credentials``: short-lived keys for the table's folders only
  (``catalog.data.s3_sessions``), read-only unless the caller may change the table's data
  (``MODIFY``), both in ``config`` and as ``storage-credentials``;
- ``remote-signing``: the signer endpoint (``s3.signer.uri``, ``s3.signer.endpoint``), where
  the catalog signs each request after checking it (``signing_routes``).

A local warehouse needs neither: the answer names no store.
"""

from __future__ import annotations

import asyncio

from fastapi import Request

from api.iceberg.errors import unavailable
from api.iceberg.metadata import location_uri
from api.iceberg.models import StorageCredential
from api.iceberg.reads import warehouse_of
from api.server.permits import may
from catalog.catalog import Catalog
from catalog.data.s3_sessions import VENDOR, VendingError
from catalog.data.s3_store import S3Endpoint, S3Keys
from catalog.data.warehouse import on_s3, table_folders
from catalog.descriptors import TableDescriptor
from catalog.descriptors.grants import Privilege, SecurableKind
from catalog.errors import ValidationError

VENDED = "vended-credentials"
SIGNED = "remote-signing"
SIGNER_ENDPOINT = "v1/aws/s3/sign"
"""Where the signer is, under the Iceberg REST root (Iceberg's default path)."""


def delegation_modes(header: str | None) -> set[str]:
    """Return the modes an ``X-Iceberg-Access-Delegation`` header asks for (others ignored)."""
    asked = {m.strip().lower() for m in (header or "").split(",")}
    return asked & {VENDED, SIGNED}


def store_config(endpoint: S3Endpoint) -> dict[str, str]:
    """Return the settings that say where the S3 store is, as Iceberg's FileIOs read them."""
    config = {
        "client.region": endpoint.region,
        "s3.region": endpoint.region,
        "s3.path-style-access": str(endpoint.path_style).lower(),
    }
    if endpoint.url is not None:
        config["s3.endpoint"] = endpoint.url
    return config


def keys_config(keys: S3Keys) -> dict[str, str]:
    """Return short-lived keys as Iceberg's FileIOs read them."""
    config = {
        "s3.access-key-id": keys.access_key_id,
        "s3.secret-access-key": keys.secret_access_key,
    }
    if keys.session_token:
        config["s3.session-token"] = keys.session_token
    if keys.expires_at_ms is not None:
        config["s3.session-token-expires-at-ms"] = str(keys.expires_at_ms)
    return config


async def folder_keys(folders: tuple[str, ...], write: bool, name: str) -> S3Keys:
    """Return keys for ``folders`` (read-write with ``write``).

    Raises:
        IcebergError: ServiceUnavailableException when the store hands out no keys.
    """
    try:
        return await asyncio.to_thread(VENDOR.keys_for, folders, write)
    except (VendingError, ValidationError) as e:
        raise unavailable(
            f"{e}; no keys were handed out for table {name}: ask for remote signing "
            f"(X-Iceberg-Access-Delegation: {SIGNED}) or try again"
        ) from e


def may_write(request: Request, cat: Catalog, table: TableDescriptor) -> bool:
    """Return whether the caller gets keys that write ``table``'s files (it holds ``MODIFY``)."""
    return may(request, cat, Privilege.MODIFY, SecurableKind.TABLE, table.id)


async def storage_access(
    request: Request, folders: tuple[str, ...], write: bool, header: str | None, name: str
) -> tuple[dict[str, str], list[StorageCredential]]:
    """Return the ``config`` and ``storage-credentials`` of an answer naming table ``name``.

    Args:
        request: the request answered.
        folders: the table's folders (``table_folders``).
        write: whether vended keys may write them.
        header: the request's ``X-Iceberg-Access-Delegation``.
        name: the table's name, for messages.

    Raises:
        IcebergError: ServiceUnavailableException when vended keys were asked for and the
            store hands out none.
    """
    if not on_s3(folders[0]):
        return {}, []
    try:
        endpoint = S3Endpoint.from_env()
    except ValidationError as e:
        raise unavailable(str(e)) from e
    config = store_config(endpoint)
    modes = delegation_modes(header)
    if VENDED in modes:
        vended = {**config, **keys_config(await folder_keys(folders, write, name))}
        config.update(vended)
        credentials = [StorageCredential(prefix=location_uri(f), config=vended) for f in folders]
        return config, credentials
    if SIGNED in modes:
        config["s3.remote-signing-enabled"] = "true"
        config["s3.signer.uri"] = str(request.base_url).rstrip("/")
        config["s3.signer.endpoint"] = SIGNER_ENDPOINT
    return config, []


async def table_access(
    request: Request, cat: Catalog, table: TableDescriptor, header: str | None
) -> tuple[dict[str, str], list[StorageCredential]]:
    """Return ``storage_access`` for ``table`` of ``cat``: write keys when it may ``MODIFY``.

    A table in a local folder, or a load asking for no keys, costs no privilege check.
    """
    folders = table_folders(table, warehouse_of(request))
    if not on_s3(folders[0]):
        return {}, []
    write = VENDED in delegation_modes(header) and may_write(request, cat, table)
    return await storage_access(request, folders, write, header, table.name)
