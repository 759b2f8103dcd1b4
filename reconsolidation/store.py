"""ReconsolidationStore: the unit-of-work repository of the maintenance pipeline.

Each method takes the authenticated ``veetbot.identity.Principal`` first and runs as one
transaction in ``owner_context(principal)`` — except ``check_group`` and ``record``, which
run inside the caller's owner transaction so that a group's proposals share one check of
its locks (``work.group_commits``); there is no parameter through which a caller could name
another owner. Results are the frozen domain values of
``reconsolidation.domain``, translated from rows by hand. Exhausted leases, revision
mismatches and lost fences raise conflicts (``reconsolidation.errors``) before anything is
written. No method calls or awaits a provider inside its transaction.

The methods are synchronous (Django's ORM and Celery workers are); the spec's async
signatures map one to one. Time comes from the injected clock unless ``now`` is given.
"""
from __future__ import annotations

from datetime import datetime
from typing import Callable, Mapping, Optional, Sequence
from uuid import UUID

from reconsolidation import bounds, leases
from reconsolidation.work import claims, spend
from reconsolidation.inventory import checkpoint as slice_checkpoint
from reconsolidation.inventory import groups as queued_groups
from reconsolidation.inventory import lanes
from reconsolidation.inventory import plan as slice_plan
from reconsolidation.domain import (
    CallAudit, CallCompletion, Group, GroupDraft, GroupLease, InputRef, InvalidationReceipt, JobLease,
    OperationView, Proposal, Reservation, SlicePlan, SliceReport, SourcePage, SpendReceipt,
)
from reconsolidation.writers import operations
from veetbot.clock import utcnow
from veetbot.identity import Principal


class ReconsolidationStore:
    def __init__(self, clock: Callable[[], datetime] = utcnow) -> None:
        self.clock = clock

    def _now(self, now: Optional[datetime]) -> datetime:
        return now if now is not None else self.clock()

    # --- jobs and leases ---------------------------------------------------------------
    def claim_due(self, principal: Principal, *, lease_owner: str, lease_seconds: int = bounds.RECON_LEASE_SECONDS,
                  now: Optional[datetime] = None) -> Optional[JobLease]:
        return leases.claim_due(principal, now=self._now(now), lease_owner=lease_owner, lease_seconds=lease_seconds)

    def renew(self, principal: Principal, job_id: UUID, lease_token: UUID, *, now: Optional[datetime] = None) -> JobLease:
        return leases.renew(principal, job_id, lease_token, now=self._now(now))

    def release(self, principal: Principal, lease_token: UUID, *, now: Optional[datetime] = None) -> None:
        leases.release(principal, lease_token, now=self._now(now))

    # --- inventory -----------------------------------------------------------------------
    def inventory(self, principal: Principal, *, generation: int, lane: str, cursor: int, limit: int,
                  now: Optional[datetime] = None) -> SourcePage:
        return lanes.inventory(principal, generation=generation, lane=lane, cursor=cursor, limit=limit,
                                   now=self._now(now))

    def plan_slice(self, principal: Principal, *, lease_token: UUID, now: Optional[datetime] = None) -> SlicePlan:
        return slice_plan.plan_slice(principal, lease_token=lease_token, now=self._now(now))

    def checkpoint(self, principal: Principal, *, lease_token: UUID, plan: SlicePlan, groups: Sequence[GroupDraft] = (),
                   outcomes: Optional[Mapping[UUID, str]] = None, now: Optional[datetime] = None) -> SliceReport:
        return slice_checkpoint.checkpoint(principal, lease_token=lease_token, plan=plan, groups=groups, outcomes=outcomes,
                                    now=self._now(now))

    def queue_group(self, principal: Principal, *, lease_token: UUID, inputs: Sequence[InputRef], input_digest: str,
                    anchor_id: Optional[UUID] = None, now: Optional[datetime] = None) -> Group:
        return queued_groups.queue_group(principal, lease_token=lease_token, inputs=inputs, input_digest=input_digest,
                                     anchor_id=anchor_id, now=self._now(now))

    # --- model work ----------------------------------------------------------------------
    def claim_group(self, principal: Principal, *, lease_token: UUID, now: Optional[datetime] = None) -> Optional[GroupLease]:
        return claims.claim_group(principal, lease_token=lease_token, now=self._now(now))

    def finish_group(self, principal: Principal, group_lease: GroupLease, *, outcome: str, reason: str = "",
                     now: Optional[datetime] = None) -> Group:
        return claims.finish_group(principal, group_lease, outcome=outcome, reason=reason, now=self._now(now))

    # --- spend ---------------------------------------------------------------------------
    def reserve(self, principal: Principal, group_lease: GroupLease, *, request_digest: str, maximum_usd,
                call_audit: Optional[CallAudit] = None, batch: Sequence[GroupLease] = (),
                now: Optional[datetime] = None) -> Reservation:
        return spend.reserve(principal, group_lease, request_digest=request_digest, maximum_usd=maximum_usd,
                             call_audit=call_audit, batch=batch, now=self._now(now))

    def settle(self, principal: Principal, reservation_id: UUID, *, outcome: str, actual_usd=None, lease_token: UUID,
               completion: Optional[CallCompletion] = None, now: Optional[datetime] = None) -> SpendReceipt:
        return spend.settle(principal, reservation_id, outcome=outcome, actual_usd=actual_usd, lease_token=lease_token,
                            completion=completion, now=self._now(now))

    def members_left_out(self, principal: Principal, *, lease_token: UUID, left_out: Sequence,
                         now: Optional[datetime] = None) -> None:
        spend.members_left_out(principal, lease_token=lease_token, left_out=left_out, now=self._now(now))

    def stage_decision(self, principal: Principal, *, lease_token: UUID, stage: str, decision: str, reason: str = "",
                       counts: Optional[dict] = None, now: Optional[datetime] = None) -> None:
        spend.stage_decision(principal, lease_token=lease_token, stage=stage, decision=decision, reason=reason,
                             counts=counts, now=self._now(now))

    # --- operations ----------------------------------------------------------------------
    def commit(self, principal: Principal, group_lease: GroupLease, *, expected_inputs: Sequence[InputRef],
               expected_fence: int, proposal: Proposal, now: Optional[datetime] = None) -> OperationView:
        return operations.commit(principal, group_lease, expected_inputs=expected_inputs, expected_fence=expected_fence,
                                 proposal=proposal, now=self._now(now))

    def check_group(self, principal: Principal, group_lease: GroupLease, *, now: Optional[datetime] = None,
                    ) -> operations.CheckedGroup:
        """The group's locks and checks for its proposals (inside the caller's owner
        transaction, unlike the other methods): ``operations.check_group``."""
        return operations.check_group(principal, group_lease, expected_inputs=group_lease.inputs,
                                      expected_fence=group_lease.fence_generation, now=self._now(now))

    def record(self, principal: Principal, checked: operations.CheckedGroup, proposal: Proposal, *,
               now: Optional[datetime] = None) -> OperationView:
        """One proposal of a checked group (inside the same transaction): ``operations.record``."""
        return operations.record(principal, checked, proposal, now=self._now(now))

    def invalidate(self, principal: Principal, source_ids: Sequence[UUID], *, reason: str,
                   now: Optional[datetime] = None) -> InvalidationReceipt:
        return operations.invalidate(principal, source_ids, reason=reason, now=self._now(now))
