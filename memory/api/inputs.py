"""The closed request bodies of the owner API, as strict pydantic models.

Each model is exactly what a client may send — an unknown field is an error — and only
that: fields the API fixes (derivation, attribution, authority of an explicit owner
memory) are not accepted from the client at all. Bounds come from settings so the API
and the services agree. These models are also the OpenAPI documentation of the bodies
(``memory.api.schema.StrictBodyScheme``): descriptions live on the fields, and there is
no second, hand-kept copy to drift.
"""
from __future__ import annotations

from datetime import datetime, timezone
from typing import Annotated, Literal, Optional
from uuid import UUID

from django.conf import settings
from pydantic import AfterValidator, AwareDatetime, BaseModel, ConfigDict, Field, StringConstraints
from pydantic_core import PydanticCustomError

from memory import vocabulary
from memory.domain import BeliefType, EventKind, MemoryDraft, Polarity, ReviewAction, Sensitivity, SourceRef
from veetbot.api_errors import ValidationFailed, problem

MAX_SOURCES = 64
MAX_ENTITY_IDS = 64
# A session's scope as the client names it: "session" means this new session.
SESSION_SCOPE = r"^(user|session|project:[A-Za-z0-9][A-Za-z0-9._-]{0,99})$"

EntityId = Annotated[str, StringConstraints(min_length=1, max_length=200)]

# Instants are stored as UTC: an offset may move a written date a day either way, so the
# written year stays inside 0002-9998 (years 1 and 10000 in UTC cannot be represented),
# and PostgreSQL, which refuses offsets beyond 15:59, only ever sees UTC.
INSTANT_YEARS = (2, 9998)
INSTANT_YEAR_PATTERN = r"^(000[2-9]|00[1-9][0-9]|0[1-9][0-9]{2}|[1-8][0-9]{3}|9[0-8][0-9]{2}|99[0-8][0-9]|999[0-8])-"


def _each_once(sources: list) -> list:
    """The schema's uniqueItems: citing the same part twice is malformed."""
    if len(set(sources)) != len(sources):
        raise PydanticCustomError("repeated_source", "a source is cited twice")
    return sources


def _utc_instant(value: datetime) -> datetime:
    low, high = INSTANT_YEARS
    if not low <= value.year <= high:
        raise ValueError("year out of range")
    return value.astimezone(timezone.utc)


Instant = Annotated[AwareDatetime, AfterValidator(_utc_instant),
                    Field(json_schema_extra={"pattern": INSTANT_YEAR_PATTERN})]
INSTANT_NOTE = "RFC 3339 with an offset, written in a year from 0002 to 9998."
PartText = Annotated[str, StringConstraints(min_length=1, max_length=settings.EVENT_PART_MAX_CHARS)]


class Body(BaseModel):
    # Lists, not tuples: pydantic reports a bad item of a length-bounded tuple twice
    # (the item, then "too_short" for the tuple).
    model_config = ConfigDict(frozen=True, extra="forbid", strict=True)


class Source(Body):
    event: UUID = Field(description="An event of the owner's (user.message.created, spoken by the owner).")
    part: UUID = Field(description="One of that event's parts.")


class MemoryCreate(Body):
    """An explicit owner memory citing parts of the owner's own messages.

    Beyond its shape: expires_at is after valid_from (which defaults to now), otherwise
    validation_error. Every source names a live part of one of the owner's own
    user.message.created events and a session scope names a live session, otherwise
    not_found: a reference that names nothing is not a malformed request.
    """

    subject: str = Field(min_length=1, max_length=settings.MEMORY_SUBJECT_MAX_CHARS)
    statement: str = Field(min_length=1, max_length=settings.MEMORY_STATEMENT_MAX_CHARS)
    belief_type: BeliefType
    sources: Annotated[list[Source], AfterValidator(_each_once)] = Field(min_length=1, max_length=MAX_SOURCES, json_schema_extra={"uniqueItems": True},
                                  description="Parts of the owner's own user.message.created events, each once.")
    polarity: Polarity = "affirmed"
    sensitivity: Sensitivity = "internal"
    scope: str = Field(default="user", pattern=vocabulary.SCOPE.pattern,
                       description="user, project:<name> or session:<id of a live session>.")
    portable: bool = True
    confidence: float = Field(default=1.0, ge=0.0, le=1.0)
    valid_from: Optional[Instant] = Field(default=None, description="Defaults to now. " + INSTANT_NOTE)
    evidence_at: Optional[Instant] = Field(default=None, description="Defaults to now. " + INSTANT_NOTE)
    expires_at: Optional[Instant] = Field(default=None, description=(
        "Must be after valid_from (itself defaulting to now). " + INSTANT_NOTE))
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
    scope: str = Field(pattern=SESSION_SCOPE, description="user, project:<name>, or session (local to this session)")
    started_at: Optional[Instant] = Field(default=None, description="Defaults to now. " + INSTANT_NOTE)


class EventAppend(Body):
    """One message or tool result. A person:<uuid> speaker must name a live person of the
    owner's, and the session must be a live one: otherwise not_found."""

    kind: EventKind
    speaker: str = Field(pattern=vocabulary.SPEAKER.pattern, description="owner, assistant, tool or person:<uuid>")
    parts: list[PartText] = Field(min_length=1, max_length=settings.EVENT_MAX_PARTS)
    created_at: Optional[Instant] = Field(default=None, description="Defaults to now. " + INSTANT_NOTE)


ACCOUNT_ERASE_CONFIRMATION = "erase my whole memory bank"


class AccountErase(Body):
    """Whole-account erasure needs the confirmation phrase, exactly (otherwise
    validation_error): every memory, message, person and name goes, and every token is
    revoked, this one included."""

    confirm: Literal["erase my whole memory bank"] = Field(description=(
        f'Exactly "{ACCOUNT_ERASE_CONFIRMATION}".'))
