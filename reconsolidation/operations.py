"""Operations: the minimal commit, invalidation, and the signatures of reads and undo.

``commit`` is one short transaction in the order every source mutation uses: the owner
lock first (``lock_owner``), then the source originals FOR UPDATE in sorted UUID order.
It rechecks, without writing anything on failure: the slice's live lease and the group's
claim, the expected inputs against the group, each source's content revision and
eligibility, the owner's erasure fence (``erasure_generation``) against both the caller's
and the group's, owner blocks, the policy identity, the per-slice operation budget and
input idempotency. Then it writes the operation, its complete dependency edges (one per
source original and admitted owner event) and a content-free audit row together.

Proposals are recorded ``proposed``; approval, membership and derived projections,
invalidation through the memory hook, reads with ceilings and undo arrive with the rest of
issue 5. No provider call is made, or awaited, inside any transaction here.
"""
from __future__ import annotations

import hashlib
from datetime import datetime
from typing import Optional, Sequence
from uuid import UUID

from django.db import connection

from memory.services.owner_state import erasure_generation, lock_owner
from reconsolidation import bounds, sql
from reconsolidation.domain import (
    InputRef, InvalidationReceipt, OperationPage, OperationView, Proposal, input_digest, sorted_inputs,
)
from reconsolidation.errors import BudgetExhausted, Conflict, FenceLost, Invalid, StaleInputs
from reconsolidation.groups import locked_group
from reconsolidation.inventory import allowed_sensitivities
from reconsolidation.leases import audit, locked_job, owner_fields
from reconsolidation.models import (
    DerivedMemory, ReconsolidationBlock, ReconsolidationDependency, ReconsolidationGroup, ReconsolidationMember,
    ReconsolidationOperation,
)
from veetbot.clock import require_aware
from veetbot.identity import Principal
from veetbot.rls import owner_context

_EVIDENCE = """
    SELECT s.memory_id, e.id, e.session_id, e.created_at
    FROM memory_memorysource s
    JOIN memory_event e ON e.id = s.event_id AND e.tenant_id = s.tenant_id AND e.principal_id = s.principal_id
    WHERE s.tenant_id = %(tenant_id)s AND s.principal_id = %(principal_id)s AND s.memory_id = ANY(%(ids)s::uuid[])
      AND e.kind = 'user.message.created' AND e.speaker = 'owner' AND NOT e.excluded AND e.erased_at IS NULL
    ORDER BY s.memory_id, e.id
"""


def operation_signature(kind: str, memory_ids: Sequence[UUID]) -> str:
    """The policy- and model-independent signature an owner block matches (IDs only)."""
    payload = "\n".join([kind, *sorted(str(i) for i in memory_ids)])
    return hashlib.sha256(payload.encode()).hexdigest()


def operation_view(principal: Principal, row: ReconsolidationOperation) -> OperationView:
    return OperationView(
        **owner_fields(principal), id=row.id, group_id=row.group_id, kind=row.kind, state=row.state,
        revision=row.revision, policy=row.policy, model_identity=row.model_identity,
        evidence_identity=row.evidence_identity,
        inputs=tuple(InputRef(memory_id=i, content_revision=r) for i, r in zip(row.input_ids, row.input_revisions)),
        input_digest=row.input_digest, reason=row.reason, created_at=row.created_at, committed_at=row.committed_at,
        invalidated_at=row.invalidated_at, undone_at=row.undone_at,
    )


def _lock_sources(principal: Principal, refs: Sequence[InputRef], now: datetime) -> None:
    """Lock the sources in sorted UUID order and recheck revision and eligibility."""
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT m.id, m.content_revision, {sql.EXCLUSION_REASON} FROM memory_memory m"
            " WHERE m.tenant_id = %(tenant_id)s AND m.principal_id = %(principal_id)s AND m.id = ANY(%(ids)s::uuid[])"
            " ORDER BY m.id FOR UPDATE OF m",
            {**owner_fields(principal), "now": now, "sensitivities": allowed_sensitivities(),
             "ids": sorted(ref.memory_id for ref in refs)},
        )
        current = {row[0]: (row[1], row[2]) for row in cursor.fetchall()}
    for ref in refs:
        if ref.memory_id not in current:
            raise StaleInputs("gone")
        revision, reason = current[ref.memory_id]
        if revision != ref.content_revision:
            raise StaleInputs("revision_changed")
        if reason:
            raise StaleInputs(reason)


