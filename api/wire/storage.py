"""``GET /v1/data/keys``: where a table's files are, and short-lived keys to reach them."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class TableKeysBody(BaseModel):
    """A table's folder and, on S3, the store and keys for that folder alone.

    The keys are read-only, or read-write when asked for with ``write`` (which takes
    ``MODIFY``); they stop working at ``expires_at_ms``. A table in a local folder has no
    store and no keys.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    table_id: int
    location: str = Field(description="The table's folder: a local path or s3://bucket/key.")
    endpoint: str | None = Field(default=None, description="The S3 store; null: AWS's own.")
    region: str | None = None
    path_style: bool = False
    access_key_id: str | None = None
    secret_access_key: str | None = Field(default=None, repr=False)
    session_token: str | None = Field(default=None, repr=False)
    expires_at_ms: int | None = None
