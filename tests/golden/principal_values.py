"""Deterministic principal values whose encodings are kept as golden files (``catalog_values``
says how golden files are made; its ``golden_files`` holds these too).

Each secret is hashed with a fixed salt, so the values are the same on every run.
"""

from __future__ import annotations

from catalog import Catalog, VersionedUpdate
from catalog.commands.base import CommandBase
from catalog.commands.principals import (
    AlterPrincipalCommand,
    CreatePrincipalCommand,
    DropPrincipalCommand,
)
from catalog.descriptors.principals import PrincipalRole, hash_secret
from catalog.marshalling import encode_entries, encode_update
from catalog.snapshots import encode_snapshot
from catalog.wire import encode_descriptor
from tests.golden.stamped_updates import stamped_update

T0 = 1_700_000_000_000
"""The golden principals' epoch (ms)."""
_SALT = bytes(range(16))


def golden_principal_commands() -> list[CommandBase]:
    """Return principals created, one given a new role and a new secret, one dropped."""
    return [
        CreatePrincipalCommand(
            name="etl",
            role=PrincipalRole.WRITER,
            client_id="etl-client-0000000001",
            secret_hash=hash_secret("first secret", _SALT),
        ),
        CreatePrincipalCommand(
            name="analyst",
            role=PrincipalRole.READER,
            client_id="analyst-client-000002",
            secret_hash=hash_secret("analyst secret", _SALT),
        ),
        CreatePrincipalCommand(
            name="scratch",
            role=PrincipalRole.ADMIN,
            client_id="scratch-client-000003",
            secret_hash=hash_secret("scratch secret", _SALT),
        ),
        AlterPrincipalCommand(
            name="etl", role=PrincipalRole.ADMIN, secret_hash=hash_secret("second secret", _SALT)
        ),
        DropPrincipalCommand(name="scratch"),
    ]


def golden_principal_update() -> tuple[Catalog, VersionedUpdate]:
    """Return version 1 and update 2: the principal commands' entries, stamping what they change."""
    return stamped_update(T0, golden_principal_commands())


def golden_principal_catalog() -> Catalog:
    """Return version 2: principals ``etl`` (admin, second secret) and ``analyst``."""
    v1, update = golden_principal_update()
    return update.apply_to(v1)


def golden_principal_files() -> dict[str, bytes]:
    """Return the name and current encoding of every golden file of principals."""
    _, update = golden_principal_update()
    catalog = golden_principal_catalog()
    return {
        "snapshot_principals_v2.bin": encode_snapshot(catalog),
        "update_principals_v3.bin": encode_update(update),
        "entries_principals_v1.bin": encode_entries(update.entries),
        "descriptor_principal_v1.bin": encode_descriptor(catalog.principal("etl")),
    }
