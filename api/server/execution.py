"""The one way a request runs a batch of commands: the node, the caller, admission, execution.

The DDL routes (``POST /v1/ddl``, ``POST /v1/sql``) and the Iceberg protocol's changes both
run their commands through ``execute_batch``: checked against the caller's grants
(``permits``), in one of the node's DDL slots, as one ``CatalogManager.execute`` with the
caller named in the version's origin.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from fastapi import Request

from api.server.auth import caller_of, principal_of, scoped_request_id
from api.server.errors import ApiError
from api.server.permits import audit_grants, check_commands
from api.server.slots import Slot, Slots
from api.wire.codes import Code
from catalog.apply_result import ApplyResult
from catalog.catalog import Catalog
from catalog.commands import CommandBase
from catalog.commands.grants import GrantCommand
from catalog.errors import BatchPosition, CatalogError
from catalog.manager import Precondition
from catalog.origin import CLIENT_HEADER, LOCAL_PRINCIPAL, MAX_NAME_CHARS, UpdateOrigin
from catalog.runtime.node import CatalogNode


def _both(first: Precondition, then: Precondition) -> Precondition:
    """Return a precondition that checks ``first``, then ``then``."""

    def both(catalog: Catalog) -> None:
        first(catalog)
        then(catalog)

    return both


def node_of(request: Request) -> CatalogNode:
    """Return the node behind this app.

    Raises:
        ApiError: Code.NOT_READY before the node started.
    """
    node: CatalogNode | None = getattr(request.app.state, "node", None)
    if node is None:
        raise ApiError(Code.NOT_READY, "the catalog node is starting")
    return node


def client_of(request: Request) -> str:
    """Name what sent ``request``: its ``Catalog-Client`` header, else its User-Agent's product.

    The catalog's own clients say what they are (``cli``, ``python-client``,
    ``spark:<application>``, ``browser``); any other caller is named by the first product of
    its User-Agent without the version (``curl/8.5.0`` is ``curl``), or ``unknown``.
    """
    named = request.headers.get(CLIENT_HEADER, "").strip()
    if not named:
        agent = request.headers.get("user-agent", "").strip()
        named = agent.split(maxsplit=1)[0].split("/", 1)[0] if agent else ""
    printable = "".join(ch for ch in named if ch.isprintable())[:MAX_NAME_CHARS]
    return printable or "unknown"


def admitted(request: Request) -> Slot:
    """Take one of the node's DDL slots for the caller, or refuse with 429."""
    slots: Slots = request.app.state.ddl_slots
    slot = slots.take(caller_of(request))
    if slot is None:
        raise ApiError(
            Code.TOO_MANY_REQUESTS,
            f"this node works on at most {slots.limit} DDL requests at once, "
            f"{slots.per_principal} from one caller; nothing was applied: wait for one to "
            "finish and send this one again",
        )
    return slot


async def execute_batch(
    request: Request,
    commands: Sequence[CommandBase],
    *,
    slot: Slot | None = None,
    request_id: str | None = None,
    message: str | None = None,
    wait_for_nodes: float | None = None,
    precondition: Precondition | None = None,
) -> ApplyResult:
    """Apply ``commands`` as one atomic batch for the caller of ``request``.

    Args:
        request: the request asking for it (its node, caller and DDL slots).
        commands: the batch.
        slot: the DDL slot the caller already holds (taken before work that precedes the
            batch); without it, one is taken here.
        request_id: the caller's request id, applied at most once (scoped to the caller).
        message: why, in the caller's words.
        wait_for_nodes: also wait for the live nodes to apply the version, this long at most.
        precondition: what the catalog must still hold for the batch to apply.

    Returns:
        The manager's result.

    Raises:
        ApiError: TOO_MANY_REQUESTS when no slot is free.
        CatalogError: the batch was refused; nothing was applied.
    """
    node = node_of(request)
    latest = node.service.latest_catalog()
    batch, positions, check = check_commands(request, latest, commands, node.settings.warehouse)
    if check is not None:
        precondition = check if precondition is None else _both(check, precondition)
    with slot or admitted(request):
        origin = UpdateOrigin(
            principal=principal_of(request) or LOCAL_PRINCIPAL,
            client=client_of(request),
            message=message,
            request_id=request_id,
        )
        try:
            result = await node.manager.execute(
                batch,
                request_id=scoped_request_id(request, request_id),
                wait_for_nodes=wait_for_nodes,
                origin=origin,
                precondition=precondition,
            )
        except CatalogError as refused:
            if refused.position is not None and len(batch) != len(commands):
                # numbered in the caller's batch, not the one with the ownership grants
                number = sum(1 for p in positions if p < refused.position.statement)
                refused.position = BatchPosition(number)
            raise
    if any(isinstance(c, GrantCommand) for c in batch):
        audit_grants(request, batch, result.applied, node.service.catalog(result.version))
    if len(batch) == len(commands) or not result.applied:
        return result
    return replace(result, applied=tuple(result.applied[i] for i in positions))
