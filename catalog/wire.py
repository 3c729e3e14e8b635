"""The wire form of catalog values: msgpack, every value prefixed with a format version.

A value is ``msgpack([format_version, kind, body])``. Bodies are positional: a model is the
list of its fields in declaration order (the stable wire tag of a union member comes first,
as ``[tag, fields]``), tuples are lists and enums their values. Positional bodies are about
half the size of keyed ones; the price is that a field is only ever appended, never
reordered, and a reader of format N knows the field list of every format up to N.

Decoding checks every value's type as it rebuilds the models, and any problem - garbage,
truncation, a wrong type, an unknown tag, a newer format - raises ``FormatError`` and nothing
else, so a corrupted value can never become a wrong catalog.

This module knows models, descriptors and refusals; ``catalog.marshalling`` builds the
codecs of updates, entries and commands on it, and ``catalog.snapshot_format`` the snapshot's.
"""

from __future__ import annotations

import enum
import types
import typing
from collections.abc import Callable
from typing import Any, Literal, TypeVar, get_args, get_origin

import msgpack

from catalog.descriptors import (
    ColumnDescriptor,
    Descriptor,
    GrantDescriptor,
    IndexDescriptor,
    PrincipalDescriptor,
    RoleDescriptor,
    SchemaDescriptor,
    SystemViewDescriptor,
    TableDescriptor,
    ViewDescriptor,
    ZoneDescriptor,
)
from catalog.descriptors.tables import shared_column
from catalog.errors import (
    AlreadyExistsError,
    BatchPosition,
    CatalogError,
    ErrorCode,
    NotFoundError,
    ValidationError,
)
from catalog.model import Model
from updatelog.errors import FormatError

FORMAT_VERSION = 3
"""The newest format; readers accept it and every older one, and refuse anything newer.

Format 2 changed only the snapshot's layout (``catalog.snapshots``: columns of keys and
per-descriptor bytes); format 3 only the update's (``origins`` appended: who asked for each
request and why). A kind is written in the newest format that changed it, so values of every
other kind keep their format-1 bytes exactly."""


class Kind(enum.IntEnum):
    """What a marshalled value holds. Values are stable wire codes."""

    UPDATE = 1
    SNAPSHOT = 2
    ENTRIES = 3
    COMMANDS = 4
    DESCRIPTOR = 5
    REFUSAL = 6


Decoder = Callable[[Any], Any]
M = TypeVar("M", bound=Model)

_DESCRIPTOR_TAGS: dict[str, type[Model]] = {
    "schema": SchemaDescriptor,
    "table": TableDescriptor,
    "index": IndexDescriptor,
    "zone": ZoneDescriptor,
    "system_view": SystemViewDescriptor,
    "view": ViewDescriptor,
    "principal": PrincipalDescriptor,
    "role": RoleDescriptor,
    "grant": GrantDescriptor,
}


# -- encoding ---------------------------------------------------------------------------


def _wire_fields(cls: type[Model]) -> list[str]:
    """Return the fields of ``cls`` that go on the wire: all but constant (Literal) tags."""
    return [
        name
        for name, info in cls.model_fields.items()
        if get_origin(info.annotation) is not Literal
    ]


_ENCODERS: dict[type[Model], Callable[[Any], Any]] = {}


