"""The equivalence pass: exact-key sets (``memory_memory.recon_equivalence_digest``) of a
slice's anchors are carried into a durable backlog with the cursors, then planned as merges
through ``writers.operations.commit`` within the slice's operation budget, the rest carried
to the next slice. No model and no group slot is involved.
"""
from __future__ import annotations

import hashlib
from datetime import datetime, timedelta
from typing import Sequence
from uuid import UUID

from django.db import connection

from memory.services.owner_state import erasure_generation, lock_owner
from reconsolidation import bounds
from reconsolidation.domain import GroupLease, InputRef, Proposal, input_digest, sorted_inputs
from reconsolidation.errors import (
    BudgetExhausted, Conflict, Invalid, LeaseLost, ReconsolidationError, ReviewQueueFull, StaleInputs,
)
from reconsolidation.inventory import sql
from reconsolidation.inventory.lanes import lane_params
from reconsolidation.models import (
    ReconsolidationBlock,
    ReconsolidationEquivalenceBacklog,
    ReconsolidationGroup,
    ReconsolidationJob,
    ReconsolidationMember,
    ReconsolidationOperation,
)
from reconsolidation.providers.rules import provider as rules_provider
from reconsolidation.providers.rules.equivalence import creation_key, equivalence_classes
from reconsolidation.rows import audit, locked_job, owner_fields
from reconsolidation.sources import current_sources, evidence_events
from reconsolidation.writers import blocks, operations
from veetbot.identity import Principal
from veetbot.rls import owner_context

# carried-over exact-key sets one slice examines — at least what one slice can add (one
# per scanned anchor), so the backlog never outgrows the bank's sets;
EQUIVALENCE_SETS_PER_SLICE = bounds.RECON_SLICE_MAX_ANCHORS


# merges the equivalence pass may plan in one slice: the slice's operation budget.
EQUIVALENCE_MERGES_PER_SLICE = bounds.RECON_SLICE_MAX_OPERATIONS


def carry_exact_sets(principal: Principal, job: ReconsolidationJob, anchor_ids: Sequence[UUID], now: datetime) -> int:
    """Backlog the digests of ``anchor_ids`` (eligible anchors) that another eligible
    original shares. Caller holds the job lock. Returns how many digests were found."""
    if not anchor_ids:
        return 0
    with connection.cursor() as cursor:
        cursor.execute(sql.SHARED_DIGESTS, lane_params(principal, now, ids=list(anchor_ids)))
        digests = sorted(row[0] for row in cursor.fetchall())
    ReconsolidationEquivalenceBacklog.objects.bulk_create([
        ReconsolidationEquivalenceBacklog(**owner_fields(principal), job_id=job.id, key_digest=digest,
                                          generation=job.full_generation, queued_at=now)
        for digest in digests
    ], ignore_conflicts=True)
    return len(digests)


def _exact_sets(principal: Principal, digests: Sequence[str], now: datetime) -> dict[str, list[tuple]]:
    """digest -> the current eligible views of its members, each class by the full key
    (the digest only finds candidates: ``equivalence_key`` decides)."""
    with connection.cursor() as cursor:
        cursor.execute(sql.SET_MEMBERS, lane_params(principal, now, digests=list(digests),
                                                members=bounds.RECON_GROUP_MAX_MEMBERS))
        rows = cursor.fetchall()
    refs = [InputRef(memory_id=memory_id, content_revision=revision) for _, memory_id, revision in rows]
    views, _ = current_sources(principal, refs, now)
    by_digest: dict[str, list] = {digest: [] for digest in digests}
    for digest, memory_id, _ in rows:
        if memory_id in views:
            by_digest[digest].append(views[memory_id])
    return {digest: [members for members in equivalence_classes(found) if len(members) >= 2]
            for digest, found in by_digest.items()}


def _already_settled(principal: Principal, classes: Sequence[tuple]) -> set[int]:
    """Indexes of ``classes`` with nothing new to plan: a merge over exactly these inputs
    exists in any state (proposed, committed, rejected, undone, ...), every member is
    already in one active set, or an owner block matches the set."""
    if not classes:
        return set()
    digests = [input_digest(sorted_inputs([view.ref for view in members])) for members in classes]
    recorded = set(ReconsolidationOperation.objects.filter(
        policy=bounds.POLICY, kind="merge_equivalent", input_digest__in=digests).values_list("input_digest", flat=True))
    ids = [view.memory_id for members in classes for view in members]
    holders: dict[UUID, UUID] = dict(ReconsolidationMember.objects.filter(member_id__in=ids, active=True)
                                     .values_list("member_id", "operation_id"))
    events = evidence_events(principal, ids)
    signatures: list[set[str]] = []
    for members in classes:
        member_ids = [view.memory_id for view in members]
        signatures.append({blocks.exact("merge_equivalent", member_ids)} | blocks.member_pairs(member_ids)
                          | blocks.claim_event_pairs({v.memory_id: v.claim_sha256 for v in members}, events))
    blocked = set(ReconsolidationBlock.objects.filter(
        signature__in=sorted(set().union(*signatures))).values_list("signature", flat=True))
    settled = set()
    for index, members in enumerate(classes):
        sets = {holders.get(view.memory_id) for view in members}
        if digests[index] in recorded or (len(sets) == 1 and None not in sets) or signatures[index] & blocked:
            settled.add(index)
    return settled


