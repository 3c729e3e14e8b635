"""Engines sign in with a real outside identity provider (Keycloak), and its tokens are checked.

A catalog server with auth on trusts a Keycloak realm (``CATALOG_OIDC_ISSUER``): group ``etl``
gives the writer role, ``analysts`` the reader role, and a token in neither has the role
``none`` (its groups' grants alone). Engines are configured with a Keycloak client's id and
secret and Keycloak's token endpoint: they get their token from Keycloak and the catalog never
sees a secret. Bad tokens (another issuer, another audience, expired, forged)
are refused; when Keycloak is down, the keys the catalog fetched keep working for their
lifetime and then every outside token is refused.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import dataclass

import httpx
import jwt
import pyarrow as pa
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from pyiceberg.catalog import Catalog, load_catalog
from pyiceberg.exceptions import ForbiddenError

from api.server.access_tokens import CLOCK_LEEWAY_S
from api.wire.roles import Role
from tests.integration.api.servers import RunningServer, issue_token
from tests.integration.engines.conftest import (
    PEOPLE,
    EngineError,
    Recorder,
    SparkShell,
    TrinoServer,
)
from tests.integration.engines.engines import DuckDBEngine, SparkEngine, TrinoEngine
from tests.integration.engines.keycloak import Keycloak, Realm, trusting_server
from tests.integration.engines.test_sign_in import _duckdb_with, _spark_catalog, _trino_catalog
from tests.integration.engines.test_smoke import run

pytestmark = pytest.mark.timeout(300)


@dataclass
class Provider:
    keycloak: Keycloak
    realm: Realm
    other: Realm
    server: RunningServer
    secrets: dict[str, str]

    @property
    def uri(self) -> str:
        return f"{self.server.url}/iceberg"

    def token(self, client: str, realm: Realm | None = None, scope: str = "catalog") -> str:
        return (realm or self.realm).token(client, self.secrets[client], scope)

    def get(self, token: str) -> httpx.Response:
        headers = {"Authorization": f"Bearer {token}"}
        return httpx.get(f"{self.uri}/v1/namespaces", headers=headers, timeout=10)


@pytest.fixture(scope="module")
def provider(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Provider]:
    keycloak = Keycloak(tmp_path_factory.mktemp("keycloak"))
    try:
        realm = keycloak.realm("lake", ["etl", "analysts", "visitors"])
        other = keycloak.realm("elsewhere", ["etl"])
        secrets = {
            "pipeline": realm.client("pipeline", ["etl"]),
            "dashboards": realm.client("dashboards", ["analysts"]),
            "stranger": realm.client("stranger", ["visitors"]),
            "no-audience": realm.client("no-audience", ["etl"], scopes=("basic", "profile")),
            "short-lived": realm.client("short-lived", ["etl"], lifespan_s=2),
        }
        secrets["foreign"] = other.client("foreign", ["etl"])
        server = trusting_server(
            tmp_path_factory.mktemp("oidc-catalog"), realm, "writer=etl,reader=analysts"
        )
        server.start()
        try:
            yield Provider(keycloak, realm, other, server, secrets)
        finally:
            server.stop()
    finally:
        keycloak.stop()


def _pyiceberg(provider: Provider, client: str) -> Catalog:
    return load_catalog(
        f"kc-{client}",
        type="rest",
        uri=provider.uri,
        credential=f"{client}:{provider.secrets[client]}",
        scope="catalog",
        **{"oauth2-server-uri": provider.realm.token_endpoint},
    )


def test_engines_sign_in_with_the_providers_tokens(
    provider: Provider, namespace: str, spark_engine: SparkShell, recorder: Recorder
) -> None:
    writer = _pyiceberg(provider, "pipeline")
    writer.create_namespace(namespace)
    table = writer.create_table(f"{namespace}.people", PEOPLE)
    rows = [{"id": 1, "name": "ann"}, {"id": 2, "name": "bob"}]
    table.append(pa.Table.from_pylist(rows, schema=table.schema().as_arrow()))

    credential = f"pipeline:{provider.secrets['pipeline']}"
    _spark_catalog(
        spark_engine,
        "kc_w",
        provider.uri,
        credential,
        {".oauth2-server-uri": provider.realm.token_endpoint, ".scope": "catalog"},
    )
    spark = SparkEngine(spark_engine)
    run(spark, f"INSERT INTO kc_w.{namespace}.people VALUES (3, 'cy')", recorder)
    assert run(spark, f"SELECT count(*) FROM kc_w.{namespace}.people", recorder) == [[3]]

    con = _duckdb_with(
        provider.uri,
        f"dashboards:{provider.secrets['dashboards']}",
        provider.realm.token_endpoint,
        scope="catalog",
    )
    try:
        duck = DuckDBEngine(con)
        assert run(duck, f"SELECT count(*) FROM cat.{namespace}.people", recorder) == [[3]]
        with pytest.raises(EngineError):
            duck.sql(f"INSERT INTO cat.{namespace}.people VALUES (4, 'dee')")
    finally:
        con.close()

    reader = _pyiceberg(provider, "dashboards")
    assert reader.load_table(f"{namespace}.people").scan().to_arrow().num_rows == 3
    with pytest.raises(ForbiddenError, match="service-account-dashboards has the reader role"):
        reader.create_table(f"{namespace}.other", PEOPLE)

    admin = issue_token(provider.server.settings.store, Role.ADMIN)
    versions = httpx.get(
        f"{provider.server.url}/v1/versions",
        params={"from_version": 1, "limit": 1000},
        headers={"Authorization": f"Bearer {admin}"},
        timeout=10,
    ).json()["versions"]
    assert "service-account-pipeline" in {o["principal"] for v in versions for o in v["origins"]}


def test_trino_signs_in_at_the_provider(
    provider: Provider, namespace: str, trino_engine: TrinoServer, recorder: Recorder
) -> None:
    writer = _pyiceberg(provider, "pipeline")
    writer.create_namespace(namespace)
    table = writer.create_table(f"{namespace}.people", PEOPLE)
    rows = [{"id": 1, "name": "ann"}]
    table.append(pa.Table.from_pylist(rows, schema=table.schema().as_arrow()))
    _trino_catalog(
        trino_engine,
        f"kc_{namespace}",
        provider.uri,
        f"dashboards:{provider.secrets['dashboards']}",
        {
            "iceberg.rest-catalog.oauth2.server-uri": provider.realm.token_endpoint,
            "iceberg.rest-catalog.oauth2.scope": "catalog",
        },
    )
    trino = TrinoEngine(trino_engine)
    people = f"kc_{namespace}.{namespace}.people"
    assert run(trino, f"SELECT id, name FROM {people}", recorder) == [[1, "ann"]]
    with pytest.raises(EngineError, match="service-account-dashboards has the reader role"):
        trino.sql(f"INSERT INTO {people} VALUES (2, 'bob')")


def test_the_providers_tokens_are_checked(provider: Provider) -> None:
    assert provider.get(provider.token("pipeline")).status_code == 200
    # In a group the catalog gives no role: the role none, holding only its groups' grants
    # (none here). It signs in and sees an empty catalog; routes for readers refuse it.
    stranger = provider.token("stranger")
    listed = provider.get(stranger)
    assert listed.status_code == 200, listed.text
    assert listed.json()["namespaces"] == []
    leases = httpx.get(
        f"{provider.server.url}/v1/leases",
        headers={"Authorization": f"Bearer {stranger}"},
        timeout=10,
    )
    assert leases.status_code == 403, leases.text
    assert (
        "service-account-stranger has the none role and may not do this; it needs the reader role"
        in leases.json()["detail"]
    )
    refusals = {
        "audience": (provider.token("no-audience", scope="profile"), "not for this catalog"),
        "issuer": (provider.token("foreign", provider.other), "does not trust"),
    }
    expiring = provider.token("short-lived")
    assert provider.get(expiring).status_code == 200
    time.sleep(2 + CLOCK_LEEWAY_S + 1)
    refusals["expired"] = (expiring, "has expired")
    real = provider.token("pipeline")
    header = jwt.get_unverified_header(real)
    claims = jwt.decode(real, options={"verify_signature": False})
    own_key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    refusals["none"] = (
        jwt.encode(claims, "", algorithm="none", headers={"kid": header["kid"]}),
        "not signed",
    )
    refusals["unknown kid"] = (
        jwt.encode(claims, own_key, algorithm="RS256", headers={"kid": "made-up"}),
        "does not publish",
    )
    refusals["own key, real kid"] = (
        jwt.encode(claims, own_key, algorithm="RS256", headers={"kid": header["kid"]}),
        "signature that does not match",
    )
    public = _public_pem(provider, header["kid"])
    refusals["HS256 with the public key"] = (
        _hs256(claims, public, header["kid"]),
        "not signed",
    )
    for what, (token, words) in refusals.items():
        answer = provider.get(token)
        assert answer.status_code == 401, (what, answer.text)
        assert words in answer.json()["error"]["message"], (what, answer.text)


def _public_pem(provider: Provider, kid: str) -> bytes:
    keys = httpx.get(f"{provider.realm.issuer}/protocol/openid-connect/certs", timeout=10).json()
    (found,) = [k for k in keys["keys"] if k["kid"] == kid]
    public = jwt.PyJWK.from_dict(found).key
    return bytes(
        public.public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
        )
    )


def _hs256(claims: dict[str, object], secret: bytes, kid: str) -> str:
    """A token HMAC-signed with the provider's public key as the secret (key confusion)."""
    import base64
    import hashlib
    import hmac
    import json

    def b64(data: bytes) -> str:
        return base64.urlsafe_b64encode(data).rstrip(b"=").decode()

    head = b64(json.dumps({"alg": "HS256", "typ": "JWT", "kid": kid}).encode())
    body = b64(json.dumps(claims).encode())
    signature = hmac.new(secret, f"{head}.{body}".encode(), hashlib.sha256).digest()
    return f"{head}.{body}.{b64(signature)}"


def test_kept_keys_work_while_the_provider_is_down_then_every_outside_token_stops(
    provider: Provider,
) -> None:
    """Last in the module: it stops Keycloak."""
    token = provider.token("pipeline")
    assert provider.get(token).status_code == 200
    header = jwt.get_unverified_header(token)
    claims = jwt.decode(token, options={"verify_signature": False})
    own_key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    unknown = jwt.encode(claims, own_key, algorithm="RS256", headers={"kid": "rotated-in"})
    provider.keycloak.stop()
    assert provider.get(token).status_code == 200  # the kept keys still verify
    time.sleep(11)  # past the least time between two fetches of a missing key
    refused = provider.get(unknown)
    assert refused.status_code == 401
    assert "cannot be fetched" in refused.json()["error"]["message"]
    outside = provider.server.app.state.outside_tokens
    outside.jwks_lifetime_s = 0.5  # the kept keys' lifetime ends
    time.sleep(1)
    closed = provider.get(token)
    assert closed.status_code == 401 and "cannot be fetched" in closed.json()["error"]["message"]
    del header
