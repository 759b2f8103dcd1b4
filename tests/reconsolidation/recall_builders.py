"""Committed merges and summaries for the recall-integration tests.

The owner-approval service that turns a proposal into a committed operation is still
being built, so these builders write the rows a committed operation has — job, group,
operation, complete dependency edges read from the originals' real sources and events,
membership rows (canonical included, as ``reconsolidation.writers.apply`` writes them) and the
summary projection (its UUID the operation's) — through the ORM inside
``owner_context``: the real database under the runtime role's forced RLS, no mocks.
Operation state changes after creation go through the state-guard trigger like any other.
"""
from __future__ import annotations

import hashlib
import uuid
from datetime import datetime
from typing import Optional, Sequence
from uuid import UUID

from memory import vocabulary
from memory.models import Event, Memory, MemorySource
from reconsolidation import bounds
from reconsolidation.domain import InputRef, input_digest
from reconsolidation.models import (
    DerivedMemory, ReconsolidationDependency, ReconsolidationGroup, ReconsolidationJob, ReconsolidationMember,
    ReconsolidationOperation,
)
from veetbot.identity import Principal
from veetbot.rls import owner_context

MODEL = hashlib.sha256(b"rules@1").hexdigest()


def _owner(principal: Principal) -> dict:
    return {"tenant_id": principal.tenant_id, "principal_id": principal.principal_id}


def _job(principal: Principal, now: datetime) -> ReconsolidationJob:
    job = ReconsolidationJob.objects.filter(policy=bounds.POLICY, due_day=now.date()).first()
    return job or ReconsolidationJob.objects.create(
        **_owner(principal), policy=bounds.POLICY, due_day=now.date(), state="open", created_at=now, updated_at=now,
    )


def operation(principal: Principal, kind: str, memory_ids: Sequence[UUID], *, now: datetime,
              state: str = "committed") -> ReconsolidationOperation:
    """An operation over ``memory_ids`` at their current revisions, with one dependency per
    (original, source event), recorded ``proposed`` and then moved to ``state``."""
    with owner_context(principal):
        memories = {m.id: m for m in Memory.objects.filter(id__in=list(memory_ids))}
        refs = sorted((InputRef(memory_id=i, content_revision=memories[i].content_revision) for i in memory_ids),
                      key=lambda r: str(r.memory_id))
        group = ReconsolidationGroup.objects.create(
            **_owner(principal), job=_job(principal, now), policy=bounds.POLICY, anchor_id=refs[0].memory_id,
            lane="full", input_ids=[r.memory_id for r in refs], input_revisions=[r.content_revision for r in refs],
            input_digest=hashlib.sha256(uuid.uuid4().bytes).hexdigest(), fence_generation=0, state="completed",
            created_at=now, updated_at=now, finished_at=now,
        )
        op = ReconsolidationOperation.objects.create(
            **_owner(principal), group=group, kind=kind, state="proposed", revision=1, policy=bounds.POLICY,
            model_identity=MODEL, evidence_identity="0" * 64, input_ids=[r.memory_id for r in refs],
            input_revisions=[r.content_revision for r in refs], input_digest=input_digest(refs),
            slice_token=uuid.uuid4(), created_at=now, updated_at=now,
        )
        sources = MemorySource.objects.filter(memory_id__in=list(memory_ids))
        events = {e.id: e for e in Event.objects.filter(id__in=[s.event_id for s in sources])}
        ReconsolidationDependency.objects.bulk_create(
            ReconsolidationDependency(
                **_owner(principal), operation=op, memory_id=s.memory_id,
                content_revision=memories[s.memory_id].content_revision, session_id=events[s.event_id].session_id,
                event_id=s.event_id, evidence_at=events[s.event_id].created_at,
            )
            for s in sources
        )
        if state != "proposed":
            move(principal, op, state, now=now)
        return op


def move(principal: Principal, op: ReconsolidationOperation, state: str, *, now: datetime) -> None:
    """One guarded state transition (the trigger refuses any the spec does not allow)."""
    with owner_context(principal):
        op.refresh_from_db()
        op.state, op.revision, op.updated_at = state, op.revision + 1, now
        op.committed_at = now if state == "committed" else op.committed_at
        op.undone_at = now if state == "undone" else op.undone_at
        op.invalidated_at = now if state == "invalidated" else op.invalidated_at
        op.save()
        if state in ("undone", "invalidated"):
            ReconsolidationMember.objects.filter(operation=op, active=True).update(active=False, deactivated_at=now)


def merge(principal: Principal, canonical: UUID, *others: UUID, now: datetime,
          state: str = "committed") -> ReconsolidationOperation:
    """A merge set: ``canonical`` plus ``others``, every membership active."""
    op = operation(principal, "merge_equivalent", [canonical, *others], now=now, state=state)
    with owner_context(principal):
        ReconsolidationMember.objects.bulk_create(
            ReconsolidationMember(**_owner(principal), operation=op, canonical_id=canonical, member_id=member,
                                  active=True, created_at=now)
            for member in sorted([canonical, *others], key=str)
        )
    return op


def summary(principal: Principal, clauses: Sequence[Sequence[UUID]], *, omitted: Sequence[UUID] = (),
            now: datetime, state: str = "committed", sensitivity: Optional[str] = None,
            subject: Optional[str] = None) -> ReconsolidationOperation:
    """An extractive summary: one clause per ID list (its text the first source's
    statement), ``omitted`` inputs kept as dependencies; metadata inherited as
    ``reconsolidation.providers.rules.summaries.projection`` does."""
    inputs = [i for ids in clauses for i in ids] + list(omitted)
    op = operation(principal, "summarize_related", inputs, now=now, state=state)
    with owner_context(principal):
        rows = {m.id: m for m in Memory.objects.filter(id__in=inputs)}
        views = list(rows.values())
        expiries = [m.expires_at for m in views if m.expires_at is not None]
        subjects = {m.subject for m in views}
        types = {m.belief_type for m in views}
        DerivedMemory.objects.create(
            **_owner(principal), id=op.id, operation=op, kind="summary",
            clauses=[{"text": rows[ids[0]].statement, "source_ids": [str(i) for i in ids]} for ids in clauses],
            subject=subject if subject is not None else (subjects.pop() if len(subjects) == 1 else ""),
            belief_type=types.pop() if len(types) == 1 else "mixed",
            sensitivity=sensitivity or max((m.sensitivity for m in views), key=vocabulary.SENSITIVITY_RANK.__getitem__),
            scope=views[0].scope, portable=all(m.portable for m in views),
            confidence=min(m.confidence for m in views), evidence_at=max(m.evidence_at for m in views),
            valid_from=max(m.valid_from for m in views), expires_at=min(expiries) if expiries else None,
            status="active", revision=1, created_at=now, updated_at=now,
        )
    return op