def _encoder(cls: type[Model]) -> Callable[[Any], Any]:
    """Return an encoder generated for ``cls``: one list display over the instance's fields.

    String enums need no conversion: msgpack writes them as the strings they are.
    """
    cached = _ENCODERS.get(cls)
    if cached is not None:
        return cached
    holder: list[Callable[[Any], Any]] = []  # a trampoline for recursive models, as decoders'
    _ENCODERS[cls] = lambda o: holder[0](o)
    env: dict[str, Any] = {}
    parts = []
    for i, name in enumerate(_wire_fields(cls)):
        annotation = cls.model_fields[name].annotation
        item = _nested_model(annotation)
        if item is not None and get_origin(annotation) is tuple:
            env[f"E{i}"] = _encoder(item)
            parts.append(f"[E{i}(x) for x in d[{name!r}]]")
        elif item is not None:
            env[f"E{i}"] = _encoder(item)
            parts.append(f"E{i}(d[{name!r}])")
        elif (optional := _optional_model(annotation)) is not None:
            env[f"E{i}"] = _encoder(optional)
            parts.append(f"(None if d[{name!r}] is None else E{i}(d[{name!r}]))")
        elif _is_entry_tuple(annotation):
            env[f"E{i}"] = _to_wire
            parts.append(f"E{i}(d[{name!r}])")
        else:
            parts.append(f"d[{name!r}]")
    source = f"def encode(o):\n    d = o.__dict__\n    return [{', '.join(parts)}]"
    appended = getattr(cls, "WIRE_APPENDED", ())
    if appended:
        # Appended fields that end the list at their defaults are left out, so a value that
        # does not use them is stored exactly as before they existed: old readers read it,
        # digests stay.
        lines = ["def encode(o):", "    d = o.__dict__", f"    v = [{', '.join(parts)}]"]
        for depth, n in enumerate(reversed(appended)):
            env[f"D_{n}"] = cls.model_fields[n].default
            indent = "    " * (depth + 1)
            lines += [f"{indent}if d[{n!r}] == D_{n}:", f"{indent}    del v[-1]"]
        source = "\n".join([*lines, "    return v"])
    exec(source, env)
    encode: Callable[[Any], Any] = env["encode"]
    tag = wire_tag(cls)
    if tag is not None:
        plain = encode
        encode = lambda o: [tag, plain(o)]  # noqa: E731
    holder.append(encode)
    _ENCODERS[cls] = encode
    return encode


def wire_tag(cls: Any) -> str | None:
    """Return the wire tag of a union member model (its ``type: Literal[...]`` field), or None.

    A tagged model is written as ``[tag, fields]``, so a union of them decodes by its tag.
    """
    if not (isinstance(cls, type) and issubclass(cls, Model)):
        return None
    info = cls.model_fields.get("type")
    if info is None or get_origin(info.annotation) is not Literal:
        return None
    return str(info.default)


def _nested_model(annotation: Any) -> type[Model] | None:
    """Return the model type of a ``Model`` or ``tuple[Model, ...]`` field, else None."""
    if get_origin(annotation) is tuple:
        annotation = get_args(annotation)[0]
    if isinstance(annotation, type) and issubclass(annotation, Model):
        return annotation if wire_tag(annotation) is None else None
    return None


def _optional_model(annotation: Any) -> type[Model] | None:
    """Return the model type of a ``Model | None`` field, else None."""
    if get_origin(annotation) not in (typing.Union, types.UnionType):
        return None
    present = [m for m in get_args(annotation) if m is not type(None)]
    if len(present) == 1 and len(get_args(annotation)) == 2:
        return _nested_model(present[0])
    return None


def _is_entry_tuple(annotation: Any) -> bool:
    return (
        get_origin(annotation) is tuple and get_origin(get_args(annotation)[0]) is typing.Annotated
    )


def _to_wire(value: Any) -> Any:
    if isinstance(value, Model):
        return _encoder(type(value))(value)
    if isinstance(value, tuple | list):
        return [_to_wire(v) for v in value]
    return value


_WRITTEN_VERSION = {Kind.SNAPSHOT: 2, Kind.UPDATE: 3}
"""The format each kind is written in, when not 1."""


def pack_value(kind: Kind, body: Any) -> bytes:
    """Return ``body`` stored as a value of ``kind`` (with its format version)."""
    return _pack(kind, body)


def to_wire(value: Any) -> Any:
    """Return the positional msgpack body of a model, or of a tuple or list of models."""
    return _to_wire(value)


def _pack(kind: Kind, body: Any) -> bytes:
    version = _WRITTEN_VERSION.get(kind, 1)
    return msgpack.packb([version, int(kind), body], use_bin_type=True)


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


def format_error(message: str) -> FormatError:
    """Return the error for a value that cannot be decoded."""
    return _fail(message)


def compile_decoder(annotation: Any) -> Decoder:
    """Return a checking decoder for positional bodies of type ``annotation``."""
    return _compile(annotation)


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
        return lambda value: tuple([item(v) for v in _list(value)])
    if origin in (typing.Union, types.UnionType):
        return _union_decoder(get_args(annotation))
    raise TypeError(f"no wire decoder for {annotation!r}")


def _union_decoder(members: tuple[Any, ...]) -> Decoder:
    tagged = {tag: m for m in members if (tag := wire_tag(m)) is not None}
    if tagged:
        by_tag = {tag: _model_decoder(m) for tag, m in tagged.items()}

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
_SCALAR_CHECKS = {int: "int", str: "str", bool: "bool"}


