"""Closed request bodies of the operation routes, as strict pydantic models.

``expected_revision`` is a strict positive integer: ``"3"``, ``3.0`` and ``true`` are
refused, as is any other field. The same body serves undo, approve and reject, and
documents itself in OpenAPI (``memory.api.schema.StrictBodyScheme``). ``ApproveExactCopies``
is the body of the bulk exact-copy approval: IDs with the revisions the owner saw.
"""
from __future__ import annotations

from typing import Annotated
from uuid import UUID

from pydantic import AfterValidator, BaseModel, ConfigDict, Field
from pydantic_core import PydanticCustomError

from reconsolidation import bounds


class OperationAction(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", strict=True)

    expected_revision: int = Field(ge=1, description=(
        "The operation's current revision; any other is a conflict (as is the wrong kind or state)."))


class ExactCopy(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", strict=True)

    id: UUID = Field(description="A pending exact-copy merge (an operation ID).")
    revision: int = Field(ge=1, description="The operation's revision the owner saw; any other is stale_revision.")


def _each_once(items: list[ExactCopy]) -> list[ExactCopy]:
    """An operation named twice is malformed (the schema's uniqueItems, by ID)."""
    if len({item.id for item in items}) != len(items):
        raise PydanticCustomError("repeated_operation", "an operation is named twice")
    return items


class ApproveExactCopies(BaseModel):
    """The exact-copy merges to approve, each with the revision the owner saw. Each
    operation appears once; an ID that names nothing of the owner's is answered not_found
    in its item, not refused."""

    model_config = ConfigDict(frozen=True, extra="forbid", strict=True)

    # A list, not a tuple: pydantic reports a bad item of a length-bounded tuple twice.
    operations: Annotated[list[ExactCopy], AfterValidator(_each_once)] = Field(
        min_length=1, max_length=bounds.RECON_OPERATIONS_PAGE_MAX, json_schema_extra={"uniqueItems": True},
        description="At most one page of operations, each once.")
