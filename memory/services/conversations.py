"""Writes of the evidence side: people, sessions and events with ordered text parts."""
from __future__ import annotations

import uuid
from datetime import datetime
from typing import Optional, Sequence
from uuid import UUID

from django.conf import settings

from memory import vocabulary
from memory.claims import text_sha256
from memory.domain import EventView, PersonView, SessionView
from memory.errors import Invalid, MissingReference, NotFound
from memory.models import Event, EventPart, Person, Session
from memory.selectors import event_view, session_view
from veetbot.clock import utcnow
from veetbot.identity import Principal
from veetbot.rls import owner_context


def _owner(principal: Principal) -> dict:
    return {"tenant_id": principal.tenant_id, "principal_id": principal.principal_id}


def person_create(*, principal: Principal, name: str, person_id: Optional[UUID] = None, now: Optional[datetime] = None) -> PersonView:
    if not name.strip() or len(name) > 200:
        raise Invalid("name: must be 1-200 characters")
    with owner_context(principal):
        row = Person.objects.create(id=person_id or uuid.uuid4(), **_owner(principal), name=name, created_at=now or utcnow())
        return PersonView(id=row.id, name=row.name)


def session_create(
    *, principal: Principal, scope: str = "user", started_at: Optional[datetime] = None, session_id: Optional[UUID] = None,
) -> SessionView:
    """Open a conversation. A session-local scope names the session itself."""
    session_id = session_id or uuid.uuid4()
    if scope == "session":
        scope = f"session:{session_id}"
    if not vocabulary.SCOPE.match(scope) or (scope.startswith("session:") and scope != f"session:{session_id}"):
        raise Invalid("scope: must be user, project:<name> or session (this session)")
    with owner_context(principal):
        row = Session.objects.create(id=session_id, **_owner(principal), scope=scope, started_at=started_at or utcnow())
        return session_view(row)


def _check_speaker(speaker: str) -> None:
    if not vocabulary.SPEAKER.match(speaker):
        raise Invalid("speaker: must be owner, assistant, tool or person:<uuid>")
    if match := vocabulary.PERSON_REF.match(speaker):
        if not Person.objects.filter(id=match.group(1), erased_at__isnull=True).exists():
            raise MissingReference("speaker: unknown person")


def event_append(
    *, principal: Principal, session_id: UUID, kind: str, speaker: str, parts: Sequence[str],
    created_at: Optional[datetime] = None, excluded: bool = False, now: Optional[datetime] = None,
) -> EventView:
    """Record one message (or tool result) with ordered text parts and stable part IDs."""
    if kind not in vocabulary.EVENT_KINDS:
        raise Invalid("kind: unknown event kind")
    if not 1 <= len(parts) <= settings.EVENT_MAX_PARTS:
        raise Invalid(f"parts: must hold 1-{settings.EVENT_MAX_PARTS} parts")
    if any(not text or len(text) > settings.EVENT_PART_MAX_CHARS for text in parts):
        raise Invalid(f"parts: each text must be 1-{settings.EVENT_PART_MAX_CHARS} characters")
    with owner_context(principal):
        if not Session.objects.filter(id=session_id, erased_at__isnull=True).exists():
            raise NotFound("session")
        _check_speaker(speaker)
        event = Event.objects.create(
            **_owner(principal), session_id=session_id, kind=kind, speaker=speaker,
            created_at=created_at or now or utcnow(), excluded=excluded,
        )
        EventPart.objects.bulk_create(
            EventPart(**_owner(principal), event=event, position=n, text=text, text_sha256=text_sha256(text))
            for n, text in enumerate(parts)
        )
        return event_view(event)