def _model_decoder(cls: type[M]) -> Callable[[Any], M]:
    """Return a decoder generated for ``cls``: strict type checks, then direct construction.

    Snapshots hold thousands of descriptors, so the per-object cost matters: the generated
    function checks each positional field inline and builds the instance the way pydantic's
    ``model_construct`` does, without its generic per-field loop.
    """
    cached = _MODEL_DECODERS.get(cls)
    if cached is not None:
        return cached
    # Register a trampoline first, so that recursive models (a column's nested fields are
    # columns) find a decoder while compiling.
    holder: list[Decoder] = []
    _MODEL_DECODERS[cls] = lambda v: holder[0](v)
    names = _wire_fields(cls)
    env: dict[str, Any] = {
        "cls": cls,
        "_fail": _fail,
        "_new": object.__new__,
        "_set": object.__setattr__,
        "_list_type": list,
        "_none": None,
    }
    # Fields a later format appended (``WIRE_APPENDED``) may be missing from older payloads,
    # which then read as those fields' defaults; every other field must be there.
    appended = getattr(cls, "WIRE_APPENDED", ())
    assert tuple(names[len(names) - len(appended) :]) == tuple(appended), cls
    least = len(names) - len(appended)
    defaults = [cls.model_fields[n].default for n in appended]
    env["_tail"] = [d.value if isinstance(d, enum.Enum) else _to_wire(d) for d in defaults]
    body = ["def decode(v):"]
    if appended:
        body += [
            f"    if type(v) is _list_type and {least} <= len(v) < {len(names)}:",
            f"        v = v + _tail[len(v) - {least}:]",
        ]
    body += [
        f"    if type(v) is not _list_type or len(v) != {len(names)}:",
        f"        raise _fail('{cls.__name__} needs {len(names)} fields')",
    ]
    if names:
        body.append(f"    {', '.join(f'a{i}' for i in range(len(names)))}, = v")
    for i, name in enumerate(names):
        body.extend(
            _field_check(env, i, cls.model_fields[name].annotation, f"{cls.__name__}.{name}")
        )
    constants = {
        n: info.default
        for n, info in cls.model_fields.items()
        if get_origin(info.annotation) is Literal
    }
    # A frozen model's fields set never changes (its copies take their own set), so one set
    # serves every decoded instance: ~700 bytes less per object than a set each.
    frozen = bool(cls.model_config.get("frozen"))
    env["_fields"] = set(cls.model_fields) if frozen else tuple(cls.model_fields)
    env["_constants"] = constants
    items = ", ".join(f"{n!r}: a{i}" for i, n in enumerate(names))
    body += [
        "    o = _new(cls)",
        f"    _set(o, '__dict__', {{**_constants, {items}}})",
        f"    _set(o, '__pydantic_fields_set__', {'_fields' if frozen else 'set(_fields)'})",
        "    _set(o, '__pydantic_extra__', _none)",
        "    _set(o, '__pydantic_private__', _none)",
        "    return o",
    ]
    exec("\n".join(body), env)
    decode = env["decode"]
    if cls is ColumnDescriptor:  # equal columns are one object (see ``shared_column``)
        decode = lambda v, plain=decode: shared_column(**plain(v).__dict__)  # noqa: E731
    holder.append(decode)
    _MODEL_DECODERS[cls] = decode
    return typing.cast(Callable[[Any], M], decode)


def _field_check(env: dict[str, Any], i: int, annotation: Any, where: str) -> list[str]:
    """Return the generated lines that check (and convert) positional field ``a{i}``."""
    var = f"a{i}"
    optional = False
    members = (
        get_args(annotation) if get_origin(annotation) in (typing.Union, types.UnionType) else ()
    )
    if len(members) == 2 and type(None) in members:
        optional = True
        annotation = next(m for m in members if m is not type(None))
    indent = "        " if optional else "    "
    lines: list[str] = []
    if annotation in _SCALAR_CHECKS:
        lines.append(f"{indent}if type({var}) is not {_SCALAR_CHECKS[annotation]}:")
        lines.append(f"{indent}    raise _fail('{where}: expected {_SCALAR_CHECKS[annotation]}')")
    elif annotation is float:
        lines.append(f"{indent}if type({var}) is int: {var} = float({var})")
        lines.append(
            f"{indent}elif type({var}) is not float: raise _fail('{where}: expected a number')"
        )
    elif isinstance(annotation, type) and issubclass(annotation, enum.Enum):
        env[f"E{i}"] = annotation._value2member_map_
        lines.append(f"{indent}{var} = E{i}.get({var}) if type({var}) is str else _none")
        lines.append(
            f"{indent}if {var} is _none: raise _fail('{where}: not a {annotation.__name__}')"
        )
    elif get_origin(annotation) is tuple and _nested_model(annotation) is not None:
        item = _nested_model(annotation)
        assert item is not None
        env[f"D{i}"] = _model_decoder(item)
        lines.append(
            f"{indent}if type({var}) is not _list_type: raise _fail('{where}: not a list')"
        )
        lines.append(f"{indent}{var} = tuple([D{i}(x) for x in {var}])")
    else:
        env[f"D{i}"] = _compile(annotation)
        lines.append(f"{indent}{var} = D{i}({var})")
    if optional:
        lines.insert(0, f"    if {var} is not _none:")
    return lines


