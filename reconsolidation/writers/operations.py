"""Operations: recording proposals and invalidating them when a source changes.

``commit`` is one short transaction in the order every source mutation uses: the owner
lock first (``lock_owner``), then the source originals FOR UPDATE in sorted UUID order.
It is ``check_group`` (what every proposal of the group shares, done once for a group's
proposals by ``work.group_commits``) followed by ``record`` (the proposal's own checks and
writes, in a savepoint). Together they recheck, without writing anything on failure: the slice's live lease and the group's
claim, the expected inputs against the group, the caller's fence against the group's,
the group's scoped fence (``fences.touched_since_read``: none of *its* sources corrected
or erased since it read them — an erasure elsewhere in the bank does not stale it), each
proposed source's content revision and eligibility, owner blocks, the kind's local rules (``apply.validate``), active merge
membership, the policy identity, the per-slice operation budget and input idempotency.
Then it writes the operation, its complete dependency edges (one per source original and
admitted owner event, omitted summary inputs included) and a content-free audit row
together. The mode (``mode``) decides the recorded state: ``proposed`` in reviewed mode
(the owner approves in ``review``); membership and projections are written only when an
operation becomes ``committed`` (``apply``).

``invalidate`` is called by the ``memory.hooks`` listener (``invalidation``) inside the
source change's own transaction. Reads live in ``reads``, undo in ``undo``, approval and
rejection in ``review``. No provider call is made, or awaited, inside any transaction.
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass
from datetime import datetime
from typing import Sequence
from uuid import UUID

from django.db import connection, transaction
from django.db.models import F

from memory.services.owner_state import lock_owner
from reconsolidation import bounds, mode
from reconsolidation.domain import (
    InputRef, InvalidationReceipt, OperationView, Proposal, input_digest, sorted_inputs,
)
from reconsolidation.errors import BudgetExhausted, Conflict, FenceLost, Invalid, ReviewQueueFull, StaleInputs
from reconsolidation.models import (
    DerivedMemory, ReconsolidationDependency, ReconsolidationGroup, ReconsolidationJob, ReconsolidationMember,
    ReconsolidationOperation,
)
from reconsolidation.rows import audit, locked_group, locked_job, operation_view, owner_fields
from reconsolidation.sources import EVIDENCE, SourceView, current_sources
from reconsolidation.selectors import review_queue
from reconsolidation.writers import apply, blocks, fences, hypotheses, summary_placement
from veetbot.clock import require_aware
from veetbot.identity import Principal
from veetbot.rls import owner_context




def operation_signature(kind: str, memory_ids: Sequence[UUID]) -> str:
    """The policy- and model-independent signature an owner block matches (IDs only)."""
    return blocks.exact(kind, memory_ids)


@dataclass(frozen=True)
class CheckedGroup:
    """A claimed group as ``check_group`` found it: its job and group rows and its inputs,
    the valid ones as views, all locked until the caller's transaction ends. Sources change
    only under the owner lock, which is held too, so each proposal over the group is checked
    against this once rather than read again."""

    job: ReconsolidationJob
    group: ReconsolidationGroup
    inputs: tuple[InputRef, ...]
    views: dict[UUID, SourceView]
    reasons: dict[UUID, str]  # why each other input is not valid


def check_group(principal: Principal, group_lease, *, expected_inputs: Sequence[InputRef], expected_fence: int,
                now: datetime) -> CheckedGroup:
    """Lock and check what every proposal of a group depends on (caller holds the owner
    context): the owner, the slice's live lease (``LeaseLost``), the group's claim, its
    inputs (``StaleInputs``) and fence (``FenceLost``), none of its sources corrected or
    erased since it read them, each input's revision and eligibility."""
    now = require_aware(now)
    expected = sorted_inputs(expected_inputs)
    lock_owner(principal)
    job = locked_job(principal, group_lease.lease_token, now)
    group = locked_group(group_lease)
    offered = tuple(InputRef(memory_id=i, content_revision=r) for i, r in zip(group.input_ids, group.input_revisions))
    if expected != offered:
        raise StaleInputs("inputs_mismatch")
    if expected_fence != group.fence_generation:  # not the fence this group was queued under
        raise FenceLost()
    touched = fences.touched_since_read(principal, offered)
    if touched:
        raise StaleInputs(touched)
    views, reasons = current_sources(principal, offered, now, lock=True)
    return CheckedGroup(job=job, group=group, inputs=offered, views=views, reasons=reasons)


