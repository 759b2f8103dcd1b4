"""The checkpoint: the one transaction that moves a slice's cursors.

It recomputes both pages from the job's own cursors (a caller cannot skip or starve a lane),
writes a receipt for every scanned anchor — grouped, duplicate, no_neighbours, queued,
not_selected or excluded with a content-free reason — queues at most
``RECON_SLICE_MAX_GROUPS`` groups, and only then advances the cursors: every selected
anchor has a durable outcome first. A job completes when both scan lanes, the model lane
and the equivalence backlog are done.
"""
from __future__ import annotations

from datetime import datetime
from typing import Mapping, Optional, Sequence
from uuid import UUID

from django.db import connection

from reconsolidation import bounds
from reconsolidation.domain import (
    GroupDraft, OperationView, SlicePlan, SliceReport, SourcePage, SourceRef,
)
from reconsolidation.errors import Conflict, Invalid
from reconsolidation.inventory import sql
from reconsolidation.inventory.coverage import scan_coverage
from reconsolidation.inventory.equivalence import carry_exact_sets, plan_equivalence_merges
from reconsolidation.inventory.groups import queue_many
from reconsolidation.inventory.lanes import (
    NO_BOUND,
    as_page,
    changed_lane_slots,
    count_rows,
    fetch_rows,
    model_lane_done,
    model_lane_passed,
    restart_model_lane_if_new,
)
from reconsolidation.inventory.model_lane import walk_model_lane, write_model_receipts
from reconsolidation.models import (
    ReconsolidationEquivalenceBacklog, ReconsolidationJob, ReconsolidationOperation,
)
from reconsolidation.rows import audit, locked_job, operation_view, owner_fields
from veetbot.clock import require_aware
from veetbot.identity import Principal
from veetbot.rls import owner_context

_OUTCOMES_FROM_GROUPING = {"grouped", "duplicate", "no_neighbours"}


_REASON = r"^[a-z0-9_]{0,40}$"


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
    if plan.full.entries < reserved and plan.full.entries < count_rows(
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
        for draft, row, created, stale in queue_many(principal, job, taken, now):
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
        for draft, row, created, stale in queue_many(principal, job, model_drafts, now):
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
        write_model_receipts(principal, job, decided, group_of, now)
        tallies = {name: sum(1 for o, _, _ in receipt.values() if o == name)
                   for name in ("grouped", "duplicate", "no_neighbours", "not_selected", "excluded", "queued")}
        for name in ("grouped", "duplicate", "no_neighbours", "not_selected"):
            tallies[name] += sum(1 for _, outcome in decided if outcome == name)
        exact_sets = carry_exact_sets(principal, job, [i for i, (ref, _) in anchors.items() if ref.eligible], now)

        job.full_cursor_sequence = full.next_cursor
        job.changed_cursor_seq = changed.next_cursor
        job.full_scanned += sum(1 for _, lane in anchors.values() if lane == "full")
        job.changed_scanned += sum(1 for _, lane in anchors.values() if lane == "changed")
        job.excluded += tallies["excluded"]
        job.groups_queued += len(queued)
        job.not_selected += tallies["not_selected"]
        scan_done = job.full_cursor_sequence >= job.full_high_watermark and changed.exhausted and not count_rows(
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
        job_completed=completed, coverage=scan_coverage(principal, job),
    )
