"""A moment as a request names it: a hybrid timestamp, or an RFC 3339 time with an offset."""

from __future__ import annotations

import datetime as dt

from catalog.errors import ValidationError
from schemasync.clock import MAX_TIMESTAMP, hlc


def parse_timestamp(text: str) -> int:
    """Parse ``at=``: a hybrid timestamp integer, or an RFC 3339 time with an offset.

    Raises:
        ValidationError: neither form, no offset, or out of range.
    """
    text = text.strip()
    if text.isascii() and text.isdigit():
        value = int(text)
        if value > MAX_TIMESTAMP:
            raise ValidationError(f"timestamp {text} does not fit in 64 bits")
        return value
    try:
        moment = dt.datetime.fromisoformat(text)
    except ValueError as e:
        raise ValidationError(
            f"at={text!r} is neither a hybrid timestamp nor an RFC 3339 time"
        ) from e
    if moment.tzinfo is None:
        raise ValidationError(f"at={text!r} needs an offset, e.g. 2026-01-01T00:00:00Z")
    ms = int(moment.timestamp() * 1000)
    if ms < 0:
        raise ValidationError(f"at={text!r} is before 1970")
    return hlc(ms)
