"""The inventory pass: one bounded slice of inventory and grouping under a held lease.

plan (read) -> neighbour lookups (read) -> checkpoint (one write transaction). The
changed lane's anchors are offered for grouping before the full lane's; at most
``RECON_SLICE_MAX_GROUPS`` new groups are queued, within the pending cap. The caller owns
the lease (claim, renew, release); this function never calls a provider.
"""
from __future__ import annotations

from datetime import datetime

from reconsolidation import bounds, grouping
from reconsolidation.domain import JobLease, SliceReport
from reconsolidation.store import ReconsolidationStore
from veetbot.identity import Principal


def inventory_slice(store: ReconsolidationStore, principal: Principal, lease: JobLease, *, now: datetime) -> SliceReport:
    plan = store.plan_slice(principal, lease_token=lease.lease_token, now=now)
    if plan.paused:
        return store.checkpoint(principal, lease_token=lease.lease_token, plan=plan, now=now)
    anchors, seen = [], set()
    for page in (plan.changed, plan.full):
        for ref in page.items:
            if ref.memory_id not in seen:
                seen.add(ref.memory_id)
                anchors.append((ref, page.lane))
    want = min(bounds.RECON_SLICE_MAX_GROUPS, plan.pending_headroom)
    drafts, outcomes = grouping.select_groups(principal, anchors=anchors, start_key=plan.start_key, want=want, now=now)
    return store.checkpoint(principal, lease_token=lease.lease_token, plan=plan, groups=drafts, outcomes=outcomes, now=now)
