"""Response models of ``/v1/grants``, ``/v1/roles`` and ``/v1/access``: who may do what, when."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from catalog.access import AccessPath
from catalog.catalog import Catalog
from catalog.descriptors import GrantDescriptor, GranteeKind, Privilege, SecurableKind
from catalog.grant_names import grantee_name, securable_name, words_of


class _Shape(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class GrantBody(_Shape):
    """One grant: a privilege on an object, to a principal (``user``) or a role."""

    id: int
    privilege: Privilege
    on: SecurableKind
    object: str | None = Field(
        description="The object's name (``SALES.ORDERS``); empty for the catalog; null once gone."
    )
    to: GranteeKind
    grantee: str | None = Field(description="The principal's or role's name; null once gone.")
    words: str = Field(description="The grant as SQL says it: SELECT ON TABLE S.T TO USER u.")
    update_ts: int = Field(description="When the version that made it became active.")

    @classmethod
    def of(cls, grant: GrantDescriptor, *catalogs: Catalog) -> GrantBody:
        """Return ``grant`` named as of ``catalogs`` (the first that knows each name)."""
        return cls(**_grant_document(grant, *catalogs))


class GrantsBody(_Shape):
    """``GET /v1/grants``: the grants at the version read (all, or on one object or to one)."""

    version: int
    activation_ts: int
    grants: list[GrantBody]


class RoleBody(_Shape):
    """A role, with the roles it holds and the principals and roles holding it."""

    name: str
    holds: list[str] = Field(description="The roles granted to it.")
    members: list[str] = Field(description="Who it is granted to, as USER u or ROLE r.")


class RolesBody(_Shape):
    """``GET /v1/roles``: every role at the version read."""

    version: int
    roles: list[RoleBody]


class HolderBody(_Shape):
    """Who holds a privilege, and through which chain of grants (by id, in ``WhoCanBody``)."""

    kind: GranteeKind
    name: str
    cluster_role: str | None = Field(
        default=None, description="Held by its cluster-wide role (reader, writer, admin)."
    )
    through: list[int] = Field(
        description="The grant of the privilege, then each role grant handing it on (ids)."
    )
    usage: list[int] = Field(
        description="The same for USAGE on the schema, which a table or view also needs."
    )


class WhoCanBody(_Shape):
    """``GET /v1/access``: who could do ``privilege`` on ``object`` at a version.

    Each grant the holders' chains pass through is named once, in ``grants``; the chains
    refer to them by id (``chain`` gives them back in order).
    """

    version: int
    activation_ts: int
    privilege: Privilege
    on: SecurableKind
    object: str
    holders: list[HolderBody]
    grants: list[GrantBody] = Field(description="Every grant a chain names, once, by id.")

    @staticmethod
    def document(
        catalog: Catalog,
        privilege: Privilege,
        on: SecurableKind,
        name: str,
        paths: list[AccessPath],
    ) -> dict[str, Any]:
        """Return the answer of ``who_can`` on ``catalog`` as this model's JSON document.

        Built as plain values, each grant named once: an answer holds hundreds of holders,
        and models made only to be encoded would cost more than the decision.
        """
        named = {g.id: g for p in paths for g in (*p.through, *p.usage)}
        return {
            "version": catalog.version,
            "activation_ts": catalog.activation_ts,
            "privilege": str(privilege),
            "on": str(on),
            "object": name,
            "holders": [_holder_document(p, catalog) for p in paths],
            "grants": [_grant_document(named[i], catalog) for i in sorted(named)],
        }

    def chain(self, ids: list[int]) -> list[GrantBody]:
        """Return the grants of a holder's chain (its ``through`` or ``usage``), in order."""
        by_id = {g.id: g for g in self.grants}
        return [by_id[i] for i in ids]


class AccessDiffBody(_Shape):
    """``GET /v1/access/diff``: the grants made and taken back between two versions."""

    from_version: int
    to_version: int
    granted: list[GrantBody]
    revoked: list[GrantBody]


def _grant_document(grant: GrantDescriptor, *catalogs: Catalog) -> dict[str, Any]:
    """Return a ``GrantBody``'s JSON document: ``grant`` named as of ``catalogs``."""
    on_name = securable_name(grant.on, grant.on_id, *catalogs)
    to_name = grantee_name(grant.to, grant.to_id, *catalogs)
    return {
        "id": grant.id,
        "privilege": str(grant.privilege),
        "on": str(grant.on),
        "object": on_name,
        "to": str(grant.to),
        "grantee": to_name,
        "words": words_of(grant, on_name, to_name),
        "update_ts": grant.update_ts,
    }


def _holder_document(path: AccessPath, catalog: Catalog) -> dict[str, Any]:
    """Return a ``HolderBody``'s JSON document: ``path`` named as of ``catalog``."""
    kind, grantee_id = path.grantee
    return {
        "kind": str(kind),
        "name": grantee_name(kind, grantee_id, catalog) or f"#{grantee_id}",
        "cluster_role": None if path.cluster_role is None else str(path.cluster_role),
        "through": [g.id for g in path.through],
        "usage": [g.id for g in path.usage],
    }
