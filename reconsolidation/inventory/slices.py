"""Inventory: the two durable lanes, the bounded slice plan, queued groups and the checkpoint.

* Changed lane: the owner's change journal after ``changed_cursor_seq``, changed originals
  first. Full lane: a fair pass in (creation_sequence, id) order up to the generation's
  high watermark; later creations wait for the next generation.
* A slice consumes at most ``RECON_SLICE_MAX_ANCHORS`` rows, of which
  ``RECON_SLICE_FULL_LANE_ANCHORS`` are reserved for the full lane whenever it has rows
  left. Either lane may borrow what the other leaves unused; changes never displace the
  reservation, so every creation key of a generation of N is visited within ceil(N/64)
  successful full-lane slices however busy the journal is.
* ``checkpoint`` is the one transaction that moves cursors. It recomputes both pages from
  the job's own cursors (a caller cannot skip or starve a lane), writes a receipt for every
  scanned anchor — grouped, duplicate, no_neighbours, queued, not_selected or excluded
  with a content-free reason — queues at most ``RECON_SLICE_MAX_GROUPS`` groups, and only
  then advances the cursors: every selected anchor has a durable outcome first.
* The model lane: the changed lane's anchors are grouped first (at most half the slots
  while the model lane has anchors left); the slots left go to the job's durable model
  cursor, which walks the generation's creation keys oldest first from its rotated start
  key (wrapping once), within the pending cap. A scanned anchor no lane took is ``queued``
  — the model lane reaches it later in the same generation — not ``not_selected``.
* The equivalence pass: exact-key sets (``memory_memory.recon_equivalence_digest``) of the
  slice's anchors are carried into a durable backlog with the cursors, then planned as
  merges through ``writers.operations.commit`` within the slice's operation budget, the
  rest carried to the next slice. No model and no group slot is involved.
* A job completes when both scan lanes, the model lane and the backlog are done.
* With ``RECON_PENDING_MAX_GROUPS`` groups awaiting the model, a slice is *paused*: it
  consumes nothing and keeps every cursor (the equivalence backlog still drains).
* Scan coverage and model coverage are reported apart; a scanned anchor that no model
  looked at is ``queued`` or ``not_selected``, never "done".

Every statement is bounded by the slice, not the bank (see ``reconsolidation/inventory/sql.py``).
No provider call happens here, and no source text leaves this module.
"""
from __future__ import annotations

import hashlib
from datetime import datetime, timedelta
from typing import Mapping, Optional, Sequence
from uuid import UUID

from django.db import connection

from memory.services.owner_state import erasure_generation, lock_owner
from reconsolidation import bounds
from reconsolidation import grouping
from reconsolidation.inventory import sql as sql
from reconsolidation.domain import (
    Coverage, Group, GroupDraft, GroupLease, InputRef, OperationView, Proposal, SlicePlan, SliceReport, SourcePage, SourceRef,
    input_digest, sorted_inputs,
)
from reconsolidation.errors import BudgetExhausted, Conflict, Invalid, LeaseLost, QueueFull, ReconsolidationError, StaleInputs
from reconsolidation.models import (
    GROUP_ACTIVE_STATES, ReconsolidationBlock, ReconsolidationEquivalenceBacklog, ReconsolidationGroup,
    ReconsolidationJob, ReconsolidationMember, ReconsolidationOperation,
)
from reconsolidation.providers.rules import provider as rules_provider
from reconsolidation.rows import audit, locked_job, operation_view, owner_fields
from reconsolidation.providers.rules.equivalence import creation_key, equivalence_classes
from reconsolidation.sources import allowed_sensitivities, current_sources, evidence_events
from reconsolidation.writers import blocks, operations
from veetbot.clock import require_aware
from veetbot.identity import Principal
from veetbot.rls import owner_context

# The changed lane has no watermark: its pages end at the newest visible entry.
NO_BOUND = 2**62
_OUTCOMES_FROM_GROUPING = {"grouped", "duplicate", "no_neighbours"}