def commit(
    principal: Principal, group_lease, *, expected_inputs: Sequence[InputRef], expected_fence: int,
    proposal: Proposal, now: datetime,
) -> OperationView:
    now = require_aware(now)
    expected = sorted_inputs(expected_inputs)
    if proposal.policy != bounds.POLICY:
        raise Conflict("policy_changed")
    if not set(proposal.inputs) <= set(expected):
        raise Invalid("proposal.inputs: only supplied inputs at their supplied revisions")
    refs = sorted_inputs(proposal.inputs)
    with owner_context(principal):
        lock_owner(principal)
        job = locked_job(principal, group_lease.lease_token, now)
        group = locked_group(group_lease)
        offered = tuple(InputRef(memory_id=i, content_revision=r) for i, r in zip(group.input_ids, group.input_revisions))
        if expected != offered:
            raise StaleInputs("inputs_mismatch")
        _lock_sources(principal, refs, now)
        fence = erasure_generation(principal)
        if fence != expected_fence or fence != group.fence_generation:
            raise FenceLost()
        signature = operation_signature(proposal.kind, [ref.memory_id for ref in refs])
        if ReconsolidationBlock.objects.filter(signature=signature).exists():
            raise Conflict("blocked_by_owner")
        if ReconsolidationOperation.objects.filter(slice_token=job.lease_token).count() >= bounds.RECON_SLICE_MAX_OPERATIONS:
            raise BudgetExhausted("operation_budget")
        digest = input_digest(refs)
        if ReconsolidationOperation.objects.filter(policy=bounds.POLICY, kind=proposal.kind, input_digest=digest).exists():
            raise Conflict("duplicate_operation")
        with connection.cursor() as cursor:
            cursor.execute(_EVIDENCE, {**owner_fields(principal), "ids": [ref.memory_id for ref in refs]})
            evidence = cursor.fetchall()
        if {row[0] for row in evidence} != {ref.memory_id for ref in refs}:
            raise StaleInputs("no_owner_evidence")
        revisions = {ref.memory_id: ref.content_revision for ref in refs}
        operation = ReconsolidationOperation.objects.create(
            **owner_fields(principal), group_id=group.id, kind=proposal.kind, state="proposed", revision=1,
            policy=bounds.POLICY, model_identity=proposal.model_identity,
            evidence_identity=hashlib.sha256("\n".join(sorted({str(row[1]) for row in evidence})).encode()).hexdigest(),
            input_ids=[ref.memory_id for ref in refs], input_revisions=[ref.content_revision for ref in refs],
            input_digest=digest, slice_token=job.lease_token, reason=proposal.reason, created_at=now, updated_at=now,
        )
        ReconsolidationDependency.objects.bulk_create(
            ReconsolidationDependency(
                **owner_fields(principal), operation_id=operation.id, memory_id=memory_id,
                content_revision=revisions[memory_id], event_id=event_id, session_id=session_id, evidence_at=evidence_at,
            )
            for memory_id, event_id, session_id, evidence_at in evidence
        )
        audit(principal, "operation_proposed", now, reason=proposal.kind, job_id=job.id, group_id=group.id,
              operation_id=operation.id, counts={"inputs": len(refs), "dependencies": len(evidence)})
        return operation_view(principal, operation)


def invalidate(principal: Principal, source_ids: Sequence[UUID], *, reason: str, now: datetime) -> InvalidationReceipt:
    """Every live operation that depends on a source stops counting, in one transaction:
    proposed -> stale, committed -> invalidated; memberships end; projections are
    invalidated (and their clauses emptied when the source was erased); pending groups
    over a source become stale. Works with processing switched off."""
    now = require_aware(now)
    ids = sorted(set(source_ids))
    with owner_context(principal):
        lock_owner(principal)
        op_ids = set(ReconsolidationDependency.objects.filter(memory_id__in=ids).values_list("operation_id", flat=True))
        rows = list(ReconsolidationOperation.objects.select_for_update()
                    .filter(id__in=op_ids, state__in=("proposed", "committed")).order_by("id"))
        invalidated, staled = [], []
        for row in rows:
            if row.state == "committed":
                row.state, row.invalidated_at = "invalidated", now
                invalidated.append(row.id)
            else:
                row.state = "stale"
                staled.append(row.id)
            row.revision += 1
            row.reason = reason[:40]
            row.updated_at = now
            row.save(update_fields=["state", "invalidated_at", "revision", "reason", "updated_at"])
        touched = [row.id for row in rows]
        ReconsolidationMember.objects.filter(operation_id__in=touched, active=True).update(active=False, deactivated_at=now)
        derived = DerivedMemory.objects.filter(operation_id__in=touched).exclude(status="erased")
        if reason == "erased":
            derived.update(status="erased", clauses=[], erased_at=now, updated_at=now)
        else:
            derived.update(status="invalidated", updated_at=now)
        groups = ReconsolidationGroup.objects.filter(state="pending", input_ids__overlap=ids).update(
            state="stale", reason="source_changed", finished_at=now, updated_at=now,
        )
        audit(principal, "sources_invalidated", now, reason=reason[:40],
              counts={"sources": len(ids), "invalidated": len(invalidated), "staled": len(staled), "groups": groups})
        return InvalidationReceipt(
            **owner_fields(principal), reason=reason, source_ids=tuple(ids), invalidated=tuple(invalidated),
            staled=tuple(staled), groups_staled=groups,
        )


def get_operation(principal: Principal, operation_id: UUID, *, ceiling: str) -> OperationView:
    """One operation whose complete current support is visible under ``ceiling``; foreign,
    unknown or above-ceiling is NotFound. Arrives with the owner surfaces of issue 5."""
    raise NotImplementedError("reconsolidation.get_operation arrives with the owner surfaces of issue 5")


def list_operations(principal: Principal, *, ceiling: str, cursor: Optional[str], limit: int) -> OperationPage:
    """Operations newest first (``reconop_list_order``), filtered by ceiling before the
    page bound, with a signed keyset cursor. Arrives with the owner surfaces of issue 5."""
    raise NotImplementedError("reconsolidation.list_operations arrives with the owner surfaces of issue 5")


def undo(principal: Principal, operation_id: UUID, *, expected_revision: int, idempotency_key: str) -> OperationView:
    """Revision-checked, idempotent undo of a committed merge: ends its memberships,
    restores only still-valid originals, records an ``owner_undo`` block
    (``operation_signature``) and a receipt in ``memory.models.IdempotencyReceipt``
    (resource_kind ``recon_operation``). Arrives with merges in issue 5."""
    raise NotImplementedError("reconsolidation.undo arrives with merges in issue 5")
