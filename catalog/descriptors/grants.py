"""``GrantDescriptor``: one privilege on one object, given to one principal or role.

Privileges flow down: one held on the catalog holds on every schema, table and view, one held
on a schema on every table and view in it, including those made later. ``OWNERSHIP`` holds
every privilege on its object. To reach anything in a schema the caller needs ``USAGE`` on
it (as in Unity Catalog and Snowflake); a role is granted by granting ``USAGE`` on it.
"""

from __future__ import annotations

import enum

from catalog.model import Model

CATALOG_ID = 0
"""The id the catalog itself has as the object of a grant."""


class Privilege(enum.StrEnum):
    """What a grant allows on its object (and on everything in it)."""

    USAGE = "USAGE"
    """Reach a schema and what is in it; on a role: be a member of it."""
    SELECT = "SELECT"
    """Read a table's or view's schema, and a table's data."""
    MODIFY = "MODIFY"
    """Write a table's data."""
    CREATE = "CREATE"
    """Create schemas (on the catalog), tables and views (on a schema)."""
    ALTER = "ALTER"
    """Change an object's columns, properties or name."""
    DROP = "DROP"
    """Drop the object."""
    MANAGE_GRANTS = "MANAGE_GRANTS"
    """Grant and revoke privileges on the object."""
    OWNERSHIP = "OWNERSHIP"
    """Every privilege on the object."""


class SecurableKind(enum.StrEnum):
    """What a grant is on."""

    CATALOG = "catalog"
    SCHEMA = "schema"
    TABLE = "table"
    VIEW = "view"
    ROLE = "role"


class GranteeKind(enum.StrEnum):
    """Whom a grant is to: a principal (a user) or a role."""

    USER = "user"
    ROLE = "role"


PRIVILEGES_ON: dict[SecurableKind, frozenset[Privilege]] = {
    SecurableKind.CATALOG: frozenset(Privilege),
    SecurableKind.SCHEMA: frozenset(Privilege),
    SecurableKind.TABLE: frozenset(Privilege) - {Privilege.USAGE, Privilege.CREATE},
    SecurableKind.VIEW: frozenset(Privilege)
    - {Privilege.USAGE, Privilege.CREATE, Privilege.MODIFY},
    SecurableKind.ROLE: frozenset({Privilege.USAGE}),
}
"""The privileges each kind of object may be granted."""


class GrantDescriptor(Model):
    """``privilege`` on object ``on``/``on_id``, given to grantee ``to``/``to_id``."""

    id: int
    privilege: Privilege
    on: SecurableKind
    on_id: int
    """The object's id (``CATALOG_ID`` for the catalog)."""
    to: GranteeKind
    to_id: int
    """The principal's or role's id."""
    update_ts: int = 0
    """The activation timestamp of the version that made it."""

    @property
    def securable(self) -> tuple[SecurableKind, int]:
        """Return the object the grant is on."""
        return self.on, self.on_id

    @property
    def grantee(self) -> tuple[GranteeKind, int]:
        """Return whom the grant is to."""
        return self.to, self.to_id