# Bounds of this module's own (each derived from a reconsolidation@1 bound):
# anchors the model lane may decide in one slice — as many as a slice may scan;
MODEL_LANE_MAX_ANCHORS = bounds.RECON_SLICE_MAX_ANCHORS
# group slots of a slice the changed lane leaves to the model lane while it has anchors
# left, so a stream of changes cannot starve old memories of model work;
MODEL_LANE_RESERVED_GROUPS = bounds.RECON_SLICE_MAX_GROUPS // 2
# carried-over exact-key sets one slice examines — at least what one slice can add (one
# per scanned anchor), so the backlog never outgrows the bank's sets;
EQUIVALENCE_SETS_PER_SLICE = bounds.RECON_SLICE_MAX_ANCHORS
# merges the equivalence pass may plan in one slice: the slice's operation budget.
EQUIVALENCE_MERGES_PER_SLICE = bounds.RECON_SLICE_MAX_OPERATIONS
_REASON = r"^[a-z0-9_]{0,40}$"


def _params(principal: Principal, now: datetime, **values) -> dict:
    return {**owner_fields(principal), "now": now, "sensitivities": allowed_sensitivities(), **values}


def fetch_rows(principal: Principal, lane: str, *, after: int, through: int, limit: int, now: datetime) -> list[tuple]:
    """Raw page rows: full (id, seq, revision, reason); changed (seq, id, cseq, revision, reason)."""
    statement = sql.FULL_PAGE if lane == "full" else sql.CHANGED_PAGE
    with connection.cursor() as cursor:
        cursor.execute(statement, _params(principal, now, after=after, through=through, limit=limit))
        return cursor.fetchall()


def as_page(principal: Principal, lane: str, taken: list[tuple], *, exhausted: bool, after: int, generation: int,
            end: int) -> SourcePage:
    """Raw rows as a page; an exhausted full lane ends at ``end``, its high watermark."""
    items: dict[UUID, SourceRef] = {}
    if lane == "full":
        for memory_id, creation_sequence, revision, reason in taken:
            items[memory_id] = SourceRef(
                memory_id=memory_id, creation_sequence=creation_sequence, content_revision=revision,
                eligible=reason == "", reason=reason,
            )
        last = taken[-1][1] if taken else after
        next_cursor = end if exhausted else last
    else:
        for seq, memory_id, creation_sequence, revision, reason in taken:
            items.pop(memory_id, None)  # one anchor per original: its latest entry in the page
            items[memory_id] = SourceRef(
                memory_id=memory_id, creation_sequence=creation_sequence or 0, content_revision=revision or 0,
                journal_seq=seq, eligible=reason == "", reason=reason,
            )
        next_cursor = taken[-1][0] if taken else after
    return SourcePage(
        **owner_fields(principal), lane=lane, generation=generation, cursor=after, next_cursor=next_cursor,
        entries=len(taken), items=tuple(items.values()), exhausted=exhausted,
    )


def _job_of_generation(generation: int) -> ReconsolidationJob:
    job = ReconsolidationJob.objects.filter(policy=bounds.POLICY, full_generation=generation).order_by("-due_day").first()
    if job is None:
        raise Conflict("unknown_generation")
    return job


def inventory(
    principal: Principal, *, generation: int, lane: str, cursor: int, limit: int, now: datetime,
) -> SourcePage:
    """A read-only page of one lane after ``cursor`` (full lane: up to the generation's
    high watermark). Excluded rows are included, with their reason, because they advance
    the cursor too."""
    now = require_aware(now)
    if lane not in ("full", "changed"):
        raise Invalid("lane: full or changed")
    if not 1 <= limit <= bounds.RECON_SLICE_MAX_ANCHORS:
        raise Invalid(f"limit: 1 to {bounds.RECON_SLICE_MAX_ANCHORS}")
    with owner_context(principal):
        job = _job_of_generation(generation)
        end = job.full_high_watermark if lane == "full" else NO_BOUND
        if lane == "full" and cursor > end:
            raise Invalid("cursor: beyond the generation's high watermark")
        rows = fetch_rows(principal, lane, after=cursor, through=end, limit=limit + 1, now=now)
        return as_page(principal, lane, rows[:limit], exhausted=len(rows) <= limit, after=cursor,
                     generation=generation, end=end)


def split(full_available: int, changed_available: int) -> tuple[int, int]:
    """(full, changed) rows for one slice: the full lane keeps its reservation whenever it
    has rows; unused capacity of either lane is borrowed by the other."""
    total, reserved = bounds.RECON_SLICE_MAX_ANCHORS, bounds.RECON_SLICE_FULL_LANE_ANCHORS
    full = min(full_available, max(reserved, total - min(changed_available, total)))
    return full, min(changed_available, total - full)


