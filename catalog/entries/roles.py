"""Update entries for roles."""

from __future__ import annotations

from typing import Literal

from catalog.descriptors import RoleDescriptor
from catalog.entries.base import ROLES, PutEntry, RemoveEntry
from catalog.events import CatalogEvent


class NewRoleEntry(PutEntry, event=CatalogEvent.ROLE_CREATE, kind=ROLES):
    """Add a role."""

    type: Literal["new_role"] = "new_role"
    role: RoleDescriptor


class DropRoleEntry(RemoveEntry, event=CatalogEvent.ROLE_DROP, kind=ROLES):
    """Remove a role (the grants to it and of it go in entries of their own, before it)."""

    type: Literal["drop_role"] = "drop_role"
    role_id: int