def commit(
    principal: Principal, group_lease, *, expected_inputs: Sequence[InputRef], expected_fence: int,
    proposal: Proposal, now: datetime,
) -> OperationView:
    """One proposal: the group checked (``check_group``), then the proposal recorded."""
    _refuse_malformed(proposal, sorted_inputs(expected_inputs))  # before any lock
    with owner_context(principal):
        checked = check_group(principal, group_lease, expected_inputs=expected_inputs, expected_fence=expected_fence,
                              now=now)
        return record(principal, checked, proposal, now=now)


def _refuse_malformed(proposal: Proposal, inputs: Sequence[InputRef]) -> None:
    """What a proposal may never be, whatever the sources say now."""
    if proposal.policy != bounds.POLICY:
        raise Conflict("policy_changed")
    if not set(proposal.inputs) <= set(inputs):
        raise Invalid("proposal.inputs: only supplied inputs at their supplied revisions")
    if proposal.clauses and proposal.kind not in ("summarize_related", "infer_connection", "end_superseded"):
        raise Invalid("proposal.clauses: only a summary, a hypothesis or an update has clauses")
    if proposal.kind == "infer_connection" and not proposal.verified:
        raise apply.ProposalRefused("hypothesis_needs_verification")


def record(principal: Principal, checked: CheckedGroup, proposal: Proposal, *, now: datetime) -> OperationView:
    """One proposal over a checked group, in its own savepoint (a refusal rolls back alone;
    caller holds the owner context and ``checked``'s locks)."""
    now = require_aware(now)
    _refuse_malformed(proposal, checked.inputs)
    state = mode.recorded_state()
    refs = sorted_inputs(proposal.inputs)
    job, group = checked.job, checked.group
    with transaction.atomic():
        reasons = [checked.reasons[ref.memory_id] for ref in refs if ref.memory_id in checked.reasons]
        if reasons:
            raise StaleInputs(sorted(reasons)[0])
        views = {ref.memory_id: checked.views[ref.memory_id] for ref in refs}
        if blocks.any_blocked([operation_signature(proposal.kind, [ref.memory_id for ref in refs])]):
            raise Conflict("blocked_by_owner")
        apply.validate(principal, proposal.kind, views, proposal.clauses, now=now)
        clauses, reason, supersedes, replaced = proposal.clauses, proposal.reason, None, ()
        if proposal.kind == "summarize_related":  # one live summary per holder
            placed = summary_placement.place(principal, views, proposal.clauses, now)
            if placed.reason != "extractive_summary":
                views, clauses, reason = placed.views, placed.clauses, placed.reason
                supersedes, replaced = placed.supersedes, placed.replaced
                refs = sorted_inputs(view.ref for view in views.values())
                if blocks.any_blocked([operation_signature(proposal.kind, [ref.memory_id for ref in refs])]):
                    raise Conflict("blocked_by_owner")
                apply.validate(principal, proposal.kind, views, clauses, now=now)
        if state == "proposed" and review_queue.waiting() - len(replaced) >= bounds.RECON_REVIEW_QUEUE_MAX:
            raise ReviewQueueFull()
        if proposal.kind == "merge_equivalent":
            apply.check_overlap(list(views))
        if ReconsolidationOperation.objects.filter(slice_token=job.lease_token).count() >= bounds.RECON_SLICE_MAX_OPERATIONS:
            raise BudgetExhausted("operation_budget")
        digest = input_digest(refs)
        if ReconsolidationOperation.objects.filter(policy=bounds.POLICY, kind=proposal.kind, input_digest=digest).exists():
            raise Conflict("duplicate_operation")
        with connection.cursor() as cursor:
            cursor.execute(EVIDENCE, {**owner_fields(principal), "ids": [ref.memory_id for ref in refs]})
            evidence = cursor.fetchall()
        if {row[0] for row in evidence} != {ref.memory_id for ref in refs}:
            raise StaleInputs("no_owner_evidence")
        revisions = {ref.memory_id: ref.content_revision for ref in refs}
        operation = ReconsolidationOperation.objects.create(
            **owner_fields(principal), group_id=group.id, kind=proposal.kind, state="proposed", revision=1,
            policy=bounds.POLICY, model_identity=proposal.model_identity,
            evidence_identity=hashlib.sha256("\n".join(sorted({str(row[1]) for row in evidence})).encode()).hexdigest(),
            input_ids=[ref.memory_id for ref in refs], input_revisions=[ref.content_revision for ref in refs],
            input_digest=digest, slice_token=job.lease_token, reason=reason,
            clause_sources=[[str(i) for i in clause.source_ids] for clause in clauses], supersedes=supersedes,
            created_at=now, updated_at=now,
        )
        for row in ReconsolidationOperation.objects.select_for_update().filter(id__in=replaced, state="proposed"):
            row.state, row.revision, row.reason, row.updated_at = "stale", row.revision + 1, "summary_revised", now
            row.save(update_fields=["state", "revision", "reason", "updated_at"])
        ReconsolidationDependency.objects.bulk_create(
            ReconsolidationDependency(
                **owner_fields(principal), operation_id=operation.id, memory_id=memory_id,
                content_revision=revisions[memory_id], event_id=event_id, session_id=session_id, evidence_at=evidence_at,
            )
            for memory_id, event_id, session_id, evidence_at in evidence
        )
        if proposal.kind == "infer_connection":  # the verified wording exists only now
            hypotheses.record(principal, operation, views, clauses[0], now)
        # A similarity-only merge, and an update (it changes an original), are recorded proposed
        # in every mode: only the owner commits them.
        if (state == "committed" and operation.kind != "end_superseded"
                and not apply.similarity_only(operation, list(views.values()))):
            apply.apply(principal, operation, views, now)
        audit(principal, f"operation_{operation.state}", now, reason=proposal.kind, job_id=job.id, group_id=group.id,
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
        # Source sets can be a whole bank (principal erasure): bind them as one array, never
        # one parameter per ID.
        op_ids = sorted(set(ReconsolidationDependency.objects.extra(where=["memory_id = ANY(%s::uuid[])"], params=[ids])
                            .values_list("operation_id", flat=True)))
        rows = [row for row in ReconsolidationOperation.objects.select_for_update()
                .extra(where=["id = ANY(%s::uuid[])"], params=[op_ids])
                .filter(state__in=("proposed", "committed")).order_by("id")
                if not apply.own_effect(row, reason)]
        invalidated, staled = [], []
        for row in rows:
            if row.state == "committed":
                row.state, row.invalidated_at = "invalidated", now
                invalidated.append(row.id)
            else:
                row.state = "stale"
                staled.append(row.id)
            row.revision += 1
            row.reason = reason
            row.updated_at = now
            row.save(update_fields=["state", "invalidated_at", "revision", "reason", "updated_at"])
        touched = [row.id for row in rows]
        if touched:
            ReconsolidationMember.objects.extra(where=["operation_id = ANY(%s::uuid[])"], params=[touched]).filter(
                active=True).update(active=False, deactivated_at=now)
            # Projections are purged, not just flagged: a summary is recomputed from valid
            # support, never repaired. Erasure additionally marks the copy erased.
            derived = DerivedMemory.objects.extra(where=["operation_id = ANY(%s::uuid[])"], params=[touched]).exclude(
                status="erased")
            if reason == "erased":
                derived.update(status="erased", clauses=[], subject="", erased_at=now, updated_at=now,
                               revision=F("revision") + 1)
            else:
                derived.update(status="invalidated", clauses=[], subject="", updated_at=now,
                               revision=F("revision") + 1)
        groups = ReconsolidationGroup.objects.filter(state="pending", input_ids__overlap=ids).update(
            state="stale", reason="source_changed", finished_at=now, updated_at=now,
        )
        if touched or groups:  # a change nothing depends on leaves no trace here
            audit(principal, "sources_invalidated", now, reason=reason,
                  counts={"sources": len(ids), "invalidated": len(invalidated), "staled": len(staled),
                          "groups": groups})
        return InvalidationReceipt(
            **owner_fields(principal), reason=reason, source_ids=tuple(ids), invalidated=tuple(invalidated),
            staled=tuple(staled), groups_staled=groups,
        )