def _unpack(data: bytes, kind: Kind) -> tuple[int, Any]:
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
    return version, body


def decode_body(kind: Kind, data: bytes, build: Callable[[Any], Any]) -> Any:
    """Unpack a value of ``kind`` and build it from its body (any format version).

    Raises:
        FormatError: as ``decode_value``.
    """
    return decode_value(kind, data, lambda _version, body: build(body))


def decode_value(kind: Kind, data: bytes, build: Callable[[int, Any], Any]) -> Any:
    """Unpack a value of ``kind`` and build it from its format version and body.

    Raises:
        FormatError: garbage, a wrong kind, a newer format, or a body ``build`` refuses
            (any error it raises from bad content becomes a ``FormatError``).
    """
    version, body = _unpack(data, kind)
    try:
        return build(version, body)
    except FormatError:
        raise
    except (ValueError, TypeError, LookupError, OverflowError, RecursionError, CatalogError) as e:
        raise _fail(f"inconsistent {kind.name} value ({e})") from e


# -- descriptors and refusals ---------------------------------------------------------------


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
    result: Descriptor = decode_body(Kind.DESCRIPTOR, data, _build_descriptor)
    return result


_REFUSAL_TAGS: dict[str, type[CatalogError]] = {
    "validation": ValidationError,
    "not_found": NotFoundError,
    "already_exists": AlreadyExistsError,
    "catalog": CatalogError,
}


def encode_refusal(error: CatalogError) -> bytes:
    """Return the stored form of a refusal: its kind, code, message, details and position.

    Recorded with the request id of a refused request, so every retry of that request gets
    this same answer. The position (the refused statement of the batch) is written only when
    there is one, so refusals without one keep their first format.
    """
    tag = next(t for t, cls in _REFUSAL_TAGS.items() if isinstance(error, cls))
    details = error.details if isinstance(error, ValidationError) else []
    fields: list[Any] = [tag, str(error.code), error.message, details]
    if error.position is not None:
        where = error.position
        fields.append([where.statement, where.line, where.column])
    return _pack(Kind.REFUSAL, fields)


def _build_refusal(body: Any) -> CatalogError:
    fields = _list(body)
    if len(fields) not in (4, 5):
        raise _fail("expected [refusal tag, code, message, details, position?]")
    error = _refusal_of(*fields[:4])
    if len(fields) == 5:
        where = _list(fields[4])
        if (
            len(where) != 3
            or type(where[0]) is not int
            or not all(v is None or type(v) is int for v in where[1:])
        ):
            raise _fail("a refusal's position is [statement, line, column]")
        error.position = BatchPosition(*where)
    return error


def _refusal_of(tag: Any, code: Any, message: Any, details: Any) -> CatalogError:
    if tag not in _REFUSAL_TAGS or type(code) is not str or type(message) is not str:
        raise _fail("expected a known refusal tag, a code and a message")
    if not isinstance(details, list) or not all(isinstance(d, dict) for d in details):
        raise _fail("refusal details must be a list of maps")
    cls = _REFUSAL_TAGS[tag]
    # A code from a newer release keeps its class's default code rather than failing.
    known = ErrorCode(code) if code in ErrorCode.__members__.values() else None
    if cls is ValidationError:
        return ValidationError(message, code=known, details=details)
    return cls(message, code=known)


def decode_refusal(data: bytes) -> CatalogError:
    """Decode a refusal written by ``encode_refusal`` into the error to raise again.

    Raises:
        FormatError: garbage, a wrong kind, or a newer format.
    """
    result: CatalogError = decode_body(Kind.REFUSAL, data, _build_refusal)
    return result
