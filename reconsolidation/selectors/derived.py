"""Lookup and browse of the owner's derived memories (summaries and hypotheses), never through
a fake single-session original.

Reads return ``DerivedView``, an allowlist: id, record_kind, operation_id, revision,
active/retired status, review flag (and its instants), the local-scope restriction,
creation/update times, then — only while the projection is active, its operation
committed and *every* supporting original currently available under the ceiling — the
content (extractive clauses with their inherited subject, type, scope, portability,
sensitivity, authority, confidence and evidence/validity clocks) and the complete
support links (omitted summary inputs included). Otherwise content is null and there are
no links: never a partial count. Deleted (erased) or above-ceiling rows are NotFound.
"""
from __future__ import annotations

from datetime import datetime
from typing import Literal, Optional
from uuid import UUID

from django.db.models import Q
from pydantic import AwareDatetime, BaseModel, ConfigDict

from memory import vocabulary
from memory.models import Memory
from reconsolidation.errors import Conflict, Invalid, NotFound
from reconsolidation.models import DerivedMemory, ReconsolidationOperation
from reconsolidation.selectors.operation_views import available_support
from veetbot.clock import require_aware, utcnow
from veetbot.identity import Principal
from veetbot.rls import owner_context

BROWSE_BATCH = 100  # rows read per batch while filling a page (unavailable rows are skipped)


