"""Queued groups: a slice's group drafts checked against the current originals and queued
under the job lease, once per input digest.
"""
from __future__ import annotations

from datetime import datetime
from typing import Mapping, Optional, Sequence
from uuid import UUID

from django.db import connection

from memory.services.owner_state import erasure_generation
from reconsolidation import bounds
from reconsolidation.domain import Group, GroupDraft, InputRef, input_digest, sorted_inputs
from reconsolidation.errors import Invalid, QueueFull, StaleInputs
from reconsolidation.inventory import sql
from reconsolidation.inventory.lanes import lane_params
from reconsolidation.models import GROUP_ACTIVE_STATES, ReconsolidationGroup, ReconsolidationJob
from reconsolidation.rows import locked_job, owner_fields
from veetbot.clock import require_aware
from veetbot.identity import Principal
from veetbot.rls import owner_context


def _current_inputs(principal: Principal, ids: Sequence[UUID], now: datetime) -> dict[UUID, tuple]:
    """id -> (content_revision, scope, exclusion reason) for the visible originals among ``ids``."""
    with connection.cursor() as cursor:
        cursor.execute(sql.INPUTS, lane_params(principal, now, ids=list(ids)))
        return {row[0]: row[1:] for row in cursor.fetchall()}


def _stale_reason(refs: Sequence[InputRef], current: Mapping[UUID, tuple]) -> str:
    """'' when every input is a live, eligible original at exactly that revision, all in one scope."""
    scopes = set()
    for ref in refs:
        found = current.get(ref.memory_id)
        if found is None:
            return "gone"
        revision, scope, reason = found
        if revision != ref.content_revision:
            return "revision_changed"
        if reason:
            return reason
        scopes.add(scope)
    return "" if len(scopes) == 1 else "scope_mismatch"


def _check_draft(draft: GroupDraft) -> tuple[InputRef, ...]:
    refs = sorted_inputs(draft.inputs)
    ids = [ref.memory_id for ref in refs]
    if not 2 <= len(refs) <= bounds.RECON_GROUP_MAX_MEMBERS or len(set(ids)) != len(ids):
        raise Invalid(f"inputs: 2 to {bounds.RECON_GROUP_MAX_MEMBERS} distinct originals")
    if draft.anchor_id not in ids:
        raise Invalid("anchor_id: not one of the inputs")
    if draft.input_digest != input_digest(refs):
        raise Invalid("input_digest: does not match the inputs")
    return refs


def queue_many(
    principal: Principal, job: ReconsolidationJob, drafts: Sequence[GroupDraft], now: datetime,
) -> list[tuple[GroupDraft, Optional[ReconsolidationGroup], bool, str]]:
    """Queue groups (caller holds the job lock) in a fixed number of statements.

    Per draft: (draft, group, created, stale_reason). An existing (owner, policy, digest)
    group is returned as it is, whatever its state (three failures stay failed); a draft
    whose inputs changed since it was read is not queued (``stale_reason``)."""
    checked = [(draft, _check_draft(draft)) for draft in drafts]
    if not checked:
        return []
    existing = {row.input_digest: row for row in ReconsolidationGroup.objects.filter(
        policy=bounds.POLICY, input_digest__in=[draft.input_digest for draft, _ in checked])}
    current = _current_inputs(principal, {ref.memory_id for _, refs in checked for ref in refs}, now)
    fence = erasure_generation(principal)
    results, new_rows = [], []
    for draft, refs in checked:
        if draft.input_digest in existing:
            results.append((draft, existing[draft.input_digest], False, ""))
            continue
        reason = _stale_reason(refs, current)
        if reason:
            results.append((draft, None, False, reason))
            continue
        row = ReconsolidationGroup(
            **owner_fields(principal), job_id=job.id, policy=bounds.POLICY, anchor_id=draft.anchor_id, lane=draft.lane,
            input_ids=[ref.memory_id for ref in refs], input_revisions=[ref.content_revision for ref in refs],
            input_digest=draft.input_digest, fence_generation=fence, state="pending", created_at=now, updated_at=now,
        )
        existing[draft.input_digest] = row
        new_rows.append(row)
        results.append((draft, row, True, ""))
    ReconsolidationGroup.objects.bulk_create(new_rows)
    return results


def group_view(principal: Principal, row: ReconsolidationGroup) -> Group:
    return Group(
        **owner_fields(principal), id=row.id, job_id=row.job_id, policy=row.policy, anchor_id=row.anchor_id,
        lane=row.lane, inputs=tuple(
            InputRef(memory_id=i, content_revision=r) for i, r in zip(row.input_ids, row.input_revisions)
        ),
        input_digest=row.input_digest, fence_generation=row.fence_generation, state=row.state,
        attempt_count=row.attempt_count, retry_count=row.retry_count, reason=row.reason, created_at=row.created_at,
    )


def queue_group(
    principal: Principal, *, lease_token: UUID, inputs: Sequence[InputRef], input_digest: str,
    anchor_id: Optional[UUID] = None, lane: str = "full", now: datetime,
) -> Group:
    """Queue one group under a live lease; an identical (owner, policy, digest) group is
    returned as it is, whatever its state (three failures stay failed)."""
    now = require_aware(now)
    refs = sorted_inputs(inputs)
    anchor = anchor_id if anchor_id is not None else (refs[0].memory_id if refs else None)
    try:
        draft = GroupDraft(anchor_id=anchor, lane=lane, inputs=refs, input_digest=input_digest)
    except ValueError:
        raise Invalid(f"inputs: 2 to {bounds.RECON_GROUP_MAX_MEMBERS} distinct originals")
    with owner_context(principal):
        job = locked_job(principal, lease_token, now)
        exists = ReconsolidationGroup.objects.filter(policy=bounds.POLICY, input_digest=input_digest).exists()
        if not exists and pending_groups(principal) >= bounds.RECON_PENDING_MAX_GROUPS:
            raise QueueFull()
        ((_, row, _, stale),) = queue_many(principal, job, [draft], now)
        if stale:
            raise StaleInputs(stale)
        return group_view(principal, row)


def pending_groups(principal: Principal) -> int:
    return ReconsolidationGroup.objects.filter(policy=bounds.POLICY, state__in=GROUP_ACTIVE_STATES).count()
