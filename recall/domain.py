"""Domain values of recall: the request, the embedding tuple, the result and its stages.

``RecallResult.stages`` holds the transient candidate / dense / ranked / rendered IDs
an evaluator needs; it is excluded from serialization and never rendered.
"""
from __future__ import annotations

import hashlib
import json
from datetime import datetime
from typing import Literal, Optional
from uuid import UUID

from pydantic import AwareDatetime, BaseModel, ConfigDict, Field

from memory.domain import SourceRef

Channel = Literal["hybrid", "dense", "sparse"]
SelectionMode = Literal["relevance", "recent"]
Sensitivity = Literal["public", "internal", "sensitive", "restricted"]
TEXT_VERSION = "memory-text@1"  # subject + statement, no inferred labels


class Value(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class EmbeddingTuple(Value):
    """Identity of an embedding space; vectors from different tuples never mix."""

    provider: str
    model: str
    model_revision: str
    dimensions: int
    text_version: str = TEXT_VERSION

    @property
    def space(self) -> str:
        payload = json.dumps(self.model_dump(), sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(payload.encode()).hexdigest()


def memory_text(subject: str, statement: str) -> str:
    """memory-text@1: what gets embedded for an original."""
    return f"{subject}: {statement}"


class RecallRequest(Value):
    query: str = Field(min_length=1, max_length=2000)
    ceiling: Sensitivity
    max_items: int = Field(default=20, ge=1, le=100)
    max_tokens: int = Field(default=2000, ge=1, le=32000)
    as_of: Optional[AwareDatetime] = None
    channel: Optional[Channel] = None  # None: the configured default
    # The scope the recall happens in: local scopes never cross; user scope admits
    # another scope's recall only for portable beliefs.
    scope: str = "user"
    selection_mode: SelectionMode = "relevance"
    belief_types: tuple[str, ...] = ()
    entity_ids: tuple[str, ...] = ()
    exclude_ids: tuple[UUID, ...] = ()


class RecallItem(Value):
    id: UUID
    score: float
    subject: str
    statement: str
    belief_type: str
    polarity: str
    derivation: str
    authority: str
    attribution: str
    confidence: float
    sensitivity: str
    evidence_at: datetime
    valid_from: datetime
    expires_at: Optional[datetime]
    content_revision: int
    sources: tuple[SourceRef, ...]


class RecallStages(Value):
    candidate_ids: tuple[UUID, ...] = ()
    dense_ids: tuple[UUID, ...] = ()
    ranked_ids: tuple[UUID, ...] = ()
    rendered_ids: tuple[UUID, ...] = ()


class RecallResult(Value):
    query: str
    channel: Channel
    requested_channel: Channel
    fallback_reason: str = ""
    selection_mode: SelectionMode
    items: tuple[RecallItem, ...]
    rendered: str
    rendered_tokens: int
    trace_id: Optional[UUID] = None
    stages: RecallStages = Field(default_factory=RecallStages, exclude=True, repr=False)
