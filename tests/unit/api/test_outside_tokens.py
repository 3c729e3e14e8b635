"""The outside provider's token rules that a real provider cannot be made to break."""

from __future__ import annotations

import time

import jwt
import pytest
from cryptography.hazmat.primitives.asymmetric import rsa

from api.server.errors import ApiError
from api.server.outside_tokens import OidcSettings, OutsideTokens
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


def test_the_highest_role_of_the_groups_wins_and_no_group_is_refused() -> None:
    tokens = _tokens()
    assert tokens._role({"groups": ["analysts", "etl"]}, "x") == Role.WRITER
    assert tokens._role({"groups": "platform"}, "x") == Role.ADMIN
    with pytest.raises(ApiError) as refused:
        tokens._role({"groups": ["visitors"]}, "x")
    assert refused.value.code == "FORBIDDEN"


def test_a_token_not_valid_yet_is_refused() -> None:
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    public = jwt.PyJWK.from_dict(
        {**jwt.algorithms.RSAAlgorithm.to_jwk(key.public_key(), as_dict=True), "kid": "k"}
    )
    now = int(time.time())
    claims = {"iss": ISSUER, "aud": "event-catalog", "sub": "x", "exp": now + 600}
    later = jwt.encode({**claims, "iat": now, "nbf": now + 300}, key, algorithm="RS256")
    with pytest.raises(ApiError, match="not valid yet"):
        _tokens()._decoded(later, public, "RS256")
    valid = jwt.encode({**claims, "iat": now}, key, algorithm="RS256")
    assert _tokens()._decoded(valid, public, "RS256")["sub"] == "x"
    with pytest.raises(ApiError, match="algorithm is not its key's"):
        _tokens()._decoded(
            valid, jwt.PyJWK.from_dict({**public._jwk_data, "alg": "RS512"}), "RS256"
        )
