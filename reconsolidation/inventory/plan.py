"""The bounded slice plan: how many anchors each lane may give this slice (the full lane's
reservation first, either lane borrowing what the other leaves) and whether the pending cap
pauses it.
"""
from __future__ import annotations

from datetime import datetime
from uuid import UUID

from reconsolidation import bounds
from reconsolidation.domain import SlicePlan
from reconsolidation.errors import LeaseLost
from reconsolidation.inventory.groups import pending_groups
from reconsolidation.inventory.lanes import NO_BOUND, as_page, fetch_rows, split
from reconsolidation.models import ReconsolidationJob
from reconsolidation.rows import owner_fields
from veetbot.clock import require_aware
from veetbot.identity import Principal
from veetbot.rls import owner_context


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