class _Value(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class DerivedClause(_Value):
    text: str
    source_ids: tuple[UUID, ...]


class DerivedContent(_Value):
    subject: str
    belief_type: str
    clauses: tuple[DerivedClause, ...]
    scope: str
    portable: bool
    sensitivity: str
    authority: str
    confidence: float
    evidence_at: AwareDatetime
    valid_from: AwareDatetime
    expires_at: Optional[AwareDatetime]


class SupportLink(_Value):
    memory_id: UUID
    content_revision: int
    omitted: bool  # a summary input no clause cites


class DerivedView(_Value):
    id: UUID
    record_kind: Literal["summary", "hypothesis"]
    operation_id: UUID
    revision: int
    status: Literal["active", "retired"]
    review_flag: bool  # neither reviewed nor dismissed yet
    reviewed_at: Optional[AwareDatetime]
    dismissed_at: Optional[AwareDatetime]
    restricted: bool  # the owner's "not here" local-scope restriction
    created_at: AwareDatetime
    updated_at: AwareDatetime
    content: Optional[DerivedContent]
    sources: tuple[SupportLink, ...]


# --- reads -------------------------------------------------------------------------------

def _weakest_authority(values) -> str:
    order = vocabulary.AUTHORITIES
    return max(values, key=order.index) if values else order[-1]


def _view(row: DerivedMemory, operation: ReconsolidationOperation, ceiling: str, now: datetime) -> DerivedView:
    active = row.status == "active" and row.retired_at is None and operation.state == "committed"
    statements = available_support(operation, ceiling, now) if active else None
    content, links = None, ()
    if statements is not None and row.clauses:
        cited = {i for clause in row.clauses for i in clause["source_ids"]}
        authorities = list(Memory.objects.filter(id__in=list(operation.input_ids)).values_list("authority", flat=True))
        content = DerivedContent(
            subject=row.subject, belief_type=row.belief_type, scope=row.scope, portable=row.portable,
            clauses=tuple(DerivedClause(text=c["text"], source_ids=tuple(UUID(i) for i in c["source_ids"]))
                          for c in row.clauses),
            sensitivity=row.sensitivity, authority=_weakest_authority(authorities), confidence=row.confidence,
            evidence_at=row.evidence_at, valid_from=row.valid_from, expires_at=row.expires_at,
        )
        links = tuple(SupportLink(memory_id=i, content_revision=r, omitted=str(i) not in cited)
                      for i, r in zip(operation.input_ids, operation.input_revisions))
    return DerivedView(
        id=row.id, record_kind=row.kind, operation_id=row.operation_id, revision=row.revision,
        status="active" if active else "retired", review_flag=row.reviewed_at is None and row.dismissed_at is None,
        reviewed_at=row.reviewed_at, dismissed_at=row.dismissed_at, restricted=row.restricted_at is not None,
        created_at=row.created_at, updated_at=row.updated_at, content=content, sources=links,
    )


def _visible(ceiling: str):
    if ceiling not in vocabulary.SENSITIVITIES:
        raise Invalid("ceiling: unknown")
    allowed = vocabulary.SENSITIVITIES[: vocabulary.SENSITIVITY_RANK[ceiling] + 1]
    return DerivedMemory.objects.filter(erased_at__isnull=True, status__in=("active", "invalidated"),
                                        sensitivity__in=allowed)


def visible_row(derived_id: UUID, ceiling: str, *, lock: bool = False, expected_revision: Optional[int] = None) -> DerivedMemory:
    """The visible row (locked when ``lock``); Conflict when the caller acted on another
    revision than the one now locked (the check and the write share one transaction)."""
    rows = _visible(ceiling).filter(id=derived_id)
    row = (rows.select_for_update() if lock else rows).first()
    if row is None:
        raise NotFound("derived")
    if expected_revision is not None and row.revision != expected_revision:
        raise Conflict("derived memory: revision changed")
    return row


def is_derived(*, principal: Principal, memory_id: UUID) -> bool:
    """Whether an ID names one of the owner's derived memories (any state): routing only."""
    with owner_context(principal):
        return DerivedMemory.objects.filter(id=memory_id).exists()


def derived_get(*, principal: Principal, derived_id: UUID, ceiling: str,
                now: Optional[datetime] = None) -> DerivedView:
    with owner_context(principal):
        now = require_aware(now) if now is not None else utcnow()
        row = visible_row(derived_id, ceiling)
        return _view(row, ReconsolidationOperation.objects.get(id=row.operation_id), ceiling, now)


def derived_browse(*, principal: Principal, ceiling: str, limit: int, after: Optional[tuple[int, UUID]] = None,
                   belief_type: Optional[str] = None, scope: Optional[str] = None,
                   now: Optional[datetime] = None) -> list[tuple[int, DerivedView]]:
    """Up to ``limit`` currently valid active derived rows in (store_position desc, id asc)
    order strictly after ``after``, each with its position. Rows whose support is not
    available are skipped without discarding the rest (read in batches of
    ``BROWSE_BATCH``)."""
    with owner_context(principal):
        now = require_aware(now) if now is not None else utcnow()
        rows = _visible(ceiling).filter(
            status="active", retired_at__isnull=True, store_position__isnull=False, valid_from__lte=now,
        ).filter(Q(expires_at__isnull=True) | Q(expires_at__gt=now))
        if belief_type:
            rows = rows.filter(belief_type=belief_type)
        if scope:
            rows = rows.filter(scope=scope)
        found: list[tuple[int, DerivedView]] = []
        cursor = after
        while len(found) < limit:
            batch = rows
            if cursor is not None:
                position, last_id = cursor
                batch = batch.filter(Q(store_position__lt=position) | Q(store_position=position, id__gt=last_id))
            batch = list(batch.order_by("-store_position", "id")[:BROWSE_BATCH])
            operations = {o.id: o for o in ReconsolidationOperation.objects.filter(
                id__in=[r.operation_id for r in batch])}
            for row in batch:
                view = _view(row, operations[row.operation_id], ceiling, now)
                if view.content is not None:
                    found.append((row.store_position, view))
                    if len(found) == limit:
                        break
            if len(batch) < BROWSE_BATCH:
                break
            cursor = (batch[-1].store_position, batch[-1].id)
        return found


def operation_derived(*, principal: Principal, operation_id: UUID, ceiling: str,
                      now: Optional[datetime] = None) -> Optional[DerivedView]:
    """The derived memory an operation projected (active or retired), or None (never projected,
    deleted, or above the ceiling)."""
    with owner_context(principal):
        row = _visible(ceiling).filter(operation_id=operation_id).first()
        if row is None:
            return None
        now = require_aware(now) if now is not None else utcnow()
        return _view(row, ReconsolidationOperation.objects.get(id=row.operation_id), ceiling, now)