def pending_groups(principal: Principal) -> int:
    return ReconsolidationGroup.objects.filter(policy=bounds.POLICY, state__in=GROUP_ACTIVE_STATES).count()


def plan_slice(principal: Principal, *, lease_token: UUID, now: datetime) -> SlicePlan:
    """The bounded pages this slice may consume (read only)."""
    now = require_aware(now)
    limit = bounds.RECON_SLICE_MAX_ANCHORS
    with owner_context(principal):
        job = ReconsolidationJob.objects.filter(lease_token=lease_token, policy=bounds.POLICY).first()
        if job is None or job.lease_expires_at <= now:
            raise LeaseLost("lease_lost" if job is None else "lease_expired")
        headroom = bounds.RECON_PENDING_MAX_GROUPS - pending_groups(principal)
        paused = headroom <= 0
        full_rows = [] if paused else fetch_rows(
            principal, "full", after=job.full_cursor_sequence, through=job.full_high_watermark, limit=limit + 1, now=now,
        )
        changed_rows = [] if paused else fetch_rows(
            principal, "changed", after=job.changed_cursor_seq, through=NO_BOUND, limit=limit + 1, now=now,
        )
        full_take, changed_take = split(len(full_rows), len(changed_rows))
        full = as_page(principal, "full", full_rows[:full_take], exhausted=len(full_rows) <= full_take,
                     after=job.full_cursor_sequence, generation=job.full_generation, end=job.full_high_watermark)
        changed = as_page(principal, "changed", changed_rows[:changed_take], exhausted=len(changed_rows) <= changed_take,
                        after=job.changed_cursor_seq, generation=job.full_generation, end=NO_BOUND)
        if paused:  # nothing consumed: the cursors stay exactly where they are
            full = full.model_copy(update={"next_cursor": job.full_cursor_sequence, "exhausted": False})
            changed = changed.model_copy(update={"next_cursor": job.changed_cursor_seq, "exhausted": False})
        return SlicePlan(
            **owner_fields(principal), job_id=job.id, lease_token=lease_token, generation=job.full_generation,
            start_key=job.full_start_key, paused=paused, pending_headroom=max(0, headroom), full=full, changed=changed,
        )


def _current_inputs(principal: Principal, ids: Sequence[UUID], now: datetime) -> dict[UUID, tuple]:
    """id -> (content_revision, scope, exclusion reason) for the visible originals among ``ids``."""
    with connection.cursor() as cursor:
        cursor.execute(sql.INPUTS, _params(principal, now, ids=list(ids)))
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


