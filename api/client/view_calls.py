"""The view calls both clients share (``/v1/views``, ``/v1/schemas/{schema}/views/{name}``)."""

from __future__ import annotations

from api.client.calls import Call, Timestamp, json_of, read_params, segment
from api.wire.models import ViewBody, ViewsBody
from catalog.descriptors.views import ViewDescriptor


def views_call(
    schema: str | None = None, version: int | None = None, at: Timestamp | None = None
) -> Call[list[ViewDescriptor]]:
    """Return the views, or one schema's, at a version or moment (``GET /v1/views``)."""
    decode = json_of(ViewsBody)
    params = read_params(version, at)
    if schema is not None:
        params["schema"] = schema
    return Call("GET", "/v1/views", lambda r: decode(r).views, params=params)


def view_call(
    schema: str, name: str, version: int | None = None, at: Timestamp | None = None
) -> Call[ViewDescriptor]:
    """Return one view: its query per dialect, columns and kept versions.

    ``GET /v1/schemas/{schema}/views/{name}``.
    """
    decode = json_of(ViewBody)
    path = f"/v1/schemas/{segment(schema)}/views/{segment(name)}"
    return Call("GET", path, lambda r: decode(r).view, params=read_params(version, at))
