"""``json_response``: a route's successful answer, serialised once."""

from __future__ import annotations

from fastapi.responses import Response
from pydantic import BaseModel


def json_response(
    model: BaseModel, status_code: int = 200, *, exclude_none: bool = False
) -> Response:
    """Serialise ``model`` once, without FastAPI re-validating it on the way out."""
    return Response(
        content=model.model_dump_json(by_alias=True, exclude_none=exclude_none),
        media_type="application/json",
        status_code=status_code,
    )
