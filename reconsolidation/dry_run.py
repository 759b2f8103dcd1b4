"""The dry run: what the next slice would select, and why, with nothing written.

It mirrors ``leases.claim_due`` (which job the next slice would lease, or the generation a
new due day would pin), ``inventory.plan_slice`` (the two bounded pages from that job's
cursors), ``grouping.select_groups`` (the groups the changed anchors would form) and the
checkpoint's model lane (``inventory.walk_model_lane`` from the job's model cursor, on an
unsaved copy of the job), but takes no lease, no lock and queues nothing. Everything runs in one owner transaction that is
rolled back at the end, so even a bug here cannot leave a row behind.

The result names anchor IDs, lanes, outcomes and content-free exclusion reasons, the
member IDs of each group it would form and the oldest pending groups the model would be
given — never source text. The kill switch applies: a dry run previews a slice, and a
slice may not start while processing is off.
"""
from __future__ import annotations

from datetime import datetime
from typing import Literal, Optional
from uuid import UUID

from django.db import connection, transaction

from reconsolidation import bounds
from reconsolidation import grouping
from reconsolidation.inventory import sql
from reconsolidation.domain import Lane, Owned, Value
from reconsolidation.inventory.groups import pending_groups
from reconsolidation.inventory.lanes import (
    NO_BOUND, as_page, changed_lane_slots, fetch_rows, model_lane_passed, restart_model_lane_if_new, split,
)
from reconsolidation.inventory.model_lane import walk_model_lane
from reconsolidation.leases import due_day_for, require_enabled, rotated_start_key
from reconsolidation.models import GROUP_ACTIVE_STATES, ReconsolidationGroup, ReconsolidationJob
from reconsolidation.rows import owner_fields
from veetbot.clock import require_aware, utcnow
from veetbot.identity import Principal
from veetbot.rls import RUNTIME_ALIAS, owner_context

AnchorOutcome = Literal["grouped", "duplicate", "no_neighbours", "not_selected", "excluded", "queued"]


class DryRunAnchor(Value):
    memory_id: UUID
    lane: Lane
    outcome: AnchorOutcome
    reason: str = ""  # content-free exclusion reason when excluded


class DryRunGroup(Value):
    anchor_id: UUID
    members: tuple[UUID, ...]  # sorted input IDs, the anchor included
    input_digest: str


class DryRun(Owned):
    due: bool  # False: the next claim would find nothing to do
    leased_elsewhere: bool  # a live lease exists now: the next claim would wait for it
    generation: int
    new_generation: bool  # the next slice would start a new due day's generation
    generation_size: int
    full_cursor: int
    paused: bool  # pending model work at its cap: the slice would select nothing
    pending_groups: int
    anchors: tuple[DryRunAnchor, ...]
    groups: tuple[DryRunGroup, ...]
    model_queue: tuple[UUID, ...]  # oldest pending groups the slice would hand to the model


class _Cursors(Value):
    generation: int
    new_generation: bool
    high_watermark: int
    full_cursor: int
    changed_cursor: int
    start_key: int


def _next_cursors(principal: Principal, now: datetime) -> Optional[_Cursors]:
    """The cursors the next ``claim_due`` would lease, or None when nothing is due."""
    jobs = ReconsolidationJob.objects.filter(policy=bounds.POLICY)
    job = jobs.filter(state="open").order_by("due_day").first()
    if job is None:
        latest = jobs.order_by("-due_day").first()
        if latest is None or latest.due_day < due_day_for(now):
            with connection.cursor() as cursor:
                cursor.execute(sql.ALLOCATORS, owner_fields(principal))
                row = cursor.fetchone()
            high_watermark, journal_head = row if row else (0, 0)
            generation = (latest.full_generation if latest else 0) + 1
            return _Cursors(
                generation=generation, new_generation=True, high_watermark=high_watermark, full_cursor=0,
                changed_cursor=latest.changed_cursor_seq if latest else journal_head,
                start_key=rotated_start_key(generation, high_watermark),
            )
        if not ReconsolidationGroup.objects.filter(policy=bounds.POLICY, state__in=GROUP_ACTIVE_STATES).exists():
            return None
        job = latest
    return _Cursors(
        generation=job.full_generation, new_generation=False, high_watermark=job.full_high_watermark,
        full_cursor=job.full_cursor_sequence, changed_cursor=job.changed_cursor_seq, start_key=job.full_start_key,
    )


def _lane_job(principal: Principal, cursors: _Cursors) -> ReconsolidationJob:
    """An unsaved job carrying the model lane the next slice would walk."""
    job = None if cursors.new_generation else ReconsolidationJob.objects.filter(
        policy=bounds.POLICY, full_generation=cursors.generation).order_by("-due_day").first()
    if job is None:
        job = ReconsolidationJob(**owner_fields(principal), full_generation=cursors.generation,
                                 full_high_watermark=cursors.high_watermark, full_start_key=cursors.start_key)
    restart_model_lane_if_new(job)
    return job


