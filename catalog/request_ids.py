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

    It is taken over the commands' public JSON shape, so two spellings of one request (SQL
    with other whitespace, JSON with keys in another order) have one digest.
    """
    return content_digest(dump(commands))


def content_digest(shape: object) -> bytes:
    """Return the SHA-256 digest of a request's content given as JSON-ready values.

    Keys are sorted, so equal content has one digest; JSON integers have no size limit, so
    any content that was accepted has one.
    """
    text = json.dumps(shape, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).digest()


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
