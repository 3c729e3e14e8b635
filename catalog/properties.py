"""String properties kept verbatim (namespace and Iceberg table properties).

The wire codec has no maps, so a set of properties is stored as a tuple of ``Property``
sorted by name: one spelling for equal sets, so digests agree on every node.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from catalog.model import Model


class Property(Model):
    """One property: a name and its text."""

    name: str
    value: str


Properties = tuple[Property, ...]


def properties_of(values: Mapping[str, str]) -> Properties:
    """Return ``values`` as stored properties, sorted by name."""
    return tuple(Property(name=k, value=values[k]) for k in sorted(values))


def properties_dict(properties: Iterable[Property]) -> dict[str, str]:
    """Return stored properties as a name → value map."""
    return {p.name: p.value for p in properties}


def changed_properties(
    properties: Properties, updates: Mapping[str, str], removals: Iterable[str]
) -> Properties:
    """Return ``properties`` with ``removals`` removed, then ``updates`` set."""
    values = properties_dict(properties)
    for name in removals:
        values.pop(name, None)
    values.update(updates)
    return properties_of(values)


SHOWN_NAMES = 5
"""How many property names a message names before it only counts the rest."""


def named_properties(names: Sequence[str]) -> str:
    """Name properties in a message: all of a few, else how many and the first few.

    A refusal of a long list (a request may carry thousands) stays a readable line.
    """
    if len(names) <= SHOWN_NAMES:
        return f"properties {', '.join(names)}"
    first = ", ".join(names[:SHOWN_NAMES])
    return f"{len(names)} properties ({first} and {len(names) - SHOWN_NAMES} more)"
