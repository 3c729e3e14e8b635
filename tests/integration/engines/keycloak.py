"""A real Keycloak (from ``make engines``) as the outside identity provider of the sign-in tests.

``Keycloak`` starts it in development mode on a free loopback port (its own data folder, an
in-memory database), and ``realm`` makes what a company's provider would hold: a realm, a
``catalog`` client scope that puts the catalog's audience and the caller's groups into access
tokens, groups, and service-account clients (an engine's client id and secret) in them.
"""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.integration.api.servers import RunningServer, free_port
from tests.integration.engines.conftest import (
    CACHE,
    ENGINE_START_TIMEOUT_S,
    SETUP_HINT,
    catalog_settings,
    stop_group,
    trino_java_home,
)

KEYCLOAK_HOME = CACHE / "keycloak" / "keycloak-26.7.3"
AUDIENCE = "event-catalog"
_ADMIN = ("admin", "admin-password")


class Keycloak:
    """Keycloak in development mode, stopped by ``stop`` (its own process group)."""

    def __init__(self, folder: Path) -> None:
        if not (KEYCLOAK_HOME / "bin" / "kc.sh").is_file():
            pytest.fail(f"{KEYCLOAK_HOME} is missing: {SETUP_HINT}")
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        java = trino_java_home()  # a JDK of 24 or newer: Keycloak 26 needs 21 at least
        env = dict(
            os.environ,
            JAVA_HOME=str(java),
            PATH=f"{java}/bin{os.pathsep}{os.environ['PATH']}",
            KC_BOOTSTRAP_ADMIN_USERNAME=_ADMIN[0],
            KC_BOOTSTRAP_ADMIN_PASSWORD=_ADMIN[1],
            KC_DB="dev-mem",
            KC_HTTP_MANAGEMENT_PORT=str(free_port()),
        )
        self.log_path = folder / "keycloak.log"
        self._log = self.log_path.open("w")
        self.process = subprocess.Popen(
            [
                str(KEYCLOAK_HOME / "bin" / "kc.sh"),
                "start-dev",
                "--http-host=127.0.0.1",
                f"--http-port={self.port}",
                "--hostname-strict=false",
                "--cache=local",
            ],
            stdout=self._log,
            stderr=subprocess.STDOUT,
            env=env,
            cwd=folder,
            start_new_session=True,
        )
        self._wait_ready()

    def _wait_ready(self) -> None:
        deadline = time.monotonic() + ENGINE_START_TIMEOUT_S
        while True:
            try:
                if httpx.get(f"{self.url}/realms/master", timeout=2).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            if self.process.poll() is not None:
                raise RuntimeError(f"Keycloak exited: see {self.log_path}")
            if time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"Keycloak did not answer in {ENGINE_START_TIMEOUT_S} s")
            time.sleep(1)

    def _admin(self) -> httpx.Client:
        token = httpx.post(
            f"{self.url}/realms/master/protocol/openid-connect/token",
            data={
                "grant_type": "password",
                "client_id": "admin-cli",
                "username": _ADMIN[0],
                "password": _ADMIN[1],
            },
            timeout=30,
        )
        token.raise_for_status()
        headers = {"Authorization": f"Bearer {token.json()['access_token']}"}
        return httpx.Client(base_url=f"{self.url}/admin/realms", headers=headers, timeout=30)

    def realm(self, name: str, groups: list[str]) -> Realm:
        """Make realm ``name`` with a ``catalog`` scope and ``groups``."""
        with self._admin() as admin:
            _ok(admin.post("", json={"realm": name, "enabled": True}))
            mappers = [
                {
                    "name": "catalog audience",
                    "protocol": "openid-connect",
                    "protocolMapper": "oidc-audience-mapper",
                    "config": {
                        "included.custom.audience": AUDIENCE,
                        "access.token.claim": "true",
                        "id.token.claim": "false",
                    },
                },
                {
                    "name": "groups",
                    "protocol": "openid-connect",
                    "protocolMapper": "oidc-group-membership-mapper",
                    "config": {
                        "claim.name": "groups",
                        "full.path": "false",
                        "access.token.claim": "true",
                    },
                },
            ]
            scope = {
                "name": "catalog",
                "protocol": "openid-connect",
                "attributes": {"include.in.token.scope": "true"},
                "protocolMappers": mappers,
            }
            _ok(admin.post(f"/{name}/client-scopes", json=scope))
            for group in groups:
                _ok(admin.post(f"/{name}/groups", json={"name": group}))
        return Realm(self, name)

    def stop(self) -> None:
        stop_group(self.process)
        self._log.close()


class Realm:
    """A realm of a running Keycloak: its issuer, token endpoint and clients."""

    def __init__(self, keycloak: Keycloak, name: str) -> None:
        self.keycloak = keycloak
        self.name = name
        self.issuer = f"{keycloak.url}/realms/{name}"
        self.token_endpoint = f"{self.issuer}/protocol/openid-connect/token"

    def client(
        self,
        client_id: str,
        groups: list[str],
        *,
        scopes: tuple[str, ...] = ("basic", "profile", "catalog"),
        lifespan_s: int | None = None,
    ) -> str:
        """Make a service-account client in ``groups``; return its secret."""
        secret = f"{client_id}-secret-{os.urandom(8).hex()}"
        attributes: dict[str, Any] = {}
        if lifespan_s is not None:
            attributes["access.token.lifespan"] = str(lifespan_s)
        with self.keycloak._admin() as admin:
            _ok(
                admin.post(
                    f"/{self.name}/clients",
                    json={
                        "clientId": client_id,
                        "secret": secret,
                        "publicClient": False,
                        "serviceAccountsEnabled": True,
                        "standardFlowEnabled": False,
                        "directAccessGrantsEnabled": False,
                        "defaultClientScopes": list(scopes),
                        "attributes": attributes,
                    },
                )
            )
            (made,) = _ok(admin.get(f"/{self.name}/clients", params={"clientId": client_id}))
            user = _ok(admin.get(f"/{self.name}/clients/{made['id']}/service-account-user"))
            known = {g["name"]: g["id"] for g in _ok(admin.get(f"/{self.name}/groups"))}
            for group in groups:
                _ok(admin.put(f"/{self.name}/users/{user['id']}/groups/{known[group]}"))
        return secret

    def token(self, client_id: str, secret: str, scope: str = "catalog") -> str:
        """Return an access token of the client (client credentials), as an engine gets one."""
        answer = httpx.post(
            self.token_endpoint,
            data={
                "grant_type": "client_credentials",
                "client_id": client_id,
                "client_secret": secret,
                "scope": scope,
            },
            timeout=30,
        )
        answer.raise_for_status()
        token: str = answer.json()["access_token"]
        return token


def trusting_server(folder: Path, realm: Realm, roles: str) -> RunningServer:
    """Return a catalog server (not started) with auth on that trusts ``realm``'s tokens.

    ``roles`` gives the cluster roles of groups (``CATALOG_OIDC_ROLES``); a caller is named
    by its ``preferred_username``.
    """
    settings = catalog_settings(
        folder,
        auth="on",
        oidc_issuer=realm.issuer,
        oidc_roles=roles,
        oidc_subject_claim="preferred_username",
    )
    return RunningServer(settings)


def _ok(answer: httpx.Response) -> Any:
    if answer.status_code >= 300:
        raise RuntimeError(
            f"Keycloak refused {answer.request.url}: {answer.status_code} {answer.text}"
        )
    return answer.json() if answer.content else None
