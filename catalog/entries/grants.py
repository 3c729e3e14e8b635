"""Update entries for grants."""

from __future__ import annotations

from typing import Literal

from catalog.descriptors import GrantDescriptor
from catalog.entries.base import GRANTS, PutEntry, RemoveEntry
from catalog.events import CatalogEvent


class NewGrantEntry(PutEntry, event=CatalogEvent.GRANT, kind=GRANTS):
    """Give a privilege on an object to a principal or role."""

    type: Literal["new_grant"] = "new_grant"
    grant: GrantDescriptor


class DropGrantEntry(RemoveEntry, event=CatalogEvent.REVOKE, kind=GRANTS):
    """Take a grant back: revoked, or its object or grantee dropped."""

    type: Literal["drop_grant"] = "drop_grant"
    grant_id: int
