"""Update entries for service principals."""

from __future__ import annotations

from typing import Literal

from catalog.descriptors import PrincipalDescriptor
from catalog.entries.base import PRINCIPALS, PutEntry, RemoveEntry
from catalog.events import CatalogEvent


class _PutPrincipalEntry(PutEntry, kind=PRINCIPALS):
    """A principal's whole descriptor, put in place of any principal of its id."""

    principal: PrincipalDescriptor


class NewPrincipalEntry(_PutPrincipalEntry, event=CatalogEvent.PRINCIPAL_CREATE):
    """Add a principal."""

    type: Literal["new_principal"] = "new_principal"


class AlterPrincipalEntry(_PutPrincipalEntry, event=CatalogEvent.PRINCIPAL_ALTER):
    """Replace a principal (matched by id): another role, or a new secret."""

    type: Literal["alter_principal"] = "alter_principal"


class DropPrincipalEntry(RemoveEntry, event=CatalogEvent.PRINCIPAL_DROP, kind=PRINCIPALS):
    """Remove a principal: its access tokens stop working at this version."""

    type: Literal["drop_principal"] = "drop_principal"
    principal_id: int
