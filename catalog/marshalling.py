"""msgpack encoding of catalog values, every one prefixed with a format version.

A value is ``msgpack([format_version, kind, body])``. Bodies are positional: a model is the
list of its fields in declaration order (the stable wire tag of a union member comes first,
as ``[tag, fields]``), tuples are lists and enums their values. Positional bodies are about
half the size of keyed ones; the price is that a field is only ever appended, never
reordered, and a reader of format N knows the field list of every format up to N.

Decoding checks every value's type as it rebuilds the models, and any problem - garbage,
truncation, a wrong type, an unknown tag, a newer format - raises ``FormatError`` and nothing
else, so a corrupted value can never become a wrong catalog.
"""

from __future__ import annotations

import enum
import hashlib
import types
import typing
from collections.abc import Callable, Sequence
from typing import Any, Literal, TypeVar, get_args, get_origin

import msgpack

from catalog.catalog import Catalog
from catalog.commands import CommandBase, dump, parse
from catalog.descriptors import (
    Descriptor,
    IndexDescriptor,
    SchemaDescriptor,
    TableDescriptor,
    ZoneDescriptor,
)
from catalog.entries import UpdateEntry
from catalog.entries.base import EntryBase
from catalog.errors import CatalogError
from catalog.model import Model
from catalog.update import VersionedUpdate
from updatelog.errors import FormatError

FORMAT_VERSION = 1
"""The newest format; writers always write it, readers accept it and every older one."""


class Kind(enum.IntEnum):
    """What a marshalled value holds. Values are stable wire codes."""

    UPDATE = 1
    SNAPSHOT = 2
    ENTRIES = 3
    COMMANDS = 4
    DESCRIPTOR = 5


Decoder = Callable[[Any], Any]
M = TypeVar("M", bound=Model)

_DESCRIPTOR_TAGS: dict[str, type[Model]] = {
    "schema": SchemaDescriptor,
    "table": TableDescriptor,
    "index": IndexDescriptor,
    "zone": ZoneDescriptor,
}


# -- encoding ---------------------------------------------------------------------------


def _wire_fields(cls: type[Model]) -> list[str]:
    fields = _WIRE_FIELDS.get(cls)
    if fields is None:
        fields = [
            name
            for name, info in cls.model_fields.items()
            if get_origin(info.annotation) is not Literal
        ]
        _WIRE_FIELDS[cls] = fields
    return fields


_WIRE_FIELDS: dict[type[Model], list[str]] = {}


def _to_wire(value: Any) -> Any:
    t = type(value)
    if t is int or t is str or t is bool or t is float or value is None:
        return value
    if isinstance(value, Model):
        body = [_to_wire(getattr(value, name)) for name in _wire_fields(t)]
        tag = getattr(value, "type", None) if isinstance(value, EntryBase) else None
        return body if tag is None else [tag, body]
    if isinstance(value, tuple | list):
        return [_to_wire(v) for v in value]
    if isinstance(value, enum.Enum):
        return value.value
    raise TypeError(f"cannot marshal {t.__name__}")


def _pack(kind: Kind, body: Any) -> bytes:
    return msgpack.packb([FORMAT_VERSION, int(kind), body], use_bin_type=True)


# -- decoding ---------------------------------------------------------------------------


def _fail(message: str) -> FormatError:
    return FormatError(f"cannot decode catalog value: {message}")


def _primitive(expected: type) -> Decoder:
    def decode(value: Any) -> Any:
        if type(value) is not expected:
            raise _fail(f"expected {expected.__name__}, got {type(value).__name__}")
        return value

    return decode


def _float(value: Any) -> float:
    if type(value) is float or type(value) is int:
        return float(value)
    raise _fail(f"expected a number, got {type(value).__name__}")


def _list(value: Any) -> list[Any]:
    if type(value) is not list:
        raise _fail(f"expected a list, got {type(value).__name__}")
    return value


