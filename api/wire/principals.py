"""Request and response models of ``/v1/principals``: service principals and their secrets."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from api.wire.roles import Role


class _Shape(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class PrincipalRequest(_Shape):
    """``POST /v1/principals``: a new service principal with a role."""

    name: str = Field(min_length=1, max_length=128)
    role: Role


class PrincipalChange(_Shape):
    """``PATCH /v1/principals/{name}``: another role."""

    role: Role


class PrincipalBody(_Shape):
    """A service principal: never its secret, which only its creation or rotation shows."""

    name: str
    role: Role
    client_id: str = Field(description="What an engine sends as its OAuth2 client id.")
    credential_version: int = Field(description="How many secrets it has had.")


class PrincipalList(_Shape):
    """``GET /v1/principals``: every principal at the version read."""

    version: int
    principals: list[PrincipalBody]


class PrincipalCredentials(PrincipalBody):
    """A principal's client id and new secret, shown only here: keep the secret safe.

    Engines sign in with ``credential=<client_id>:<client_secret>`` (OAuth2 client
    credentials at ``/iceberg/v1/oauth/tokens``).
    """

    client_secret: str = Field(repr=False)
    version: int = Field(description="The catalog version that made this secret current.")
