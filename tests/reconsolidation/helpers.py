"""Builders and drivers shared by the reconsolidation tests (real rows, real services)."""
from __future__ import annotations

import hashlib
from datetime import datetime
from typing import Optional

from memory import services
from memory.models import SpendDay
from reconsolidation.domain import InputRef, Proposal
from reconsolidation.driver import inventory_slice
from reconsolidation.models import (
    ReconsolidationAnchorReceipt,
    ReconsolidationGroup,
    ReconsolidationJob,
    ReconsolidationSpend,
)
from tests.factories import T0, draft
from veetbot.identity import Principal
from veetbot.rls import owner_context

MODEL = hashlib.sha256(b"rules@1").hexdigest()


def original(principal: Principal, statement: str, *, subject: str = "weather units", at: datetime = T0,
             message: Optional[str] = None, event_kind: str = "user.message.created", speaker: str = "owner",
             excluded: bool = False, **overrides):
    """One original from one new owner message (or from the event kind/speaker given)."""
    session = services.session_create(principal=principal, started_at=at)
    event = services.event_append(
        principal=principal, session_id=session.id, kind=event_kind, speaker=speaker,
        parts=[message or statement], created_at=at, excluded=excluded,
    )
    return services.memory_create(principal=principal, draft=draft(event, statement=statement, subject=subject,
                                                                   at=at, **overrides), now=at)


def run_slice(store, principal: Principal, now: datetime, *, owner: str = "worker", release: bool = True):
    lease = store.claim_due(principal, lease_owner=owner, now=now)
    assert lease is not None, "nothing was due"
    report = inventory_slice(store, principal, lease, now=now)
    if release:
        store.release(principal, lease.lease_token, now=now)
    return lease, report


def drain(store, principal: Principal, lease, now: datetime, outcome: str = "no_change") -> int:
    done = 0
    while (group := store.claim_group(principal, lease_token=lease.lease_token, now=now)) is not None:
        store.finish_group(principal, group, outcome=outcome, now=now)
        done += 1
    return done


def proposal(kind: str, inputs, reason: str = "") -> Proposal:
    return Proposal(kind=kind, inputs=tuple(inputs), model_identity=MODEL, reason=reason)


def refs(*memories) -> list[InputRef]:
    return [InputRef(memory_id=m.id, content_revision=m.content_revision) for m in memories]


def digest(label: str) -> str:
    return hashlib.sha256(label.encode()).hexdigest()


def snapshot(principal: Principal) -> dict:
    """Every reconsolidation row of the owner, for "nothing was written" assertions."""
    from reconsolidation import models

    with owner_context(principal):
        return {
            model.__name__: sorted(map(repr, model.objects.values_list()))
            for model in (
                models.ReconsolidationJob, models.ReconsolidationGroup, models.ReconsolidationAnchorReceipt,
                models.ReconsolidationOperation, models.ReconsolidationDependency, models.ReconsolidationSpend,
                models.ReconsolidationAudit, SpendDay,
            )
        }


def groups_of(principal: Principal) -> list[ReconsolidationGroup]:
    with owner_context(principal):
        return list(ReconsolidationGroup.objects.order_by("created_at", "id"))


def receipts_of(principal: Principal) -> dict:
    with owner_context(principal):
        return {r.memory_id: r for r in ReconsolidationAnchorReceipt.objects.all()}


def job_of(principal: Principal) -> ReconsolidationJob:
    with owner_context(principal):
        return ReconsolidationJob.objects.order_by("-due_day").first()


def spend_of(principal: Principal):
    with owner_context(principal):
        return list(ReconsolidationSpend.objects.order_by("reserved_at", "id")), list(SpendDay.objects.filter(purpose="dreaming"))