def _compile(annotation: Any) -> Decoder:
    origin = get_origin(annotation)
    if origin is typing.Annotated:
        return _compile(get_args(annotation)[0])
    if annotation is float:
        return _float
    if annotation in (int, str, bool):
        return _primitive(annotation)
    if annotation is type(None):
        return _primitive(type(None))
    if isinstance(annotation, type) and issubclass(annotation, enum.Enum):
        enum_type = annotation

        def decode_enum(value: Any) -> Any:
            try:
                return enum_type(value)
            except ValueError as e:
                raise _fail(f"{value!r} is not a {enum_type.__name__}") from e

        return decode_enum
    if isinstance(annotation, type) and issubclass(annotation, Model):
        return _model_decoder(annotation)
    if origin is tuple:
        item = _compile(get_args(annotation)[0])
        return lambda value: tuple(item(v) for v in _list(value))
    if origin in (typing.Union, types.UnionType):
        return _union_decoder(get_args(annotation))
    raise TypeError(f"no wire decoder for {annotation!r}")


def _union_decoder(members: tuple[Any, ...]) -> Decoder:
    tagged = [m for m in members if isinstance(m, type) and issubclass(m, EntryBase)]
    if tagged:
        by_tag = {m.model_fields["type"].default: _model_decoder(m) for m in tagged}

        def decode_tagged(value: Any) -> Any:
            pair = _list(value)
            if len(pair) != 2 or type(pair[0]) is not str or pair[0] not in by_tag:
                raise _fail(f"unknown or malformed tagged value {pair[:1]!r}")
            return by_tag[pair[0]](pair[1])

        return decode_tagged
    present = [m for m in members if m is not type(None)]
    if len(present) == 1:
        inner = _compile(present[0])
        return lambda value: None if value is None else inner(value)
    allowed = tuple(members)
    if not all(m in (int, str, bool, float, type(None)) for m in allowed):
        raise TypeError(f"no wire decoder for union {members!r}")

    def decode_scalar(value: Any) -> Any:
        if type(value) not in allowed:
            raise _fail(f"expected one of {[m.__name__ for m in allowed]}, got {type(value)}")
        return value

    return decode_scalar


_MODEL_DECODERS: dict[type[Model], Decoder] = {}


def _model_decoder(cls: type[M]) -> Callable[[Any], M]:
    cached = _MODEL_DECODERS.get(cls)
    if cached is not None:
        return cached
    names = _wire_fields(cls)
    # model_construct takes a field under its alias when it has one (``schema_`` → ``schema``).
    keys = [cls.model_fields[n].alias or n for n in names]
    decoders: list[Decoder] = []

    def decode(value: Any) -> M:
        items = _list(value)
        if len(items) != len(keys):
            raise _fail(f"{cls.__name__} needs {len(keys)} fields, got {len(items)}")
        values = {key: d(v) for key, d, v in zip(keys, decoders, items, strict=True)}
        return typing.cast(M, cls.model_construct(**values))

    # Register before compiling the fields, so recursive models find their own decoder.
    _MODEL_DECODERS[cls] = decode
    decoders.extend(_compile(cls.model_fields[n].annotation) for n in names)
    return decode


def _unpack(data: bytes, kind: Kind) -> Any:
    if not isinstance(data, bytes | bytearray | memoryview):
        raise _fail(f"expected bytes, got {type(data).__name__}")
    try:
        value = msgpack.unpackb(data, raw=False, strict_map_key=True, use_list=True)
    except (ValueError, TypeError, msgpack.UnpackException) as e:
        raise _fail(f"not a msgpack value ({e})") from e
    if type(value) is not list or len(value) != 3:
        raise _fail("expected [format_version, kind, body]")
    version, found_kind, body = value
    if type(version) is not int or version < 1:
        raise _fail(f"bad format version {version!r}")
    if version > FORMAT_VERSION:
        raise FormatError(
            f"catalog value has format version {version}, newer than the {FORMAT_VERSION} "
            "this node understands; upgrade the node"
        )
    if found_kind != kind:
        raise _fail(f"expected a {kind.name} value, got kind {found_kind!r}")
    return body


def _decoding(kind: Kind, data: bytes, build: Callable[[Any], Any]) -> Any:
    body = _unpack(data, kind)
    try:
        return build(body)
    except FormatError:
        raise
    except (ValueError, TypeError, LookupError, OverflowError, RecursionError, CatalogError) as e:
        raise _fail(f"inconsistent {kind.name} value ({e})") from e


# -- public API -------------------------------------------------------------------------

