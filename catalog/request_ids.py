"""Request ids: what a client may send as one, and how a retry is told from a reuse.

A request id makes a request idempotent: sent again (a client retrying after a lost answer),
it is answered with the first outcome and runs no second time. The log records, with the id,
a digest of what the request asked for; the same id sent with other content is refused with
``REQUEST_ID_REUSED`` instead of being answered with an outcome that is not its own.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence

from catalog.commands import CommandBase, dump
from catalog.errors import ErrorCode, ValidationError

MAX_REQUEST_ID_LENGTH = 240
"""Room for a client's 200-character id and the principal the API scopes it to."""


def check_request_id(request_id: str) -> None:
    """Refuse a request id that is empty, too long or holds unprintable characters.

    Raises:
        ValidationError: VALIDATION_ERROR.
    """
    if not (0 < len(request_id) <= MAX_REQUEST_ID_LENGTH and request_id.isprintable()):
        raise ValidationError(f"a request id has 1..{MAX_REQUEST_ID_LENGTH} printable characters")


def commands_digest(commands: Sequence[CommandBase]) -> bytes:
    """Return the digest of a batch of commands, as recorded with its request id.

    It is taken over the commands' public JSON shape with sorted keys, so two spellings of
    one request (SQL with other whitespace, JSON with keys in another order) have one digest,
    and any command that parsed has one (JSON integers have no size limit).
    """
    shape = json.dumps(dump(commands), sort_keys=True, separators=(",", ":"))
    return content_digest(shape.encode())


def content_digest(content: bytes) -> bytes:
    """Return the digest of a request's content in a canonical byte form."""
    return hashlib.sha256(content).digest()


def request_id_reused(outcome: str) -> ValidationError:
    """Return the refusal of a request id already used for a request with other content.

    Args:
        outcome: what became of the first request, in words ("committed as version 7").
    """
    return ValidationError(
        f"this request id was already used for a different request, which {outcome}; "
        "send a new request id for a new request (the same id is only for retrying the same "
        "request)",
        code=ErrorCode.REQUEST_ID_REUSED,
    )
