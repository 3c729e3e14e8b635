"""Deterministic role and grant values whose encodings are kept as golden files
(``catalog_values`` says how golden files are made; its ``golden_files`` holds these too).

The principal's secret is hashed with a fixed salt, so the values are the same on every run.
"""

from __future__ import annotations

from catalog import Catalog, ColumnType, VersionedUpdate
from catalog import commands as c
from catalog.commands.base import CommandBase
from catalog.commands.grants import GrantCommand, RevokeCommand
from catalog.commands.principals import CreatePrincipalCommand
from catalog.commands.roles import CreateRoleCommand, DropRoleCommand
from catalog.descriptors import GrantDescriptor, Privilege, SecurableKind
from catalog.descriptors.principals import PrincipalRole, hash_secret
from catalog.marshalling import encode_commands, encode_entries, encode_update
from catalog.snapshots import encode_snapshot
from catalog.wire import encode_descriptor
from tests.golden.stamped_updates import stamped_update

T0 = 1_700_000_000_000
"""The golden grants' epoch (ms)."""
_SALT = bytes(range(16))


def golden_grantee() -> CreatePrincipalCommand:
    """Return the principal the grants are to (principals are not batch commands)."""
    return CreatePrincipalCommand(
        name="alice",
        role=PrincipalRole.NONE,
        client_id="alice-client-00000001",
        secret_hash=hash_secret("alice secret", _SALT),
    )


def golden_grant_commands() -> list[CommandBase]:
    """Return roles and grants of every kind: on the catalog, a schema, a table and a role, to
    a principal and to roles (one only if its object is new); then a revoke, and a role dropped
    with the grants to it and of it."""
    return [
        c.CreateSchema(name="SALES"),
        c.CreateTable(
            schema="SALES",
            name="ORDERS",
            columns=[
                c.Column(name="ID", type=ColumnType.INT64, nullable=False),
                c.Column(name="AMOUNT", type=ColumnType.DECIMAL, precision=18, scale=2),
            ],
            primary_key=["ID"],
        ),
        CreateRoleCommand(name="ANALYSTS"),
        CreateRoleCommand(name="OWNERS"),
        CreateRoleCommand(name="SCRATCH"),
        GrantCommand(privileges=["OWNERSHIP"], on="catalog", to="role", grantee="OWNERS"),
        GrantCommand(
            privileges=["USAGE", "SELECT"], on="schema", name="SALES", to="role", grantee="ANALYSTS"
        ),
        GrantCommand(
            privileges=["MODIFY"],
            on="table",
            schema="SALES",
            name="ORDERS",
            to="user",
            grantee="alice",
        ),
        GrantCommand(privileges=["USAGE"], on="role", name="ANALYSTS", to="user", grantee="alice"),
        GrantCommand(privileges=["USAGE"], on="role", name="ANALYSTS", to="role", grantee="OWNERS"),
        GrantCommand(privileges=["SELECT"], on="catalog", to="role", grantee="SCRATCH"),
        GrantCommand(
            privileges=["USAGE"],
            on="role",
            name="SCRATCH",
            to="user",
            grantee="alice",
            if_created=True,
        ),
        RevokeCommand(
            privileges=["SELECT"], on="schema", name="SALES", to="role", grantee="ANALYSTS"
        ),
        DropRoleCommand(name="SCRATCH"),
    ]


def golden_grant_update() -> tuple[Catalog, VersionedUpdate]:
    """Return version 1 and update 2: the grantee's and the grant commands' entries, stamping
    what they change."""
    return stamped_update(T0, [golden_grantee(), *golden_grant_commands()])


def golden_grant_catalog() -> Catalog:
    """Return version 2: roles ANALYSTS and OWNERS, and the five grants left."""
    v1, update = golden_grant_update()
    return update.apply_to(v1)


def golden_grant() -> GrantDescriptor:
    """Return the golden catalog's grant of ``MODIFY`` on ``SALES.ORDERS`` to alice."""
    catalog = golden_grant_catalog()
    (found,) = (
        g
        for g in catalog.grants()
        if g.privilege is Privilege.MODIFY and g.on is SecurableKind.TABLE
    )
    return found


def golden_grant_files() -> dict[str, bytes]:
    """Return the name and current encoding of every golden file of roles and grants."""
    _, update = golden_grant_update()
    catalog = golden_grant_catalog()
    return {
        "snapshot_grants_v2.bin": encode_snapshot(catalog),
        "update_grants_v3.bin": encode_update(update),
        "entries_grants_v1.bin": encode_entries(update.entries),
        "commands_grants_v1.bin": encode_commands(golden_grant_commands()),
        "descriptor_grant_v1.bin": encode_descriptor(golden_grant()),
        "descriptor_role_v1.bin": encode_descriptor(catalog.role("ANALYSTS")),
    }
