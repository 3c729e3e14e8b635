"""A pinned catalog: the Iceberg REST ``{prefix}`` naming the whole catalog as of one moment.

A client configured with ``warehouse=<name>@v<version>`` or ``warehouse=<name>@<RFC 3339
time>`` is answered that warehouse as its prefix (``GET /v1/config``, ``overrides.prefix``),
and every read it then makes under ``/v1/<prefix>/...`` sees every namespace, table, schema
and snapshot exactly as of that moment: the catalog version active then, and each table's
data commits up to then. A time pin follows the catalog's safe-time rule, as ``at=`` does on
the catalog's own API: a moment not yet complete waits until it is (a time further ahead
than the clock-skew bound is refused), and a moment before the earliest version the catalog
keeps is refused (``VERSION_COMPACTED``). A version pin reads the catalog at that version and
the data commits up to its activation. The same prefix always answers the same catalog, so a
job configured with it reads identical tables however often it runs, on any engine.

A pinned catalog is read-only: a change through a pinned prefix is refused (406
``UnsupportedOperationException``) naming the pin.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from fastapi import Request

from api.iceberg.errors import bad_request, unsupported
from api.server.execution import node_of
from api.server.moments import parse_timestamp
from catalog.catalog import Catalog
from catalog.errors import ValidationError
from schemasync.clock import describe_ts
from schemasync.errors import TimestampTooFarError

FORMS = (
    "<name>@v<version> (e.g. main@v42) or <name>@<RFC 3339 time> (e.g. main@2026-03-04T10:00:00Z)"
)
"""The accepted forms of a pin, for messages."""
_PIN = re.compile(r"^(?P<name>[^@/]{0,200})@(?:v(?P<version>\d{1,19})|(?P<at>[0-9][^@/]{0,63}))$")


@dataclass(frozen=True, slots=True)
class PinSpec:
    """A pin as written: a catalog version, or an RFC 3339 time (exactly one is set)."""

    prefix: str
    version: int | None
    at: str | None


@dataclass(frozen=True, slots=True)
class Pin:
    """A resolved pin: the catalog it names and the moment its data commits are read at.

    Attributes:
        prefix: the pin as the client sends it.
        catalog: the catalog version active at the moment.
        read_ts: the hybrid timestamp data commits are listed up to.
    """

    prefix: str
    catalog: Catalog
    read_ts: int


def is_pin(warehouse: str) -> bool:
    """Return whether a configured warehouse names a pin (it holds an ``@``)."""
    return "@" in warehouse


def parse_pin(prefix: str) -> PinSpec:
    """Return the pin ``prefix`` spells.

    Raises:
        IcebergError: BadRequestException naming the accepted forms.
    """
    match = _PIN.match(prefix)
    if match is None:
        raise bad_request(f"pinned catalog {prefix!r} is not of the form {FORMS}")
    version = match.group("version")
    spec = PinSpec(prefix, None if version is None else int(version), match.group("at"))
    if spec.at is not None:
        _moment(spec)
    return spec


def _moment(spec: PinSpec) -> int:
    """Return the hybrid timestamp of a time pin (an RFC 3339 time with an offset)."""
    assert spec.at is not None
    if not spec.at.isdigit():
        try:
            return parse_timestamp(spec.at)
        except ValidationError:
            pass
    raise bad_request(
        f"pinned catalog {spec.prefix!r}: {spec.at!r} is not an RFC 3339 time with an offset; "
        f"give {FORMS}"
    )


async def resolve(request: Request, spec: PinSpec) -> Pin:
    """Return the catalog and read moment ``spec`` names, waiting for a moment to complete.

    Raises:
        IcebergError: BadRequestException for a time beyond the clock-skew bound.
        CatalogError: VERSION_NOT_FOUND or VERSION_COMPACTED.
    """
    node = node_of(request)
    if spec.version is not None:
        cat = node.service.catalog(spec.version)
        return Pin(spec.prefix, cat, cat.activation_ts)
    ts = _moment(spec)
    try:
        await node.schema_sync.wait_for_metadata_completeness(ts)
    except TimestampTooFarError as e:
        raise bad_request(
            f"pinned catalog {spec.prefix!r} names {describe_ts(ts)}, further ahead than this "
            f"catalog's clock allows ({e.message}); pin a moment that has passed: {FORMS}"
        ) from e
    return Pin(spec.prefix, node.service.active_catalog(ts), ts)


async def pinned_read(request: Request) -> None:
    """Resolve the request's pin (its ``prefix``) for the read routes under ``/v1/{prefix}``."""
    spec = parse_pin(request.path_params["prefix"])
    request.state.pin = await resolve(request, spec)


async def pinned_write(request: Request) -> None:
    """Refuse a change through a pinned prefix, naming the pin."""
    prefix = request.path_params["prefix"]
    parse_pin(prefix)
    raise unsupported(
        f"catalog {prefix!r} is pinned and read-only: changes go through the catalog's "
        "latest state (a client configured without a pin in its warehouse)"
    )


def pin_of(request: Request) -> Pin | None:
    """Return the request's resolved pin; None for a read of the latest catalog."""
    pin = getattr(request.state, "pin", None)
    return pin if isinstance(pin, Pin) else None
