"""``ClientCredentials``: the client signs in as a principal, the way Iceberg engines do.

Given ``credential="<client id>:<secret>"`` (``catalog principal create`` prints it), the
client asks the server it is about to call for an access token (OAuth2 client credentials at
``/v1/oauth/tokens``), sends it with each request, and asks for a fresh one a minute before
it expires, or at once when a request is answered 401 (the principal was given a new secret
on another node, say). The token is good on every node, so failover keeps it.
"""

from __future__ import annotations

import time
from collections.abc import AsyncGenerator, Generator

import httpx

from api.client.errors import CatalogApiError

TOKEN_PATH = "/v1/oauth/tokens"
REFRESH_BEFORE_S = 60.0
"""How long before its expiry a token is replaced."""


_PASSED_ON = frozenset({429, 502, 503, 504})
"""Sign-in answers handed to the client's retries (it tries again, or another node)."""


class ClientCredentials(httpx.Auth):
    """An ``httpx`` authentication that signs in with a principal's client id and secret.

    Only the sign-in's answers are read here: the answer to the request itself is left to the
    caller, so an event stream flows as it arrives.
    """

    requires_response_body = False

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
        self._current: tuple[str, float] | None = None
        """The access token and when to renew it (one value: threads swap it whole)."""

    def __repr__(self) -> str:
        return f"ClientCredentials(client_id={self._form['client_id']!r})"

    def _token_request(self, request: httpx.Request) -> httpx.Request:
        # The server's base URL may have a path of its own (behind a proxy): keep it.
        path = request.url.path
        base = path[: path.find("/v1/")] if "/v1/" in path else ""
        url = request.url.copy_with(path=base + TOKEN_PATH, query=None, fragment=None)
        return httpx.Request("POST", url, data=self._form)

    def _take(self, response: httpx.Response) -> str | None:
        """Keep the token a sign-in answered; None: hand the answer to the retries.

        Raises:
            CatalogApiError: UNAUTHENTICATED, the credentials were refused.
        """
        if response.status_code in _PASSED_ON:
            return None
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
        lifetime = float(body.get("expires_in") or 3600)
        renew_at = time.monotonic() + max(lifetime - REFRESH_BEFORE_S, lifetime / 2)
        self._current = (str(body["access_token"]), renew_at)
        return self._current[0]

    def auth_flow(self, request: httpx.Request) -> Generator[httpx.Request, httpx.Response, None]:
        """Add a valid access token to ``request``, signing in first when needed."""
        current = self._current
        fresh = current is None or time.monotonic() >= current[1]
        token = current[0] if current is not None else None
        if fresh:
            token = self._take((yield self._token_request(request)))
            if token is None:
                return  # the sign-in's own answer (503, 429) goes to the retries
        request.headers["Authorization"] = f"Bearer {token}"
        response = yield request
        if response.status_code == 401 and not fresh:
            token = self._take((yield self._token_request(request)))
            if token is None:
                return
            request.headers["Authorization"] = f"Bearer {token}"
            yield request

    def sync_auth_flow(
        self, request: httpx.Request
    ) -> Generator[httpx.Request, httpx.Response, None]:
        """Run ``auth_flow``, reading the sign-in's answers only."""
        flow = self.auth_flow(request)
        outgoing = next(flow)
        while True:
            response = yield outgoing
            if outgoing.url.path.endswith(TOKEN_PATH):
                response.read()
            try:
                outgoing = flow.send(response)
            except StopIteration:
                return

    async def async_auth_flow(
        self, request: httpx.Request
    ) -> AsyncGenerator[httpx.Request, httpx.Response]:
        """Run ``auth_flow``, reading the sign-in's answers only."""
        flow = self.auth_flow(request)
        outgoing = next(flow)
        while True:
            response = yield outgoing
            if outgoing.url.path.endswith(TOKEN_PATH):
                await response.aread()
            try:
                outgoing = flow.send(response)
            except StopIteration:
                return
