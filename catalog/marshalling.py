"""The stored form of updates, entries and commands, on ``catalog.wire``'s codec.

Update entries are a union told apart by their ``type`` tag, written first (``[tag,
fields]``); commands are kept in their public JSON shape, so decoding validates them exactly as
``commands.parse`` does.
"""

from __future__ import annotations

from collections.abc import Sequence

from catalog.commands import CommandBase, dump, parse
from catalog.entries import UpdateEntry
from catalog.entries.base import EntryBase
from catalog.update import VersionedUpdate
from catalog.wire import Kind, compile_decoder, decode_body, pack_value, to_wire

_UPDATE = compile_decoder(VersionedUpdate)
_ENTRIES = compile_decoder(tuple[UpdateEntry, ...])


def encode_update(update: VersionedUpdate) -> bytes:
    """Return the stored form of a ``VersionedUpdate``."""
    return pack_value(Kind.UPDATE, to_wire(update))


def decode_update(data: bytes) -> VersionedUpdate:
    """Decode a ``VersionedUpdate`` of any format.

    Older ones lack the fields appended since (``VersionedUpdate.WIRE_APPENDED``): no origins
    before format 3, no ``stamps`` before versions stamped their objects.

    Raises:
        FormatError: garbage, a wrong kind, or a newer format.
    """
    result: VersionedUpdate = decode_body(Kind.UPDATE, data, _UPDATE)
    return result


def encode_entries(entries: Sequence[EntryBase]) -> bytes:
    """Return the stored form of a list of update entries."""
    return pack_value(Kind.ENTRIES, to_wire(tuple(entries)))


def decode_entries(data: bytes) -> list[EntryBase]:
    """Decode a list of update entries.

    Raises:
        FormatError: garbage, a wrong kind, or a newer format.
    """
    return list(decode_body(Kind.ENTRIES, data, _ENTRIES))


def encode_commands(commands: Sequence[CommandBase]) -> bytes:
    """Return the stored form of commands (their public JSON shape, in msgpack)."""
    return pack_value(Kind.COMMANDS, dump(commands))


def decode_commands(data: bytes) -> list[CommandBase]:
    """Decode commands, validating them exactly as ``commands.parse`` does.

    Raises:
        FormatError: garbage, a wrong kind, a newer format, or an invalid command.
    """
    return list(decode_body(Kind.COMMANDS, data, parse))
