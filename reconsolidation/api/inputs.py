"""Closed request bodies of the operation routes, as strict pydantic models.

``expected_revision`` is a strict positive integer: ``"3"``, ``3.0`` and ``true`` are
refused, as is any other field. The same body serves undo, approve and reject, and
documents itself in OpenAPI (``memory.api.schema.StrictBodyScheme``).
"""
from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class OperationAction(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", strict=True)

    expected_revision: int = Field(ge=1, description=(
        "The operation's current revision; any other is a conflict (as is the wrong kind or state)."))
