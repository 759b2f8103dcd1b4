"""The closed request bodies of the owner API, as strict pydantic models.

Each model is exactly what a client may send — an unknown field is an error — and only
that: fields the API fixes (derivation, attribution, authority of an explicit owner
memory) are not accepted from the client at all. Bounds come from settings so the API
and the services agree. ``memory.api.serializers`` documents the same shapes for OpenAPI;
a test keeps the two in step.
"""
from __future__ import annotations

from datetime import datetime
from typing import Annotated, Optional
from uuid import UUID

from django.conf import settings
from pydantic import AwareDatetime, BaseModel, ConfigDict, Field, StringConstraints

from memory import vocabulary
from memory.domain import BeliefType, EventKind, MemoryDraft, Polarity, ReviewAction, Sensitivity, SourceRef
from veetbot.api_errors import ValidationFailed, problem

MAX_SOURCES = 64
MAX_ENTITY_IDS = 64
# A session's scope as the client names it: "session" means this new session.
SESSION_SCOPE = r"^(user|session|project:[A-Za-z0-9][A-Za-z0-9._-]{0,99})$"

EntityId = Annotated[str, StringConstraints(min_length=1, max_length=200)]
PartText = Annotated[str, StringConstraints(min_length=1, max_length=settings.EVENT_PART_MAX_CHARS)]


class Body(BaseModel):
    # Lists, not tuples: pydantic reports a bad item of a length-bounded tuple twice
    # (the item, then "too_short" for the tuple).
    model_config = ConfigDict(frozen=True, extra="forbid", strict=True)


class Source(Body):
    event: UUID
    part: UUID


class MemoryCreate(Body):
    """An explicit owner memory citing parts of the owner's own messages."""

    subject: str = Field(min_length=1, max_length=settings.MEMORY_SUBJECT_MAX_CHARS)
    statement: str = Field(min_length=1, max_length=settings.MEMORY_STATEMENT_MAX_CHARS)
    belief_type: BeliefType
    sources: list[Source] = Field(min_length=1, max_length=MAX_SOURCES)
    polarity: Polarity = "affirmed"
    sensitivity: Sensitivity = "internal"
    scope: str = Field(default="user", pattern=vocabulary.SCOPE.pattern)
    portable: bool = True
    confidence: float = Field(default=1.0, ge=0.0, le=1.0)
    valid_from: Optional[AwareDatetime] = None
    evidence_at: Optional[AwareDatetime] = None
    expires_at: Optional[AwareDatetime] = None
    entity_ids: list[EntityId] = Field(default_factory=list, max_length=MAX_ENTITY_IDS)

    def to_draft(self, now: datetime) -> MemoryDraft:
        """The service draft: explicit, said by the owner, owner authority; times default to now."""
        valid_from = self.valid_from or now
        if self.expires_at is not None and self.expires_at <= valid_from:
            raise ValidationFailed([problem("expires_at", "not_after_valid_from")])
        return MemoryDraft(
            subject=self.subject, statement=self.statement, belief_type=self.belief_type,
            polarity=self.polarity, derivation="explicit", attribution="owner", authority="USER",
            sensitivity=self.sensitivity, scope=self.scope, portable=self.portable,
            confidence=self.confidence, evidence_at=self.evidence_at or now, valid_from=valid_from,
            expires_at=self.expires_at, entity_ids=tuple(self.entity_ids), created_at=now,
            sources=tuple(SourceRef(event=s.event, part=s.part) for s in self.sources),
        )


class MemoryReview(Body):
    action: ReviewAction


class SessionCreate(Body):
    scope: str = Field(pattern=SESSION_SCOPE)
    started_at: Optional[AwareDatetime] = None


class EventAppend(Body):
    kind: EventKind
    speaker: str = Field(pattern=vocabulary.SPEAKER.pattern)
    parts: list[PartText] = Field(min_length=1, max_length=settings.EVENT_MAX_PARTS)
    created_at: Optional[AwareDatetime] = None
