"""The two durable scan lanes and the model lane's cursor.

Changed lane: the owner's change journal after ``changed_cursor_seq``, changed originals
first. Full lane: a fair pass in (creation_sequence, id) order up to the generation's high
watermark; later creations wait for the next generation. The model lane walks the
generation's creation keys oldest first from its rotated start key (wrapping once); while it
has anchors left, the changed lane leaves it half of a slice's group slots.
"""
from __future__ import annotations

from datetime import datetime
from typing import Optional
from uuid import UUID

from django.db import connection

from reconsolidation import bounds
from reconsolidation.domain import SourcePage, SourceRef
from reconsolidation.errors import Conflict, Invalid
from reconsolidation.inventory import sql
from reconsolidation.models import ReconsolidationJob
from reconsolidation.rows import owner_fields
from reconsolidation.sources import allowed_sensitivities
from veetbot.clock import require_aware
from veetbot.identity import Principal
from veetbot.rls import owner_context

# The changed lane has no watermark: its pages end at the newest visible entry.
NO_BOUND = 2**62


# Bounds of this module's own (each derived from a reconsolidation@1 bound):
# anchors the model lane may decide in one slice — as many as a slice may scan;
MODEL_LANE_MAX_ANCHORS = bounds.RECON_SLICE_MAX_ANCHORS


# group slots of a slice the changed lane leaves to the model lane while it has anchors
# left, so a stream of changes cannot starve old memories of model work;
MODEL_LANE_RESERVED_GROUPS = bounds.RECON_SLICE_MAX_GROUPS // 2


def lane_params(principal: Principal, now: datetime, **values) -> dict:
    return {**owner_fields(principal), "now": now, "sensitivities": allowed_sensitivities(), **values}


def fetch_rows(principal: Principal, lane: str, *, after: int, through: int, limit: int, now: datetime) -> list[tuple]:
    """Raw page rows: full (id, seq, revision, reason); changed (seq, id, cseq, revision, reason)."""
    statement = sql.FULL_PAGE if lane == "full" else sql.CHANGED_PAGE
    with connection.cursor() as cursor:
        cursor.execute(statement, lane_params(principal, now, after=after, through=through, limit=limit))
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


def restart_model_lane_if_new(job: ReconsolidationJob) -> None:
    """Restart the model lane when the job has moved to a new generation."""
    if job.model_generation != job.full_generation:
        job.model_generation = job.full_generation
        job.model_phase = 0 if job.full_high_watermark > 0 else 2
        job.model_cursor_sequence = job.full_start_key - 1
        job.model_anchors = 0


def model_phase_end(job: ReconsolidationJob) -> int:
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


def count_rows(statement: str, principal: Principal, **values) -> int:
    with connection.cursor() as cursor:
        cursor.execute(statement, {**owner_fields(principal), **values})
        return cursor.fetchone()[0]
