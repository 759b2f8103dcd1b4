"""Domain values of the originals: frozen, closed pydantic models, free of the ORM.

Read results are these values, translated from rows by hand in ``memory.selectors``;
services take drafts and change sets of these types.
"""
from __future__ import annotations

from datetime import datetime
from typing import Literal, Optional
from uuid import UUID

from pydantic import AwareDatetime, BaseModel, ConfigDict, Field, field_validator, model_validator

from memory import vocabulary as v

BeliefType = Literal[v.BELIEF_TYPES]  # type: ignore[valid-type]
ClaimKind = Literal[v.CLAIM_KINDS]  # type: ignore[valid-type]
Polarity = Literal[v.POLARITIES]  # type: ignore[valid-type]
Derivation = Literal[v.DERIVATIONS]  # type: ignore[valid-type]
Authority = Literal[v.AUTHORITIES]  # type: ignore[valid-type]
Sensitivity = Literal[v.SENSITIVITIES]  # type: ignore[valid-type]
Status = Literal[v.STATUSES]  # type: ignore[valid-type]
EventKind = Literal[v.EVENT_KINDS]  # type: ignore[valid-type]
ReviewAction = Literal["mark_reviewed", "not_true", "not_here", "dismiss"]


class Value(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


def _check(pattern, value: str, what: str) -> str:
    if not pattern.match(value):
        raise ValueError(f"invalid {what}")
    return value


class SourceRef(Value):
    event: UUID
    part: UUID


class MemoryContent(Value):
    """The fields whose change is a content change (content_revision increments)."""

    subject: str = Field(min_length=1, max_length=200)
    statement: str = Field(min_length=1, max_length=4000)
    belief_type: BeliefType
    claim_kind: ClaimKind = "claim"
    polarity: Polarity = "affirmed"
    derivation: Derivation
    attribution: str
    authority: Authority
    sensitivity: Sensitivity
    scope: str
    portable: bool
    confidence: float = Field(ge=0.0, le=1.0)
    evidence_at: AwareDatetime
    valid_from: AwareDatetime
    expires_at: Optional[AwareDatetime] = None
    entity_ids: tuple[str, ...] = ()
    status: Status = "active"

    @field_validator("attribution")
    @classmethod
    def _attribution(cls, value: str) -> str:
        return _check(v.ATTRIBUTION, value, "attribution")

    @field_validator("scope")
    @classmethod
    def _scope(cls, value: str) -> str:
        return _check(v.SCOPE, value, "scope")

    @field_validator("entity_ids")
    @classmethod
    def _entities(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        if any(not item or len(item) > 200 for item in value):
            raise ValueError("entity IDs must be 1-200 characters")
        return value

    @model_validator(mode="after")
    def _validity(self) -> "MemoryContent":
        if self.expires_at is not None and self.expires_at <= self.valid_from:
            raise ValueError("expires_at must be after valid_from")
        return self


CONTENT_FIELDS = tuple(MemoryContent.model_fields)


class MemoryDraft(MemoryContent):
    """A belief to create, with its provenance."""

    id: Optional[UUID] = None
    created_at: Optional[AwareDatetime] = None
    sources: tuple[SourceRef, ...] = Field(min_length=1, max_length=64)


class MemoryChanges(Value):
    """A partial change of content fields; absent fields stay as they are."""

    subject: Optional[str] = Field(default=None, min_length=1, max_length=200)
    statement: Optional[str] = Field(default=None, min_length=1, max_length=4000)
    belief_type: Optional[BeliefType] = None
    claim_kind: Optional[ClaimKind] = None
    polarity: Optional[Polarity] = None
    derivation: Optional[Derivation] = None
    attribution: Optional[str] = None
    authority: Optional[Authority] = None
    sensitivity: Optional[Sensitivity] = None
    scope: Optional[str] = None
    portable: Optional[bool] = None
    confidence: Optional[float] = Field(default=None, ge=0.0, le=1.0)
    evidence_at: Optional[AwareDatetime] = None
    valid_from: Optional[AwareDatetime] = None
    expires_at: Optional[AwareDatetime] = None
    clear_expiry: bool = False
    entity_ids: Optional[tuple[str, ...]] = None
    status: Optional[Literal["active", "retracted", "expired"]] = None


class MemoryView(Value):
    """An original as readers see it."""

    id: UUID
    subject: str
    statement: str
    belief_type: str
    claim_kind: str
    polarity: str
    derivation: str
    attribution: str
    authority: str
    sensitivity: str
    scope: str
    portable: bool
    confidence: float
    evidence_at: datetime
    valid_from: datetime
    expires_at: Optional[datetime]
    entity_ids: tuple[str, ...]
    status: str
    created_at: datetime
    updated_at: datetime
    content_revision: int
    creation_sequence: int
    store_position: int
    utility: float
    last_used_at: Optional[datetime]
    reviewed_at: Optional[datetime]
    dismissed_at: Optional[datetime]
    sources: tuple[SourceRef, ...]


class SessionView(Value):
    id: UUID
    scope: str
    started_at: datetime


class EventPartView(Value):
    id: UUID
    text: str


class EventView(Value):
    id: UUID
    session: UUID
    kind: str
    speaker: str
    created_at: datetime
    excluded: bool
    parts: tuple[EventPartView, ...]


class PersonView(Value):
    id: UUID
    name: str


class OwnerCreated(Value):
    tenant_id: UUID
    principal_id: UUID
    token: str
    created_owner: bool


class MemoryPage(Value):
    items: tuple[MemoryView, ...]
    next_cursor: Optional[str]


class ErasureReceipt(Value):
    """What an erasure answers, and answers again on replay: content free — what kind of
    thing was erased, its opaque ID (the principal's for a whole account) and when."""

    erased: Literal["session", "person", "account"]
    id: UUID
    erased_at: datetime
