"""``RoleDescriptor``: a named set of privileges that principals, groups and roles are given.

Roles are what teams are granted: ``GRANT SELECT ON SCHEMA SALES TO ROLE MARKETING``, then
``GRANT ROLE MARKETING TO USER alice`` (or to another role, which then holds what it holds).
An outside provider's groups are roles of the same name, so its users need no principal of
their own.
"""

from __future__ import annotations

from catalog.model import Model


class RoleDescriptor(Model):
    """A role: its id and name. What it holds are the grants made to it."""

    id: int
    name: str
    update_ts: int = 0
    """The activation timestamp of the version that last changed it."""
