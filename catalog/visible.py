"""``visible_catalog``: a catalog version as a caller of the role ``none`` sees it.

Its schemas, tables (with their indexes) and views are those the caller may see
(``catalog.access.sees``); its zones are all there (the tables name them); system views,
principals, roles and grants are the cluster's and left out. A caller whose cluster role
reads everything sees the catalog itself.

An earlier version is read as of its grants, and as of the latest ones for what is still
there. Found from the grants, not by judging every object: a schema whose own grants (or the
catalog's) make its tables visible gives all of them; otherwise only the tables and views
granted one by one are looked at.
"""

from __future__ import annotations

from catalog.access import ON_TABLES, Caller, granted, grantees, role_covers, sees
from catalog.catalog import Catalog
from catalog.commands.grants import object_exists
from catalog.descriptors import (
    CATALOG_ID,
    IndexDescriptor,
    Privilege,
    SecurableKind,
    TableDescriptor,
    ViewDescriptor,
)


def visible_catalog(catalog: Catalog, who: Caller, now: Catalog | None = None) -> Catalog:
    """Return ``catalog`` with only what ``who`` may see (module doc).

    With ``now`` (the latest catalog, when ``catalog`` is an earlier one), an object that is
    still there must be visible now too: a caller whose grant was taken back reads no more of
    it as of before, while what was dropped since stays readable as it was.
    """
    if role_covers(who.role, Privilege.SELECT):
        return catalog
    access = catalog.access
    held = grantees(catalog, who)
    granted_one_by_one: dict[int, list[tuple[SecurableKind, int]]] = {}
    for grantee in held:
        for grant in access.grants_to(grantee):
            if grant.on in (SecurableKind.TABLE, SecurableKind.VIEW):
                found = (
                    catalog.find_table_by_id(grant.on_id)
                    if grant.on is SecurableKind.TABLE
                    else catalog.find_view_by_id(grant.on_id)
                )
                if found is not None:
                    granted_one_by_one.setdefault(found.schema_id, []).append(grant.securable)
    schemas = [s for s in catalog.schemas() if sees(catalog, who, SecurableKind.SCHEMA, s.id)]
    tables: list[TableDescriptor] = []
    views: list[ViewDescriptor] = []
    for schema in schemas:
        chain = [(SecurableKind.SCHEMA, schema.id), (SecurableKind.CATALOG, CATALOG_ID)]
        if granted(access, held, chain, ON_TABLES):
            tables.extend(catalog.schema_tables(schema.id))
            views.extend(catalog.schema_views(schema.id))
            continue
        for kind, object_id in dict.fromkeys(granted_one_by_one.get(schema.id, ())):
            if not sees(catalog, who, kind, object_id):
                continue
            if kind is SecurableKind.TABLE:
                tables.append(catalog.table_by_id(object_id))
            else:
                views.append(catalog.view_by_id(object_id))
    if now is not None and now is not catalog:

        def still(kind: SecurableKind, object_id: int) -> bool:
            return not object_exists(now, kind, object_id) or sees(now, who, kind, object_id)

        schemas = [s for s in schemas if still(SecurableKind.SCHEMA, s.id)]
        kept = {s.id for s in schemas}
        tables = [t for t in tables if t.schema_id in kept and still(SecurableKind.TABLE, t.id)]
        views = [v for v in views if v.schema_id in kept and still(SecurableKind.VIEW, v.id)]
    indexes: list[IndexDescriptor] = [i for t in tables for i in catalog.table_indexes(t.id)]
    return Catalog.from_parts(
        version=catalog.version,
        activation_ts=catalog.activation_ts,
        object_id_gen=catalog.object_id_gen,
        default_zone_id=catalog.default_zone_id,
        schemas=schemas,
        zones=catalog.zones(),
        tables=tables,
        indexes=indexes,
        views=views,
    )
