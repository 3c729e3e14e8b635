"""The principal calls both clients share (``/v1/principals``, the admin role).

A principal's secret is in the answer that makes it (``create_principal``,
``rotate_principal_secret``) and nowhere else: keep it where the engine that signs in with
it reads its configuration.
"""

from __future__ import annotations

from api.client.calls import Call, json_of, segment
from api.wire.principals import PrincipalBody, PrincipalCredentials, PrincipalList
from api.wire.roles import Role


def principals_call() -> Call[list[PrincipalBody]]:
    """Return every principal (``GET /v1/principals``): names, roles, client ids."""
    decode = json_of(PrincipalList)
    return Call("GET", "/v1/principals", lambda r: decode(r).principals)


def create_principal_call(name: str, role: Role | str) -> Call[PrincipalCredentials]:
    """Create a principal; the answer holds its client id and secret, shown only here."""
    body = {"name": name, "role": str(Role(role))}
    return Call("POST", "/v1/principals", json_of(PrincipalCredentials), body=body)


def change_principal_call(name: str, role: Role | str) -> Call[PrincipalBody]:
    """Give a principal another role (``PATCH /v1/principals/{name}``)."""
    path = f"/v1/principals/{segment(name)}"
    return Call("PATCH", path, json_of(PrincipalBody), body={"role": str(Role(role))})


def rotate_principal_secret_call(name: str) -> Call[PrincipalCredentials]:
    """Give a principal a new secret, shown only in the answer; its old tokens stop working."""
    return Call("POST", f"/v1/principals/{segment(name)}/secret", json_of(PrincipalCredentials))


def drop_principal_call(name: str) -> Call[None]:
    """Drop a principal: its tokens stop working on every node."""
    return Call("DELETE", f"/v1/principals/{segment(name)}", lambda r: None)
