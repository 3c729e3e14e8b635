"""``ClientCredentials``: the client signs in as a principal, the way Iceberg engines do.

Given ``credential="<client id>:<secret>"`` (``catalog principal create`` prints it), the
client asks the server it is about to call for an access token (OAuth2 client credentials at
``/v1/oauth/tokens``), sends it with each request, and asks for a fresh one a minute before
it expires, or at once when a request is answered 401 (the principal was given a new secret
on another node, say). The token is good on every node, so failover keeps it.
"""

from __future__ import annotations

import time
from collections.abc import Generator

import httpx

from api.client.errors import CatalogApiError

TOKEN_PATH = "/v1/oauth/tokens"
REFRESH_BEFORE_S = 60.0
"""How long before its expiry a token is replaced."""


class ClientCredentials(httpx.Auth):
    """An ``httpx`` authentication that signs in with a principal's client id and secret."""

    requires_response_body = True

    def __init__(self, credential: str, scope: str = "catalog") -> None:
        """Take ``credential`` as ``<client id>:<secret>``.

        Raises:
            ValueError: it is not two non-empty parts joined by a colon.
        """
        client_id, colon, secret = credential.partition(":")
        if not (colon and client_id and secret):
            raise ValueError(
                "a credential is <client id>:<secret>, as `catalog principal create` prints it"
            )
        self._form = {
            "grant_type": "client_credentials",
            "client_id": client_id,
            "client_secret": secret,
            "scope": scope,
        }
        self._token: str | None = None
        self._renew_at = 0.0

    def _token_request(self, request: httpx.Request) -> httpx.Request:
        url = request.url.copy_with(path=TOKEN_PATH, query=None, fragment=None)
        return httpx.Request("POST", url, data=self._form)

    def _take(self, response: httpx.Response) -> None:
        if response.status_code != 200:
            try:
                said = response.json().get("error_description") or response.text
            except ValueError:
                said = response.text
            raise CatalogApiError(
                "UNAUTHENTICATED",
                f"signing in with the client credentials was refused: {said}",
                status=response.status_code,
                url=str(response.request.url),
            )
        body = response.json()
        self._token = str(body["access_token"])
        lifetime = float(body.get("expires_in") or 3600)
        self._renew_at = time.monotonic() + max(lifetime - REFRESH_BEFORE_S, lifetime / 2)

    def auth_flow(self, request: httpx.Request) -> Generator[httpx.Request, httpx.Response, None]:
        """Add a valid access token to ``request``, signing in first when needed."""
        fresh = self._token is None or time.monotonic() >= self._renew_at
        if fresh:
            self._take((yield self._token_request(request)))
        request.headers["Authorization"] = f"Bearer {self._token}"
        response = yield request
        if response.status_code == 401 and not fresh:
            self._take((yield self._token_request(request)))
            request.headers["Authorization"] = f"Bearer {self._token}"
            yield request
