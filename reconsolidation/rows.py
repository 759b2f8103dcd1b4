"""Row helpers every stage of reconsolidation shares: they sit below the pipeline, the
writers and the owner's surfaces so that none of those has to import another for them.

* ``owner_fields`` — the owner columns (tenant, principal) every row and value carries;
* ``audit`` — the content-free audit row (event, reason code, counts, opaque IDs);
* ``locked_job`` / ``locked_group`` — the gates every lease-bound write passes first: the
  job whose current, unexpired lease is the caller's token, and the group claimed under
  that lease, each locked FOR UPDATE, or ``LeaseLost`` before anything is written;
* ``operation_view`` — an operation row translated by hand into its ``OperationView``.

Nothing here opens a transaction (callers hold the owner's unit of work), calls a
provider or reads source text.
"""
from __future__ import annotations

from datetime import datetime
from typing import Optional
from uuid import UUID

from reconsolidation import bounds
from reconsolidation.domain import GroupLease, InputRef, OperationView
from reconsolidation.errors import LeaseLost
from reconsolidation.models import (
    ReconsolidationAudit, ReconsolidationGroup, ReconsolidationJob, ReconsolidationOperation,
)
from veetbot.identity import Principal


def owner_fields(principal: Principal) -> dict:
    return {"tenant_id": principal.tenant_id, "principal_id": principal.principal_id}


def audit(principal: Principal, event: str, now: datetime, *, reason: str = "", counts: Optional[dict] = None,
          job_id=None, group_id=None, operation_id=None) -> None:
    ReconsolidationAudit.objects.create(
        **owner_fields(principal), job_id=job_id, group_id=group_id, operation_id=operation_id,
        event=event, reason=reason, counts={k: int(v) for k, v in (counts or {}).items()}, recorded_at=now,
    )


def locked_job(principal: Principal, lease_token: UUID, now: datetime, *, job_id: Optional[UUID] = None) -> ReconsolidationJob:
    """The job whose current lease is ``lease_token``, locked FOR UPDATE; else LeaseLost."""
    rows = ReconsolidationJob.objects.select_for_update().filter(lease_token=lease_token, policy=bounds.POLICY)
    if job_id is not None:
        rows = rows.filter(id=job_id)
    job = rows.first()
    if job is None:
        raise LeaseLost("lease_lost")
    if job.lease_expires_at is None or job.lease_expires_at <= now:
        raise LeaseLost("lease_expired")
    return job


def locked_group(group_lease: GroupLease) -> ReconsolidationGroup:
    """The group claimed under ``group_lease``, locked; else LeaseLost (nothing written)."""
    group = ReconsolidationGroup.objects.select_for_update().filter(id=group_lease.group_id).first()
    if group is None or group.state != "leased" or group.lease_token != group_lease.lease_token:
        raise LeaseLost("group_not_leased")
    return group


def operation_view(principal: Principal, row: ReconsolidationOperation) -> OperationView:
    return OperationView(
        **owner_fields(principal), id=row.id, group_id=row.group_id, kind=row.kind, state=row.state,
        revision=row.revision, policy=row.policy, model_identity=row.model_identity,
        evidence_identity=row.evidence_identity,
        inputs=tuple(InputRef(memory_id=i, content_revision=r) for i, r in zip(row.input_ids, row.input_revisions)),
        input_digest=row.input_digest, reason=row.reason, created_at=row.created_at, committed_at=row.committed_at,
        invalidated_at=row.invalidated_at, undone_at=row.undone_at,
    )