def dry_run_slice(principal: Principal, *, now: Optional[datetime] = None) -> DryRun:
    """Preview the next slice for ``principal``; writes nothing (see the module docstring)."""
    require_enabled()
    now = require_aware(now or utcnow())
    limit = bounds.RECON_SLICE_MAX_ANCHORS
    with transaction.atomic(using=RUNTIME_ALIAS):
        with owner_context(principal):
            preview = _preview(principal, now, limit)
        transaction.set_rollback(True, using=RUNTIME_ALIAS)
    return preview


def _preview(principal: Principal, now: datetime, limit: int) -> DryRun:
    leased = ReconsolidationJob.objects.filter(
        policy=bounds.POLICY, lease_token__isnull=False, lease_expires_at__gt=now).exists()
    cursors = _next_cursors(principal, now)
    pending = pending_groups(principal)
    queue = tuple(ReconsolidationGroup.objects.filter(policy=bounds.POLICY, state="pending")
                  .order_by("created_at", "id").values_list("id", flat=True)[: bounds.RECON_SLICE_MAX_GROUPS])
    if cursors is None:
        return DryRun(**owner_fields(principal), due=False, leased_elsewhere=leased, generation=0,
                      new_generation=False, generation_size=0, full_cursor=0, paused=False, pending_groups=pending,
                      anchors=(), groups=(), model_queue=queue)
    headroom = bounds.RECON_PENDING_MAX_GROUPS - pending
    paused = headroom <= 0
    anchors: list[DryRunAnchor] = []
    drafts = []
    if not paused:
        full_rows = fetch_rows(principal, "full", after=cursors.full_cursor, through=cursors.high_watermark,
                               limit=limit + 1, now=now)
        changed_rows = fetch_rows(principal, "changed", after=cursors.changed_cursor, through=NO_BOUND,
                                  limit=limit + 1, now=now)
        full_take, changed_take = split(len(full_rows), len(changed_rows))
        pages = [
            as_page(principal, "changed", changed_rows[:changed_take], exhausted=len(changed_rows) <= changed_take,
                  after=cursors.changed_cursor, generation=cursors.generation, end=NO_BOUND),
            as_page(principal, "full", full_rows[:full_take], exhausted=len(full_rows) <= full_take,
                  after=cursors.full_cursor, generation=cursors.generation, end=cursors.high_watermark),
        ]
        ordered, seen = [], set()
        for page in pages:  # the changed lane is offered for grouping first, as in a real slice
            for ref in page.items:
                if ref.memory_id not in seen:
                    seen.add(ref.memory_id)
                    ordered.append((ref, page.lane))
        want = min(bounds.RECON_SLICE_MAX_GROUPS, headroom)
        # The changed lane as ``grouping.select_groups`` takes it, with the slots the leased job would leave it.
        lane_job = _lane_job(principal, cursors)
        changed = [(ref, lane) for ref, lane in ordered if ref.eligible and lane == "changed"]
        drafts, outcomes = grouping.decide(principal, changed, start_key=cursors.start_key,
                                           want=changed_lane_slots(lane_job, want), now=now, seen=set())
        model_drafts, decided = walk_model_lane(principal, lane_job, want=want - len(drafts),
                                                seen={d.input_digest for d in drafts}, now=now)
        drafts = drafts + model_drafts
        outcomes.update({ref.memory_id: outcome for ref, outcome in decided})
        # One receipt per anchor; an original in both pages is the full lane's visit (as checkpoint records it).
        lanes = {ref.memory_id: lane for ref, lane in ordered}
        lanes.update({ref.memory_id: "full" for ref in pages[1].items})
        for ref, _ in ordered:
            if not ref.eligible:
                anchors.append(DryRunAnchor(memory_id=ref.memory_id, lane=lanes[ref.memory_id], outcome="excluded",
                                            reason=ref.reason))
            else:
                later = lanes[ref.memory_id] == "full" or not model_lane_passed(lane_job, ref.creation_sequence)
                anchors.append(DryRunAnchor(memory_id=ref.memory_id, lane=lanes[ref.memory_id],
                                            outcome=outcomes.get(ref.memory_id, "queued" if later else "not_selected")))
    return DryRun(
        **owner_fields(principal), due=True, leased_elsewhere=leased, generation=cursors.generation,
        new_generation=cursors.new_generation, generation_size=cursors.high_watermark, full_cursor=cursors.full_cursor,
        paused=paused, pending_groups=pending, anchors=tuple(anchors),
        groups=tuple(DryRunGroup(anchor_id=d.anchor_id, members=tuple(ref.memory_id for ref in d.inputs),
                                 input_digest=d.input_digest) for d in drafts),
        model_queue=queue,
    )
