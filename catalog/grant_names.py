"""Names for what grants are on and to, and a grant in words (``SELECT ON TABLE S.T TO USER u``).

A grant holds ids, so that a rename keeps it; people read names. The names are looked up in
the catalogs given, first to last, so a grant that a drop removed is still named by the
catalog before the drop.
"""

from __future__ import annotations

from catalog.catalog import Catalog
from catalog.descriptors import GrantDescriptor, GranteeKind, SecurableKind


def _schema_name(catalogs: tuple[Catalog, ...], schema_id: int) -> str | None:
    for cat in catalogs:
        found = cat.find_schema_by_id(schema_id)
        if found is not None:
            return found.name
    return None


def securable_name(kind: SecurableKind, object_id: int, *catalogs: Catalog) -> str | None:
    """Return the name of an object grants are on (``SALES.ORDERS``), or None if it is gone.

    The catalog itself has no name: it is "" (``GRANT ... ON CATALOG``).
    """
    if kind is SecurableKind.CATALOG:
        return ""
    if kind is SecurableKind.SCHEMA:
        return _schema_name(catalogs, object_id)
    if kind is SecurableKind.ROLE:
        for cat in catalogs:
            role = cat.access.roles.get(object_id)
            if role is not None:
                return role.name
        return None
    for cat in catalogs:
        found = (
            cat.find_table_by_id(object_id)
            if kind is SecurableKind.TABLE
            else cat.find_view_by_id(object_id)
        )
        if found is not None:
            schema = _schema_name(catalogs, found.schema_id)
            return None if schema is None else f"{schema}.{found.name}"
    return None


def grantee_name(kind: GranteeKind, grantee_id: int, *catalogs: Catalog) -> str | None:
    """Return the name of a principal or role grants are to, or None if it is gone."""
    for cat in catalogs:
        if kind is GranteeKind.USER:
            principal = cat.find_principal_by_id(grantee_id)
            if principal is not None:
                return principal.name
        else:
            role = cat.access.roles.get(grantee_id)
            if role is not None:
                return role.name
    return None


def grant_words(grant: GrantDescriptor, *catalogs: Catalog) -> str:
    """Return ``grant`` as its SQL says it: ``SELECT ON TABLE SALES.ORDERS TO USER alice``.

    A role granted reads ``ROLE ANALYSTS TO USER alice``.
    """
    on_name = securable_name(grant.on, grant.on_id, *catalogs)
    return words_of(grant, on_name, grantee_name(grant.to, grant.to_id, *catalogs))


def words_of(grant: GrantDescriptor, on_name: str | None, to_name: str | None) -> str:
    """Return ``grant`` in words, its object and grantee named already (None: gone)."""
    to = f"TO {grant.to.upper()} {to_name if to_name is not None else f'#{grant.to_id}'}"
    shown = f"#{grant.on_id}" if on_name is None else on_name
    if grant.on is SecurableKind.ROLE:
        return f"ROLE {shown} {to}"
    if grant.on is SecurableKind.CATALOG:
        return f"{grant.privilege} ON CATALOG {to}"
    return f"{grant.privilege} ON {grant.on.upper()} {shown} {to}"
