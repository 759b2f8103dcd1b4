"""Model work: claiming queued groups under the job lease and recording their outcome.

``claim_group`` takes the oldest pending group (``recongroup_pending_by_age``) FOR UPDATE
SKIP LOCKED, so two claims never wait on or take the same group, and binds it to the
slice's lease token: any later write for it must present that same live token. A slice
never claims a group it claimed before (``claimed_slice_token``), so a deferred or failed
group backs off to the next slice and one outage costs a group one attempt per slice.

``finish_group`` records the durable outcome; a failure counts toward
``RECON_MAX_GROUP_ATTEMPTS``, after which the failure is terminal and audited, and a group
that can never fit ends terminal instead of blocking the queue. A crashed or released
slice counts the same way (``leases.recover_dead_slices``).
"""
from __future__ import annotations

import re
from datetime import datetime, timedelta
from typing import Optional

from reconsolidation import bounds
from reconsolidation.domain import Group, GroupLease, InputRef
from reconsolidation.errors import Invalid
from reconsolidation.inventory.groups import group_view
from reconsolidation.leases import fail_attempt, require_enabled
from reconsolidation.models import ReconsolidationGroup, ReconsolidationJob
from reconsolidation.rows import audit, locked_group, locked_job, owner_fields
from veetbot.clock import require_aware
from veetbot.identity import Principal
from veetbot.rls import owner_context

OUTCOMES = ("completed", "no_change", "stale", "deferred", "failed", "unfittable")
# Deferral reasons that say the group may never fit: above the slice ceiling
# (``spend.reserve``, the request builder) or evidence over the request bounds.
UNFITTABLE = frozenset({"above_slice_ceiling", "request_too_large", "excerpt_too_large", "event_parts_exceeded",
                        "group_excerpts_exceeded"})
_REASON = re.compile(r"^[a-z0-9_]*$")  # a reason code, any length (its column is unbounded)


def _lease_of(principal: Principal, job: ReconsolidationJob, group: ReconsolidationGroup) -> GroupLease:
    return GroupLease(
        **owner_fields(principal), group_id=group.id, job_id=job.id, lease_token=job.lease_token,
        inputs=tuple(InputRef(memory_id=i, content_revision=r) for i, r in zip(group.input_ids, group.input_revisions)),
        input_digest=group.input_digest, fence_generation=group.fence_generation, attempt=group.attempt_count,
        slice_deadline_at=job.slice_started_at + timedelta(seconds=bounds.RECON_SLICE_DEADLINE_SECONDS),
        spend_day=job.slice_started_at.date(),
    )


def claim_group(principal: Principal, *, lease_token, now: datetime) -> Optional[GroupLease]:
    """Claim the oldest pending group for this slice; None when the queue is empty."""
    require_enabled()
    now = require_aware(now)
    with owner_context(principal):
        job = locked_job(principal, lease_token, now)
        group = (
            ReconsolidationGroup.objects.select_for_update(skip_locked=True)
            .filter(policy=bounds.POLICY, state="pending").exclude(claimed_slice_token=job.lease_token)
            .order_by("created_at", "id").first()
        )
        if group is None:
            return None
        group.state = "leased"
        group.lease_token = group.claimed_slice_token = job.lease_token
        group.leased_at = now
        group.attempt_count += 1
        group.updated_at = now
        group.save()
        return _lease_of(principal, job, group)


def finish_group(principal: Principal, group_lease: GroupLease, *, outcome: str, reason: str = "", now: datetime) -> Group:
    """Record the durable outcome of one claimed group.

    ``completed`` and ``no_change`` are terminal successes; ``stale`` is terminal (new source
    revisions make a new group); ``deferred`` (budget, pricing, evidence unavailable) returns
    the group to the queue without counting a failure; ``failed`` counts one failed attempt:
    the ``RECON_MAX_GROUP_ATTEMPTS``-th is a terminal, audited failure of that identical input.

    ``unfittable`` is for a group the caller knows can never fit (the rules path: its own
    request's price is above the slice ceiling): ``failed`` at once, audited. A deferral whose
    reason *may* be that (``UNFITTABLE``: above the slice ceiling, or evidence over the request
    bounds — reasons a batch can also give a group only because of its siblings) counts one
    failed attempt instead of none: a group that fits alone goes through in a later slice, one
    that never fits ends ``failed`` with that reason after ``RECON_MAX_GROUP_ATTEMPTS`` slices.
    """
    now = require_aware(now)
    if outcome not in OUTCOMES:
        raise Invalid(f"outcome: one of {', '.join(OUTCOMES)}")
    if not _REASON.match(reason):
        raise Invalid("reason: a short reason code")
    with owner_context(principal):
        locked_job(principal, group_lease.lease_token, now, job_id=None)
        group = locked_group(group_lease)
        if outcome == "deferred" and reason in UNFITTABLE:
            outcome = "failed"  # counted: after the last allowed attempt it ends terminal
        if outcome == "failed":
            fail_attempt(principal, group, reason or "failed", now)
            return group_view(principal, group)
        if outcome == "unfittable":
            outcome = "failed"  # terminal now: no slice could admit it
        if outcome == "deferred":
            group.state = "pending"
            group.lease_token = None
        else:
            group.state = outcome
            group.finished_at = now
            audit(principal, f"group_{outcome}", now, reason=reason, job_id=group.job_id, group_id=group.id,
                  counts={"attempts": group.attempt_count, "failures": group.retry_count})
        group.reason = reason
        group.updated_at = now
        group.save()
        return group_view(principal, group)
