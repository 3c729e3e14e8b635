"""The outside provider's token rules that a real provider cannot be made to break."""

from __future__ import annotations

import asyncio
import time

import jwt
import pytest
from cryptography.hazmat.primitives.asymmetric import rsa

from api.server.claims import Claims
from api.server.errors import ApiError
from api.server.outside_tokens import OidcSettings, OutsideTokens, _Key
from api.wire.roles import Role

ISSUER = "https://id.example.com/realms/lake"


def _tokens() -> OutsideTokens:
    roles = OidcSettings.parse_roles("reader=analysts, writer=etl,admin=platform")
    return OutsideTokens(OidcSettings(ISSUER, "event-catalog", roles))


def test_roles_map_groups_and_bad_mappings_are_refused() -> None:
    assert OidcSettings.parse_roles("reader=analysts, writer=etl") == (
        ("analysts", Role.READER),
        ("etl", Role.WRITER),
    )
    for bad in ("owner=etl", "reader", "reader=", "=etl"):
        with pytest.raises(ValueError, match="ROLE=GROUP"):
            OidcSettings.parse_roles(bad)


def test_the_highest_role_of_the_groups_wins_and_no_mapped_group_gives_none() -> None:
    tokens = _tokens()
    assert tokens._role(tokens._groups({"groups": ["analysts", "etl"]})) == Role.WRITER
    assert tokens._role(tokens._groups({"groups": "platform"})) == Role.ADMIN
    assert tokens._role(tokens._groups({"groups": ["visitors"]})) == Role.NONE
    assert tokens._role(tokens._groups({})) == Role.NONE


def _signed_by(tokens: OutsideTokens, declared: str | None) -> rsa.RSAPrivateKey:
    """Give ``tokens`` one published key (``k``) as if fetched now; return its private half."""
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    public = jwt.PyJWK.from_dict(
        {**jwt.algorithms.RSAAlgorithm.to_jwk(key.public_key(), as_dict=True), "kid": "k"}
    )
    tokens._keys = {"k": _Key(public, declared)}
    tokens._fetched_at = time.monotonic()
    return key


def _claims(**more: object) -> dict[str, object]:
    now = int(time.time())
    base = {"iss": ISSUER, "aud": "event-catalog", "sub": "x", "iat": now, "exp": now + 600}
    return {**base, "groups": ["etl"], **more}


def test_times_audience_and_the_keys_algorithm_are_checked() -> None:
    tokens = _tokens()
    key = _signed_by(tokens, "RS256")
    header = {"alg": "RS256", "kid": "k"}

    def verify(claims: dict[str, object], algorithm: str = "RS256") -> Claims:
        token = jwt.encode(claims, key, algorithm=algorithm, headers={"kid": "k"})
        return asyncio.run(tokens.verify(token, {**header, "alg": algorithm}))

    assert verify(_claims()).role == Role.WRITER
    now = int(time.time())
    refusals = {
        "is not valid yet": _claims(nbf=now + 300),
        "has expired": _claims(exp=now - 60),
        "is not for this catalog": _claims(aud="another"),
        "is of another issuer": _claims(iss="https://elsewhere"),
    }
    for words, claims in refusals.items():
        with pytest.raises(ApiError, match=words):
            verify(claims)
    with pytest.raises(ApiError, match="algorithm is not its key's"):
        verify(_claims(), "RS512")
    with pytest.raises(ApiError, match="no sub claim"):
        verify({k: v for k, v in _claims().items() if k != "sub"})
    # In no group a role is given for: it verifies, with the role none and its groups (whose
    # grants are what it holds), a path's leading "/" left out.
    unmapped = verify(_claims(groups=["/marketing", "visitors", "/marketing"]))
    assert (unmapped.role, unmapped.groups) == (Role.NONE, ("marketing", "visitors"))
    odd = verify(_claims(groups=[{"name": "etl"}, 7, ""]))
    assert (odd.role, odd.groups) == (Role.NONE, ())
