"""Reads of the originals, returning domain values. Call inside an owner context.

Erased and foreign rows do not exist for readers; anything above the caller's
sensitivity ceiling is indistinguishable from them.
"""
from __future__ import annotations

from datetime import date
from decimal import Decimal
from typing import Iterable, Optional
from uuid import UUID

from memory import vocabulary
from memory.errors import NotFound
from memory.models import Event, Memory, MemorySource, Owner, OwnerToken, Session, SpendDay
from memory.domain import EventPartView, EventView, MemoryView, SessionView, SourceRef


def _sources_by_memory(memory_ids: Iterable[UUID]) -> dict[UUID, tuple[SourceRef, ...]]:
    found: dict[UUID, list[SourceRef]] = {}
    rows = MemorySource.objects.filter(memory_id__in=list(memory_ids)).order_by("memory_id", "position")
    for memory_id, event_id, part_id in rows.values_list("memory_id", "event_id", "part_id"):
        found.setdefault(memory_id, []).append(SourceRef(event=event_id, part=part_id))
    return {key: tuple(value) for key, value in found.items()}


def memory_views(rows: list[Memory]) -> list[MemoryView]:
    sources = _sources_by_memory(row.id for row in rows)
    return [to_view(row, sources.get(row.id, ())) for row in rows]


def to_view(row: Memory, sources: tuple[SourceRef, ...]) -> MemoryView:
    return MemoryView(
        id=row.id, subject=row.subject, statement=row.statement, belief_type=row.belief_type,
        claim_kind=row.claim_kind, polarity=row.polarity, derivation=row.derivation,
        attribution=row.attribution, authority=row.authority, sensitivity=row.sensitivity,
        scope=row.scope, portable=row.portable, confidence=row.confidence,
        evidence_at=row.evidence_at, valid_from=row.valid_from, expires_at=row.expires_at,
        entity_ids=tuple(row.entity_ids), status=row.status, created_at=row.created_at,
        updated_at=row.updated_at, content_revision=row.content_revision,
        creation_sequence=row.creation_sequence, store_position=row.store_position,
        utility=row.utility, last_used_at=row.last_used_at, reviewed_at=row.reviewed_at,
        dismissed_at=row.dismissed_at, sources=sources,
    )


def visible_memories(ceiling: str):
    """Live (not erased) originals at or below ``ceiling``."""
    allowed = vocabulary.SENSITIVITIES[: vocabulary.SENSITIVITY_RANK[ceiling] + 1]
    return Memory.objects.filter(erased_at__isnull=True, sensitivity__in=allowed)


def memory_get(*, memory_id: UUID, ceiling: str) -> MemoryView:
    row = visible_memories(ceiling).filter(id=memory_id).first()
    if row is None:
        raise NotFound("memory")
    return memory_views([row])[0]


def memory_map(*, memory_ids: Iterable[UUID], ceiling: str) -> dict[UUID, MemoryView]:
    """The visible ones of ``memory_ids`` by ID, in one read (absent: erased, foreign,
    unknown or above the ceiling, indistinguishably)."""
    ids = list(dict.fromkeys(memory_ids))
    if not ids:
        return {}
    return {view.id: view for view in memory_views(list(visible_memories(ceiling).filter(id__in=ids)))}


def memory_ids_with_subject(*, subject: str, ceiling: str, limit: int) -> list[UUID]:
    """Visible originals whose subject is ``subject`` (case-insensitive), at most ``limit``."""
    return list(visible_memories(ceiling).filter(subject__iexact=subject).order_by("id").values_list("id", flat=True)[:limit])


def memory_subjects(*, ceiling: str, memory_ids: Iterable[UUID], limit: int) -> list[str]:
    """The distinct subjects of the visible ones of ``memory_ids``, alphabetically."""
    rows = visible_memories(ceiling).filter(id__in=list(memory_ids)).exclude(subject="")
    return list(rows.order_by("subject").values_list("subject", flat=True).distinct()[:limit])


def memory_page(
    *, ceiling: str, limit: int, after: Optional[tuple[int, UUID]] = None,
    status: Optional[str] = None, belief_type: Optional[str] = None, scope: Optional[str] = None,
) -> list[MemoryView]:
    """One page in (store_position desc, id asc) order, strictly after ``after``."""
    from django.db.models import Q

    rows = visible_memories(ceiling)
    if status:
        rows = rows.filter(status=status)
    if belief_type:
        rows = rows.filter(belief_type=belief_type)
    if scope:
        rows = rows.filter(scope=scope)
    if after is not None:
        position, last_id = after
        rows = rows.filter(Q(store_position__lt=position) | Q(store_position=position, id__gt=last_id))
    return memory_views(list(rows.order_by("-store_position", "id")[:limit]))


def session_view(row: Session) -> SessionView:
    return SessionView(id=row.id, scope=row.scope, started_at=row.started_at)


def event_view(row: Event) -> EventView:
    parts = tuple(EventPartView(id=p.id, text=p.text) for p in row.parts.order_by("position"))
    return EventView(
        id=row.id, session=row.session_id, kind=row.kind, speaker=row.speaker,
        created_at=row.created_at, excluded=row.excluded, parts=parts,
    )


def memory_bank_started() -> bool:
    """Whether the owner has any belief, live or erased (an operator's "already imported")."""
    return Memory.objects.exists()


def owner_registered() -> bool:
    """Whether the owner in the current context has its principal row (an operator typed a
    real owner, not a typo that would otherwise "succeed" at erasing nothing)."""
    return Owner.objects.exists()


def sessions_citing(*, memory_id: UUID) -> tuple[UUID, ...]:
    """The live sessions holding the messages a belief cites (what erasing them would reach)."""
    events = MemorySource.objects.filter(memory_id=memory_id).values_list("event_id", flat=True)
    sessions = Event.objects.filter(id__in=list(events), erased_at__isnull=True).values_list("session_id", flat=True)
    return tuple(sorted(set(sessions), key=str))


def session_reach(*, session_id: UUID) -> Optional[tuple[int, int]]:
    """(live messages, beliefs formed from them) of a live conversation, or None: what erasing
    it takes with it, in numbers."""
    events = list(Event.objects.filter(session_id=session_id, erased_at__isnull=True).values_list("id", flat=True))
    if not events:
        return None
    formed = MemorySource.objects.filter(event_id__in=events).values("memory_id").distinct().count()
    return len(events), formed


def live_token(*, token_hash: Optional[str] = None, token_id: Optional[UUID] = None) -> Optional[tuple[UUID, list[str]]]:
    """(ID, scopes) of the owner's unrevoked token with this hash or ID, or None."""
    rows = OwnerToken.objects.filter(revoked_at__isnull=True)
    rows = rows.filter(token_hash=token_hash) if token_hash is not None else rows.filter(id=token_id)
    return rows.values_list("id", "scopes").first()


def spend_by_day(*, purpose: str, first_day: date, last_day: date) -> dict[date, Decimal]:
    """The owner's charged spend for ``purpose`` on each UTC day of the range that has any."""
    rows = SpendDay.objects.filter(purpose=purpose, day__gte=first_day, day__lte=last_day)
    return dict(rows.values_list("day", "charged_usd"))
