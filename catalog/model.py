"""The one frozen pydantic base every descriptor, command and entry derives from."""

from __future__ import annotations

import re
from typing import Any

import pydantic
from pydantic import BaseModel, ConfigDict

from catalog.errors import ErrorCode, ValidationError


def validation_error_from(error: pydantic.ValidationError, what: str) -> ValidationError:
    """Turn pydantic's error into our ``ValidationError`` with a readable message and details.

    Errors of nested models (which are already ours) are flattened into one list, each with
    its full location, so a client sees ``columns.1.default: ...`` rather than a chain.
    """
    details: list[dict[str, Any]] = []
    codes: list[ErrorCode] = []
    for e in error.errors(include_url=False, include_input=False):
        loc = [str(p) for p in e["loc"]]
        cause = e.get("ctx", {}).get("error")
        codes.append(
            cause.code if isinstance(cause, ValidationError) else ErrorCode.VALIDATION_ERROR
        )
        if isinstance(cause, ValidationError) and cause.details:
            details.extend({**d, "loc": loc + list(d["loc"])} for d in cause.details)
        elif isinstance(cause, ValidationError):
            details.append({"loc": loc, "msg": cause.message, "type": "value_error"})
        else:
            details.append({"loc": loc, "msg": str(e["msg"]), "type": e["type"]})
    first = details[0] if details else {"loc": [], "msg": str(error)}
    where = ".".join(first["loc"])
    message = f"invalid {what}: {where + ': ' if where else ''}{first['msg']}"
    if len(details) > 1:
        message += f" (and {len(details) - 1} more problem(s))"
    # The first refusal, which the message names, keeps its code (a field nested too deep
    # stays NESTED_TOO_DEEP, whatever pydantic adds after it).
    code = codes[0] if codes else ErrorCode.VALIDATION_ERROR
    return ValidationError(message, details=details, code=code)


class Model(BaseModel):
    """Frozen, strict-shaped base: unknown fields are refused, change with ``model_copy``.

    Constructing a model with bad input raises our ``ValidationError`` (code
    ``VALIDATION_ERROR``, or the code of the first refusal it names), never pydantic's, so
    every caller sees one error family.
    """

    # Fields whose wire name would shadow a BaseModel attribute (``schema``) are declared as
    # ``schema_`` with that alias, which is the only spelling accepted and the one written.
    model_config = ConfigDict(
        frozen=True,
        extra="forbid",
        validate_by_name=False,
        validate_by_alias=True,
        serialize_by_alias=True,
    )

    def __init__(self, /, **data: Any) -> None:
        try:
            super().__init__(**data)
        except pydantic.ValidationError as e:
            raise validation_error_from(e, _described(type(self))) from e


def _described(cls: type[BaseModel]) -> str:
    """Name a model as its user meets it: ``create_table command``, ``column``."""
    op = cls.model_fields.get("op")
    if op is not None and isinstance(op.default, str):
        return f"{op.default} command"
    return re.sub(r"(?<!^)(?=[A-Z])", " ", cls.__name__).lower()