def _plan_merge(principal: Principal, lease_token: UUID, members: Sequence, now: datetime) -> str:
    """One exact-key set as a merge through ``operations.commit``, in one transaction with
    its (already finished) group: the outcome, or the reason it was refused (nothing then
    remains of it). ``BudgetExhausted`` and ``LeaseLost`` propagate."""
    refs = sorted_inputs([view.ref for view in members])
    head = min(members, key=creation_key)
    try:
        with owner_context(principal):  # one transaction: a refusal leaves nothing of the set
            lock_owner(principal)
            job = locked_job(principal, lease_token, now)
            fence = erasure_generation(principal)
            group = ReconsolidationGroup.objects.create(
                **owner_fields(principal), job_id=job.id, policy=bounds.POLICY, anchor_id=head.memory_id, lane="full",
                origin="equivalence", input_ids=[ref.memory_id for ref in refs],
                input_revisions=[ref.content_revision for ref in refs],
                # Namespaced: a neighbour group over the very same inputs may exist as well.
                input_digest=hashlib.sha256(f"equivalence\n{input_digest(refs)}".encode()).hexdigest(),
                fence_generation=fence, state="leased", attempt_count=1, lease_token=job.lease_token, leased_at=now,
                created_at=now, updated_at=now,
            )
            lease = GroupLease(
                **owner_fields(principal), group_id=group.id, job_id=job.id, lease_token=job.lease_token,
                inputs=tuple(refs), input_digest=group.input_digest, fence_generation=fence, attempt=1,
                slice_deadline_at=job.slice_started_at + timedelta(seconds=bounds.RECON_SLICE_DEADLINE_SECONDS),
                spend_day=job.slice_started_at.date(),
            )
            proposal = Proposal(kind="merge_equivalent", inputs=tuple(view.ref for view in sorted(members, key=creation_key)),
                                model_identity=rules_provider.MODEL_IDENTITY, reason="equivalence_key")
            view = operations.commit(principal, lease, expected_inputs=refs, expected_fence=fence, proposal=proposal,
                                     now=now)
            group.state, group.reason, group.finished_at, group.lease_token = "completed", "equivalence_key", now, None
            group.save(update_fields=["state", "reason", "finished_at", "lease_token"])
            return view.state
    except (BudgetExhausted, LeaseLost, ReviewQueueFull):  # the set waits in the backlog
        raise
    except StaleInputs:
        return "stale"
    except (Conflict, Invalid, ReconsolidationError) as error:  # refused: blocked, overlapping, duplicate, ...
        return getattr(error, "reason", "") or "refused"


def plan_equivalence_merges(principal: Principal, *, lease_token: UUID, now: datetime) -> dict[str, int]:
    """Plan merges for the oldest carried-over exact-key sets within the slice's operation
    budget; a set leaves the backlog once it is planned, settled or refused. Counts only."""
    counts = {"examined": 0, "planned": 0, "settled": 0, "refused": 0, "carried": 0}
    with owner_context(principal):
        locked_job(principal, lease_token, now)
        used = ReconsolidationOperation.objects.filter(slice_token=lease_token).count()
        with connection.cursor() as cursor:
            cursor.execute(sql.BACKLOG_PAGE, {"limit": EQUIVALENCE_SETS_PER_SLICE})
            digests = [row[0] for row in cursor.fetchall()]
        sets = _exact_sets(principal, digests, now) if digests else {}
        candidates = [(digest, members) for digest in digests for members in sets.get(digest, [])]
        settled = _already_settled(principal, [members for _, members in candidates])
    room = min(EQUIVALENCE_MERGES_PER_SLICE, bounds.RECON_SLICE_MAX_OPERATIONS - used)
    open_classes: dict[str, list] = {digest: [] for digest in digests}
    for index, (digest, members) in enumerate(candidates):
        if index in settled:
            counts["settled"] += 1
        else:
            open_classes[digest].append(members)
    done: list[str] = []
    for digest in digests:  # oldest first; a set that does not fit waits, and so does the rest
        if len(open_classes[digest]) > room:
            break
        exhausted = False
        for members in open_classes[digest]:
            try:
                outcome = _plan_merge(principal, lease_token, members, now)
            except (BudgetExhausted, ReviewQueueFull):
                exhausted = True
                break
            if outcome in ("proposed", "committed"):
                counts["planned"] += 1
                room -= 1
            else:
                counts["refused"] += 1
        if exhausted:
            break
        counts["examined"] += 1
        done.append(digest)
    with owner_context(principal):
        job = locked_job(principal, lease_token, now)
        ReconsolidationEquivalenceBacklog.objects.filter(key_digest__in=done).delete()
        counts["carried"] = ReconsolidationEquivalenceBacklog.objects.count()
        if counts["examined"] or counts["carried"]:
            audit(principal, "slice_equivalence", now, job_id=job.id, counts=counts)
    return counts