_UPDATE = _model_decoder(VersionedUpdate)
_ENTRIES = _compile(tuple[UpdateEntry, ...])
_SCHEMAS = _compile(tuple[SchemaDescriptor, ...])
_ZONES = _compile(tuple[ZoneDescriptor, ...])
_TABLES = _compile(tuple[TableDescriptor, ...])
_INDEXES = _compile(tuple[IndexDescriptor, ...])
_OPTIONAL_INT = _compile(int | None)
_INT = _primitive(int)


def encode_update(update: VersionedUpdate) -> bytes:
    """Return the stored form of a ``VersionedUpdate``."""
    return _pack(Kind.UPDATE, _to_wire(update))


def decode_update(data: bytes) -> VersionedUpdate:
    """Decode a ``VersionedUpdate``.

    Raises:
        FormatError: garbage, a wrong kind, or a newer format.
    """
    result: VersionedUpdate = _decoding(Kind.UPDATE, data, _UPDATE)
    return result


def encode_entries(entries: Sequence[EntryBase]) -> bytes:
    """Return the stored form of a list of update entries."""
    return _pack(Kind.ENTRIES, _to_wire(tuple(entries)))


def decode_entries(data: bytes) -> list[EntryBase]:
    """Decode a list of update entries.

    Raises:
        FormatError: garbage, a wrong kind, or a newer format.
    """
    return list(_decoding(Kind.ENTRIES, data, _ENTRIES))


def encode_snapshot(catalog: Catalog) -> bytes:
    """Return the canonical stored form of a whole catalog version (objects ordered by id)."""
    body = [
        catalog.version,
        catalog.activation_ts,
        catalog.object_id_gen,
        catalog.default_zone_id,
        _to_wire(tuple(catalog.schemas())),
        _to_wire(tuple(catalog.zones())),
        _to_wire(tuple(catalog.tables())),
        _to_wire(tuple(catalog.indexes())),
    ]
    return _pack(Kind.SNAPSHOT, body)


def _build_catalog(body: Any) -> Catalog:
    items = _list(body)
    if len(items) != 8:
        raise _fail(f"a snapshot has 8 parts, got {len(items)}")
    return Catalog.from_parts(
        version=_INT(items[0]),
        activation_ts=_INT(items[1]),
        object_id_gen=_INT(items[2]),
        default_zone_id=_OPTIONAL_INT(items[3]),
        schemas=_SCHEMAS(items[4]),
        zones=_ZONES(items[5]),
        tables=_TABLES(items[6]),
        indexes=_INDEXES(items[7]),
    )


def decode_snapshot(data: bytes) -> Catalog:
    """Decode a whole catalog version.

    Raises:
        FormatError: garbage, a wrong kind, a newer format, or inconsistent content.
    """
    result: Catalog = _decoding(Kind.SNAPSHOT, data, _build_catalog)
    return result


def encode_commands(commands: Sequence[CommandBase]) -> bytes:
    """Return the stored form of commands (their public JSON shape, in msgpack)."""
    return _pack(Kind.COMMANDS, dump(commands))


def decode_commands(data: bytes) -> list[CommandBase]:
    """Decode commands, validating them exactly as ``commands.parse`` does.

    Raises:
        FormatError: garbage, a wrong kind, a newer format, or an invalid command.
    """
    return list(_decoding(Kind.COMMANDS, data, parse))


def encode_descriptor(descriptor: Descriptor) -> bytes:
    """Return the stored form of one descriptor."""
    tag = next(t for t, cls in _DESCRIPTOR_TAGS.items() if isinstance(descriptor, cls))
    return _pack(Kind.DESCRIPTOR, [tag, _to_wire(descriptor)])


def _build_descriptor(body: Any) -> Any:
    pair = _list(body)
    if len(pair) != 2 or type(pair[0]) is not str or pair[0] not in _DESCRIPTOR_TAGS:
        raise _fail("expected [descriptor tag, fields]")
    return _model_decoder(_DESCRIPTOR_TAGS[pair[0]])(pair[1])


def decode_descriptor(data: bytes) -> Descriptor:
    """Decode one descriptor.

    Raises:
        FormatError: garbage, a wrong kind, or a newer format.
    """
    result: Descriptor = _decoding(Kind.DESCRIPTOR, data, _build_descriptor)
    return result


def catalog_digest(catalog: Catalog) -> str:
    """Return the SHA-256 (hex) of a catalog's canonical encoding."""
    return hashlib.sha256(encode_snapshot(catalog)).hexdigest()
