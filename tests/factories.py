"""Builders of real rows through the real services (no mocks, no direct ORM writes)."""
from __future__ import annotations

import uuid
from datetime import datetime, timedelta, timezone
from typing import Optional

from memory import services
from memory.domain import MemoryDraft, SourceRef
from veetbot.identity import Principal

T0 = datetime(2026, 9, 1, 9, 0, tzinfo=timezone.utc)


def make_owner(name: str = "Test owner") -> tuple[Principal, str]:
    created = services.owner_create(display_name=name, now=T0)
    return Principal(tenant_id=created.tenant_id, principal_id=created.principal_id), created.token


def owner_message(principal: Principal, text: str, *, session_id: Optional[uuid.UUID] = None, at: datetime = T0,
                  speaker: str = "owner", kind: str = "user.message.created"):
    if session_id is None:
        session_id = services.session_create(principal=principal, started_at=at).id
    return services.event_append(
        principal=principal, session_id=session_id, kind=kind, speaker=speaker, parts=[text], created_at=at,
    )


def draft(event, *, statement: str = "The owner prefers Celsius for weather.", subject: str = "weather units",
          at: datetime = T0, **overrides) -> MemoryDraft:
    values = dict(
        subject=subject, statement=statement, belief_type="preference", derivation="explicit",
        attribution="owner", authority="USER", sensitivity="internal", scope="user", portable=True,
        confidence=0.9, evidence_at=at, valid_from=at, created_at=at + timedelta(seconds=5),
        sources=(SourceRef(event=event.id, part=event.parts[0].id),),
    )
    values.update(overrides)
    return MemoryDraft(**values)


def make_memory(principal: Principal, statement: str = "The owner prefers Celsius for weather.", *,
                message: str = "I prefer Celsius for weather.", at: datetime = T0, **overrides):
    event = owner_message(principal, message, at=at)
    return services.memory_create(principal=principal, draft=draft(event, statement=statement, at=at, **overrides), now=at)