def _queue_many(
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
        ((_, row, _, stale),) = _queue_many(principal, job, [draft], now)
        if stale:
            raise StaleInputs(stale)
        return group_view(principal, row)


def coverage(principal: Principal, job: ReconsolidationJob) -> Coverage:
    with connection.cursor() as cursor:
        cursor.execute(sql.GROUP_COUNTS, {"job_id": job.id, "policy": bounds.POLICY})
        pending, processed, failed, failed_attempts = cursor.fetchone()
        cursor.execute(sql.MODEL_COVERAGE, {"job_id": job.id, "policy": bounds.POLICY})
        groupable, groupable_processed = cursor.fetchone()
    scan_complete = job.full_cursor_sequence >= job.full_high_watermark
    return Coverage(
        generation=job.full_generation, generation_size=job.full_high_watermark, full_cursor=job.full_cursor_sequence,
        full_scanned=job.full_scanned, changed_scanned=job.changed_scanned, excluded=job.excluded,
        scan_complete=scan_complete, groups_queued=job.groups_queued, not_selected=job.not_selected,
        groups_pending=pending, groups_processed=processed, groups_failed=failed, failed_attempts=failed_attempts,
        model_complete=scan_complete and pending == 0 and job.not_selected == 0 and model_lane_done(job),
        groupable_anchors=groupable, groupable_processed=groupable_processed,
    )


def _count(statement: str, principal: Principal, **values) -> int:
    with connection.cursor() as cursor:
        cursor.execute(statement, {**owner_fields(principal), **values})
        return cursor.fetchone()[0]


def _recomputed(principal: Principal, job: ReconsolidationJob, plan: SlicePlan, now: datetime) -> tuple[SourcePage, SourcePage]:
    """Both pages again, from the job's cursors to the plan's ends; refuse a plan that
    skips rows, starves the full lane's reservation or exceeds the slice."""
    if plan.full.cursor != job.full_cursor_sequence or plan.changed.cursor != job.changed_cursor_seq:
        raise Conflict("cursor_moved")
    full_end = min(plan.full.next_cursor, job.full_high_watermark)
    full_rows = fetch_rows(principal, "full", after=job.full_cursor_sequence, through=full_end,
                       limit=bounds.RECON_SLICE_MAX_ANCHORS + 1, now=now)
    changed_rows = fetch_rows(principal, "changed", after=job.changed_cursor_seq, through=plan.changed.next_cursor,
                          limit=bounds.RECON_SLICE_MAX_ANCHORS + 1, now=now)
    if len(full_rows) != plan.full.entries or len(changed_rows) != plan.changed.entries:
        raise Conflict("page_mismatch")
    if plan.full.entries + plan.changed.entries > bounds.RECON_SLICE_MAX_ANCHORS:
        raise Conflict("slice_too_large")
    reserved = bounds.RECON_SLICE_FULL_LANE_ANCHORS
    if plan.full.entries < reserved and plan.full.entries < _count(
            sql.FULL_REMAINING, principal, after=job.full_cursor_sequence, through=job.full_high_watermark,
            limit=reserved):
        raise Conflict("full_lane_starved")
    full_exhausted = plan.full.next_cursor >= job.full_high_watermark
    full = as_page(principal, "full", full_rows, exhausted=full_exhausted, after=job.full_cursor_sequence,
                 generation=job.full_generation, end=job.full_high_watermark)
    changed = as_page(principal, "changed", changed_rows, exhausted=plan.changed.exhausted, after=job.changed_cursor_seq,
                    generation=job.full_generation, end=NO_BOUND)
    return full, changed


# --- The model lane ------------------------------------------------------------------
# A generation's model lane walks its creation keys from the rotated start key to the
# high watermark (phase 0), then from the first key up to the start key (phase 1); phase
# 2 is done. A job carries the lane of one generation (``model_generation``): the first
# checkpoint of a new generation restarts it, so the next generation starts elsewhere.

def restart_model_lane_if_new(job: ReconsolidationJob) -> None:
    """Restart the model lane when the job has moved to a new generation."""
    if job.model_generation != job.full_generation:
        job.model_generation = job.full_generation
        job.model_phase = 0 if job.full_high_watermark > 0 else 2
        job.model_cursor_sequence = job.full_start_key - 1
        job.model_anchors = 0


def _model_phase_end(job: ReconsolidationJob) -> int:
    return job.full_high_watermark if job.model_phase == 0 else job.full_start_key - 1


def model_lane_done(job: ReconsolidationJob) -> bool:
    return job.model_generation == job.full_generation and job.model_phase == 2


def changed_lane_slots(job: Optional[ReconsolidationJob], want: int) -> int:
    """The group slots of ``want`` the changed lane may take: all once the model lane is
    done, else it leaves ``MODEL_LANE_RESERVED_GROUPS`` to it (no job: the lane is not done)."""
    if job is not None:
        restart_model_lane_if_new(job)
        if model_lane_done(job):
            return want
    return min(want, bounds.RECON_SLICE_MAX_GROUPS - MODEL_LANE_RESERVED_GROUPS)


def model_lane_passed(job: ReconsolidationJob, creation_sequence: int) -> bool:
    """Whether this generation's model lane will not reach ``creation_sequence`` (any more):
    it walked past it, or it lies beyond the generation (the next one's lane reaches it)."""
    if creation_sequence > job.full_high_watermark:
        return True
    if job.model_generation != job.full_generation:
        return False
    if job.model_phase == 2:
        return True
    if creation_sequence >= job.full_start_key:
        return job.model_phase == 1 or creation_sequence <= job.model_cursor_sequence
    return job.model_phase == 1 and creation_sequence <= job.model_cursor_sequence


def walk_model_lane(
    principal: Principal, job: ReconsolidationJob, *, want: int, seen: set[str], now: datetime,
) -> tuple[list[GroupDraft], list[tuple[SourceRef, str]]]:
    """Advance the job's model lane (caller holds the job lock and saves it): up to
    ``want`` new groups for the oldest anchors after the model cursor, and every eligible
    anchor decided on the way (grouped, duplicate, no_neighbours). The cursor stops just
    before the first anchor left undecided, so nothing is skipped; at most
    ``MODEL_LANE_MAX_ANCHORS`` rows are passed per slice. With no group slot the lane waits."""
    drafts: list[GroupDraft] = []
    decided: list[tuple[SourceRef, str]] = []
    budget = MODEL_LANE_MAX_ANCHORS
    while job.model_phase < 2 and budget > 0 and len(drafts) < want:
        rows = fetch_rows(principal, "full", after=job.model_cursor_sequence, through=_model_phase_end(job),
                          limit=min(bounds.RECON_NEIGHBOUR_BATCH_ANCHORS, budget), now=now)
        if not rows:
            job.model_phase, job.model_cursor_sequence = job.model_phase + 1, 0
            if job.model_phase == 1 and job.full_start_key <= 1:
                job.model_phase = 2
            continue
        refs = [SourceRef(memory_id=memory_id, creation_sequence=sequence, content_revision=revision,
                          eligible=reason == "", reason=reason) for memory_id, sequence, revision, reason in rows]
        found, outcomes = grouping.decide(principal, [(ref, "full") for ref in refs if ref.eligible],
                                          start_key=job.full_start_key, want=want - len(drafts), now=now, seen=seen)
        drafts.extend(found)
        for ref in refs:
            if ref.eligible and ref.memory_id not in outcomes:
                break  # undecided: the next slice starts here
            if ref.eligible:
                decided.append((ref, outcomes[ref.memory_id]))
            job.model_cursor_sequence = ref.creation_sequence
            budget -= 1
    job.model_anchors += len(decided)
    return drafts, decided


def _write_model_receipts(principal: Principal, job: ReconsolidationJob, decided: Sequence[tuple[SourceRef, str]],
                          group_of: Mapping[UUID, UUID], now: datetime) -> None:
    if not decided:
        return
    with connection.cursor() as cursor:
        cursor.execute(sql.MODEL_RECEIPTS_UPSERT, {
            **owner_fields(principal), "job_id": job.id, "policy": bounds.POLICY, "generation": job.full_generation,
            "now": now, "memory_ids": [ref.memory_id for ref, _ in decided],
            "revisions": [ref.content_revision for ref, _ in decided],
            "outcomes": [outcome for _, outcome in decided], "reasons": ["" for _ in decided],
            "group_ids": [group_of.get(ref.memory_id) for ref, _ in decided],
        })


# --- The equivalence pass ----------------------------------------------------------------
# Exact-key duplicates need no model and no group slot. Every checkpoint carries the
# digests of its scanned anchors that another eligible original shares into the durable
# backlog (in the checkpoint's own transaction, with the cursors), then plans merges for
# the oldest carried sets, each in its own short transaction through the writers
# (``operations.commit``: owner lock, sources locked in UUID order, every gate), within
# the slice's operation budget. What does not fit stays in the backlog for the next
# slice of the same generation, and a generation completes only once it is empty.

def _carry_exact_sets(principal: Principal, job: ReconsolidationJob, anchor_ids: Sequence[UUID], now: datetime) -> int:
    """Backlog the digests of ``anchor_ids`` (eligible anchors) that another eligible
    original shares. Caller holds the job lock. Returns how many digests were found."""
    if not anchor_ids:
        return 0
    with connection.cursor() as cursor:
        cursor.execute(sql.SHARED_DIGESTS, _params(principal, now, ids=list(anchor_ids)))
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
        cursor.execute(sql.SET_MEMBERS, _params(principal, now, digests=list(digests),
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
    except (BudgetExhausted, LeaseLost):
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
            except BudgetExhausted:
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


def slice_operations(principal: Principal, lease_token: UUID) -> tuple[OperationView, ...]:
    """Every operation recorded under one slice's lease — the equivalence pass's merges and
    the model work's operations alike — oldest first, as content-free views: what a slice
    reports as its operations."""
    with owner_context(principal):
        rows = ReconsolidationOperation.objects.filter(slice_token=lease_token).order_by("created_at", "id")
        return tuple(operation_view(principal, row) for row in rows)


def checkpoint(
    principal: Principal, *, lease_token: UUID, plan: SlicePlan, groups: Sequence[GroupDraft] = (),
    outcomes: Optional[Mapping[UUID, str]] = None, now: datetime,
) -> SliceReport:
    """Record the slice's outcome and advance the cursors in one transaction; then plan
    the carried exact-key merges (each its own transaction) and, once nothing of the
    generation is left, complete the job."""
    now = require_aware(now)
    outcomes = dict(outcomes or {})
    if len(groups) > min(bounds.RECON_SLICE_MAX_GROUPS, plan.pending_headroom):
        raise Invalid(f"groups: at most {bounds.RECON_SLICE_MAX_GROUPS} per slice, within the pending cap")
    if any(outcome not in _OUTCOMES_FROM_GROUPING for outcome in outcomes.values()):
        raise Invalid("outcomes: grouped, duplicate or no_neighbours")
    scanned = _checkpoint_inventory(principal, lease_token=lease_token, plan=plan, groups=groups, outcomes=outcomes,
                                    now=now)
    plan_equivalence_merges(principal, lease_token=lease_token, now=now)
    with owner_context(principal):
        job = locked_job(principal, lease_token, now)
        if plan.paused:
            return _report(principal, job, plan, paused=True, queued=(), tallies={}, completed=False)
        queued, tallies, full, changed, scan_done = scanned
        completed = scan_done and model_lane_done(job) and not ReconsolidationEquivalenceBacklog.objects.exists()
        if completed and job.state != "completed":
            job.state, job.completed_at = "completed", now
            job.revision += 1
            job.updated_at = now
            job.save(update_fields=["state", "completed_at", "revision", "updated_at"])
        return _report(principal, job, plan, paused=False, queued=tuple(queued), tallies=tallies,
                       completed=completed, full=full, changed=changed)


def _checkpoint_inventory(principal: Principal, *, lease_token: UUID, plan: SlicePlan, groups: Sequence[GroupDraft],
                          outcomes: Mapping[UUID, str], now: datetime):
    """The checkpoint's one transaction: receipts, queued groups (changed lane, then the
    model lane), the carried exact-key sets and the cursors. None when paused."""
    with owner_context(principal):
        job = locked_job(principal, lease_token, now)
        if job.id != plan.job_id or job.full_generation != plan.generation:
            raise Conflict("generation_moved")
        if plan.paused:  # nothing consumed, nothing moves: the next slice replans
            audit(principal, "slice_paused", now, reason="pending_cap", job_id=job.id)
            return None
        full, changed = _recomputed(principal, job, plan, now)
        restart_model_lane_if_new(job)

        # One receipt per anchor; an original in both pages is the full lane's visit.
        anchors: dict[UUID, tuple[SourceRef, str]] = {ref.memory_id: (ref, "changed") for ref in changed.items}
        anchors.update({ref.memory_id: (ref, "full") for ref in full.items})
        for draft in groups:
            current = anchors.get(draft.anchor_id)
            if current is None or not current[0].eligible:
                raise Invalid("groups: anchor is not an eligible anchor of this slice")
        changed_room = changed_lane_slots(job, len(groups))
        taken, dropped = list(groups[:changed_room]), {draft.anchor_id for draft in groups[changed_room:]}
        receipt: dict[UUID, tuple[str, str, Optional[UUID]]] = {}
        for memory_id, (ref, lane) in anchors.items():
            if not ref.eligible:
                receipt[memory_id] = ("excluded", ref.reason, None)
            elif memory_id in outcomes and memory_id not in dropped:
                receipt[memory_id] = (outcomes[memory_id], "", None)
            else:
                receipt[memory_id] = ("pending_decision", "", None)

        queued: list[UUID] = []
        group_of: dict[UUID, UUID] = {}
        for draft, row, created, stale in _queue_many(principal, job, taken, now):
            if stale:
                receipt[draft.anchor_id] = ("not_selected", stale, None)
            elif created:
                queued.append(row.id)
                receipt[draft.anchor_id] = ("grouped", "", row.id)
            else:
                receipt[draft.anchor_id] = ("duplicate", "", row.id)
        for memory_id, (outcome, _, _) in receipt.items():
            if outcome == "grouped" and memory_id not in {d.anchor_id for d in taken}:
                raise Invalid("outcomes: grouped without a queued group")

        # The model lane takes the slots left, oldest anchors after its cursor first.
        want = min(bounds.RECON_SLICE_MAX_GROUPS, plan.pending_headroom) - len(queued)
        model_drafts, decided = walk_model_lane(principal, job, want=want,
                                                seen={draft.input_digest for draft in taken}, now=now)
        for draft, row, created, stale in _queue_many(principal, job, model_drafts, now):
            if created:
                queued.append(row.id)
            if row is not None:
                group_of[draft.anchor_id] = row.id
        decided = [(ref, outcome if ref.memory_id in group_of or outcome != "grouped" else "not_selected")
                   for ref, outcome in decided]
        # Anchors no lane took this slice: queued while the model lane will still reach them.
        for memory_id, (outcome, reason, group_id) in list(receipt.items()):
            if outcome == "pending_decision":
                ref, lane = anchors[memory_id]
                later = lane == "full" or not model_lane_passed(job, ref.creation_sequence)
                receipt[memory_id] = ("queued" if later else "not_selected", "", None)

        ids = list(receipt)
        with connection.cursor() as cursor:
            if ids:
                cursor.execute(sql.RECEIPTS_UPSERT, {
                    **owner_fields(principal), "job_id": job.id, "policy": bounds.POLICY,
                    "generation": job.full_generation, "now": now, "memory_ids": ids,
                    "revisions": [anchors[i][0].content_revision for i in ids],
                    "lanes": [anchors[i][1] for i in ids],
                    "outcomes": [receipt[i][0] for i in ids], "reasons": [receipt[i][1] for i in ids],
                    "group_ids": [receipt[i][2] for i in ids],
                })
        _write_model_receipts(principal, job, decided, group_of, now)
        tallies = {name: sum(1 for o, _, _ in receipt.values() if o == name)
                   for name in ("grouped", "duplicate", "no_neighbours", "not_selected", "excluded", "queued")}
        for name in ("grouped", "duplicate", "no_neighbours", "not_selected"):
            tallies[name] += sum(1 for _, outcome in decided if outcome == name)
        exact_sets = _carry_exact_sets(principal, job, [i for i, (ref, _) in anchors.items() if ref.eligible], now)

        job.full_cursor_sequence = full.next_cursor
        job.changed_cursor_seq = changed.next_cursor
        job.full_scanned += sum(1 for _, lane in anchors.values() if lane == "full")
        job.changed_scanned += sum(1 for _, lane in anchors.values() if lane == "changed")
        job.excluded += tallies["excluded"]
        job.groups_queued += len(queued)
        job.not_selected += tallies["not_selected"]
        scan_done = job.full_cursor_sequence >= job.full_high_watermark and changed.exhausted and not _count(
            sql.CHANGED_RANGE_COUNT, principal, after=job.changed_cursor_seq, through=NO_BOUND,
        )
        job.revision += 1
        job.updated_at = now
        job.save(update_fields=[
            "full_cursor_sequence", "changed_cursor_seq", "full_scanned", "changed_scanned", "excluded",
            "groups_queued", "not_selected", "model_generation", "model_phase", "model_cursor_sequence",
            "model_anchors", "revision", "updated_at",
        ])
        audit(principal, "slice_inventory", now, job_id=job.id, counts={
            "full_anchors": full.entries, "changed_entries": changed.entries, "groups_queued": len(queued),
            "model_anchors": len(decided), "exact_sets": exact_sets, **tallies,
        })
        return queued, tallies, full, changed, scan_done


def _report(principal: Principal, job: ReconsolidationJob, plan: SlicePlan, *, paused: bool, queued: tuple,
            tallies: dict, completed: bool, full: Optional[SourcePage] = None,
            changed: Optional[SourcePage] = None) -> SliceReport:
    full = full or plan.full.model_copy(update={"entries": 0, "items": (), "next_cursor": plan.full.cursor})
    changed = changed or plan.changed.model_copy(update={"entries": 0, "items": (), "next_cursor": plan.changed.cursor})
    return SliceReport(
        **owner_fields(principal), job_id=job.id, lease_token=plan.lease_token, paused=paused,
        full_anchors=len(full.items), changed_anchors=len(changed.items),
        full_from=full.cursor, full_through=full.next_cursor,
        changed_from=changed.cursor, changed_through=changed.next_cursor, groups_queued=queued,
        duplicates=tallies.get("duplicate", 0), no_neighbours=tallies.get("no_neighbours", 0),
        not_selected=tallies.get("not_selected", 0), excluded=tallies.get("excluded", 0),
        job_completed=completed, coverage=coverage(principal, job),
    )
