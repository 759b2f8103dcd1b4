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
  scanned anchor — grouped, duplicate, no_neighbours, not_selected or excluded with a
  content-free reason — queues at most ``RECON_SLICE_MAX_GROUPS`` groups, and only then
  advances the cursors: every selected anchor has a durable outcome first.
* With ``RECON_PENDING_MAX_GROUPS`` groups awaiting the model, a slice is *paused*: it
  consumes nothing and keeps both cursors.
* Scan coverage and model coverage are reported apart; a scanned anchor that no model
  looked at is ``not_selected``, never "done".

Every statement is bounded by the slice, not the bank (see ``reconsolidation/pipeline/inventory_sql.py``).
No provider call happens here, and no source text leaves this module.
"""
from __future__ import annotations

from datetime import datetime
from typing import Mapping, Optional, Sequence
from uuid import UUID

from django.db import connection

from memory.services.owner_state import erasure_generation
from reconsolidation import bounds
from reconsolidation.pipeline import inventory_sql as sql
from reconsolidation.domain import (
    Coverage, Group, GroupDraft, InputRef, SlicePlan, SliceReport, SourcePage, SourceRef, input_digest, sorted_inputs,
)
from reconsolidation.errors import Conflict, Invalid, LeaseLost, QueueFull, StaleInputs
from reconsolidation.models import (
    GROUP_ACTIVE_STATES, ReconsolidationGroup, ReconsolidationJob,
)
from reconsolidation.rows import audit, locked_job, owner_fields
from reconsolidation.pipeline.sources import allowed_sensitivities
from veetbot.clock import require_aware
from veetbot.identity import Principal
from veetbot.rls import owner_context

# The changed lane has no watermark: its pages end at the newest visible entry.
NO_BOUND = 2**62
_OUTCOMES_FROM_GROUPING = {"grouped", "duplicate", "no_neighbours"}
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
        pending, processed, failed = cursor.fetchone()
    scan_complete = job.full_cursor_sequence >= job.full_high_watermark
    return Coverage(
        generation=job.full_generation, generation_size=job.full_high_watermark, full_cursor=job.full_cursor_sequence,
        full_scanned=job.full_scanned, changed_scanned=job.changed_scanned, excluded=job.excluded,
        scan_complete=scan_complete, groups_queued=job.groups_queued, not_selected=job.not_selected,
        groups_pending=pending, groups_processed=processed, groups_failed=failed,
        model_complete=scan_complete and pending == 0 and job.not_selected == 0,
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


def checkpoint(
    principal: Principal, *, lease_token: UUID, plan: SlicePlan, groups: Sequence[GroupDraft] = (),
    outcomes: Optional[Mapping[UUID, str]] = None, now: datetime,
) -> SliceReport:
    """Record the slice's outcome and advance the cursors, all in one transaction."""
    now = require_aware(now)
    outcomes = dict(outcomes or {})
    if len(groups) > min(bounds.RECON_SLICE_MAX_GROUPS, plan.pending_headroom):
        raise Invalid(f"groups: at most {bounds.RECON_SLICE_MAX_GROUPS} per slice, within the pending cap")
    if any(outcome not in _OUTCOMES_FROM_GROUPING for outcome in outcomes.values()):
        raise Invalid("outcomes: grouped, duplicate or no_neighbours")
    with owner_context(principal):
        job = locked_job(principal, lease_token, now)
        if job.id != plan.job_id or job.full_generation != plan.generation:
            raise Conflict("generation_moved")
        if plan.paused:  # nothing consumed, nothing moves: the next slice replans
            audit(principal, "slice_paused", now, reason="pending_cap", job_id=job.id)
            return _report(principal, job, plan, paused=True, queued=(), tallies={}, completed=False)
        full, changed = _recomputed(principal, job, plan, now)

        # One receipt per anchor; an original in both pages is the full lane's visit.
        anchors: dict[UUID, tuple[SourceRef, str]] = {ref.memory_id: (ref, "changed") for ref in changed.items}
        anchors.update({ref.memory_id: (ref, "full") for ref in full.items})
        receipt: dict[UUID, tuple[str, str, Optional[UUID]]] = {}
        for memory_id, (ref, _) in anchors.items():
            if not ref.eligible:
                receipt[memory_id] = ("excluded", ref.reason, None)
            else:
                receipt[memory_id] = (outcomes.get(memory_id, "not_selected"), "", None)

        for draft in groups:
            current = anchors.get(draft.anchor_id)
            if current is None or not current[0].eligible:
                raise Invalid("groups: anchor is not an eligible anchor of this slice")
        queued: list[UUID] = []
        for draft, row, created, stale in _queue_many(principal, job, groups, now):
            if stale:
                receipt[draft.anchor_id] = ("not_selected", stale, None)
            elif created:
                queued.append(row.id)
                receipt[draft.anchor_id] = ("grouped", "", row.id)
            else:
                receipt[draft.anchor_id] = ("duplicate", "", row.id)
        for memory_id, (outcome, _, _) in receipt.items():
            if outcome == "grouped" and memory_id not in {d.anchor_id for d in groups}:
                raise Invalid("outcomes: grouped without a queued group")

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
        tallies = {name: sum(1 for o, _, _ in receipt.values() if o == name)
                   for name in ("grouped", "duplicate", "no_neighbours", "not_selected", "excluded")}

        job.full_cursor_sequence = full.next_cursor
        job.changed_cursor_seq = changed.next_cursor
        job.full_scanned += sum(1 for _, lane in anchors.values() if lane == "full")
        job.changed_scanned += sum(1 for _, lane in anchors.values() if lane == "changed")
        job.excluded += tallies["excluded"]
        job.groups_queued += len(queued)
        job.not_selected += tallies["not_selected"]
        completed = job.full_cursor_sequence >= job.full_high_watermark and changed.exhausted and not _count(
            sql.CHANGED_RANGE_COUNT, principal, after=job.changed_cursor_seq, through=NO_BOUND,
        )
        if completed:
            job.state = "completed"
            job.completed_at = now
        job.revision += 1
        job.updated_at = now
        job.save(update_fields=[
            "full_cursor_sequence", "changed_cursor_seq", "full_scanned", "changed_scanned", "excluded",
            "groups_queued", "not_selected", "state", "completed_at", "revision", "updated_at",
        ])
        audit(principal, "slice_inventory", now, job_id=job.id, counts={
            "full_anchors": full.entries, "changed_entries": changed.entries, "groups_queued": len(queued), **tallies,
        })
        return _report(principal, job, plan, paused=False, queued=tuple(queued), tallies=tallies, completed=completed,
                       full=full, changed=changed)


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
