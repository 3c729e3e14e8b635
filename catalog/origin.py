"""``UpdateOrigin``: who asked for a request that a catalog version holds, with what, and why."""

from __future__ import annotations

from pydantic import Field

from catalog.model import Model

MAX_NAME_CHARS = 200
"""The longest principal or client name an origin keeps (a token's subject is as long)."""
MAX_MESSAGE_CHARS = 1000
"""The longest message a request may give for its change."""
LOCAL_PRINCIPAL = "local"
"""The principal of requests where tokens are not checked (one caller for everyone)."""
IN_PROCESS_CLIENT = "in-process"
"""The client of requests made by a program that runs the node itself."""
CLIENT_HEADER = "Catalog-Client"
"""The HTTP header in which the catalog's own clients name themselves (``UpdateOrigin.client``)."""


class UpdateOrigin(Model):
    """Who asked for one request of a version, from what, and why.

    A version holds one origin per request in it (several when requests were committed
    together), in the order of their entries.

    Attributes:
        principal: the caller's token subject, or ``local`` where tokens are not checked.
        client: what sent the request: ``cli``, ``python-client``, ``spark:<application>``,
            ``browser``, the product a plain HTTP caller's User-Agent names (``curl``), or
            ``in-process`` for a program that runs the node itself.
        message: why, in the caller's words (a request's ``message``, ``catalog exec -m``).
        request_id: the request id as the caller gave it.
        entries: how many of the version's entries this request produced (its events are
            the next ``entries`` ones in the version).
    """

    principal: str = Field(min_length=1, max_length=MAX_NAME_CHARS)
    client: str = Field(min_length=1, max_length=MAX_NAME_CHARS)
    message: str | None = Field(default=None, max_length=MAX_MESSAGE_CHARS)
    request_id: str | None = None
    entries: int = Field(default=0, ge=0)


def in_process(request_id: str | None = None, message: str | None = None) -> UpdateOrigin:
    """Return the origin of a request made by the program that runs the node."""
    return UpdateOrigin(
        principal=LOCAL_PRINCIPAL,
        client=IN_PROCESS_CLIENT,
        message=message,
        request_id=request_id,
    )
