"""Owner review of proposed operations (reviewed mode, ADR-0174): approve or reject.

``approve`` commits the operation's *current* revision only after revalidating it as a
commit would — sources locked in sorted UUID order at their exact revisions and still
eligible, no owner block, the kind's local rules, active membership — then writes its
membership or projection (``apply``). ``reject`` ends a proposal and installs
``owner_rejection`` blocks (exact set; for merges every member pair and claim/event
pair) so the same proposal cannot be recorded again. Both are idempotent through
``receipts`` and fail as conflicts without mutation. Neither needs the processing switch:
review keeps working when processing is off.
"""
from __future__ import annotations

from datetime import datetime
from typing import Optional
from uuid import UUID

from memory.services.owner_state import lock_owner
from reconsolidation.domain import InputRef, OperationView
from reconsolidation.errors import Conflict, NotFound, StaleInputs
from reconsolidation.models import ReconsolidationOperation
from reconsolidation.owner import receipts
from reconsolidation.rows import audit, operation_view
from reconsolidation.sources import current_sources
from reconsolidation.writers import apply, blocks
from veetbot.clock import require_aware, utcnow
from veetbot.identity import Principal
from veetbot.rls import owner_context


def locked_operation(operation_id: UUID, *, state: str, expected_revision: int) -> ReconsolidationOperation:
    row = ReconsolidationOperation.objects.select_for_update().filter(id=operation_id).first()
    if row is None:
        raise NotFound("operation")
    if row.state != state:
        raise Conflict(f"not_{state}")
    if row.revision != expected_revision:
        raise Conflict("stale_revision")
    return row


def _inputs(row: ReconsolidationOperation) -> list[InputRef]:
    return [InputRef(memory_id=i, content_revision=r) for i, r in zip(row.input_ids, row.input_revisions)]


def _act(action: str, principal: Principal, operation_id: UUID, expected_revision: int, idempotency_key: str,
         now: Optional[datetime], change) -> OperationView:
    receipts.check_key(idempotency_key)
    receipts.check_revision(expected_revision)
    now = require_aware(now) if now is not None else utcnow()
    request = receipts.request_digest(action, operation_id, expected_revision)
    with owner_context(principal):
        lock_owner(principal)
        done = receipts.replayed(idempotency_key, request)
        if done is not None:
            return operation_view(principal, ReconsolidationOperation.objects.get(id=done))
        row = locked_operation(operation_id, state=change.state_from, expected_revision=expected_revision)
        change(principal, row, now)
        receipts.record(principal, idempotency_key, request, row.id, now)
        audit(principal, f"operation_{action}", now, reason=row.kind, group_id=row.group_id, operation_id=row.id,
              counts={"revision": row.revision})
        return operation_view(principal, row)


def _approve(principal: Principal, row: ReconsolidationOperation, now: datetime) -> None:
    views, reasons = current_sources(principal, _inputs(row), now, lock=True)
    if reasons:
        raise StaleInputs(sorted(reasons.values())[0])
    if blocks.any_blocked([blocks.exact(row.kind, row.input_ids)]):
        raise Conflict("blocked_by_owner")
    apply.validate(principal, row.kind, views, apply.clauses_of(row, views), now=now)
    apply.apply(principal, row, views, now)


_approve.state_from = "proposed"


def _reject(principal: Principal, row: ReconsolidationOperation, now: datetime) -> None:
    signatures = apply.recorded_signatures(principal, row)
    if row.kind == "summarize_related":
        views, reasons = current_sources(principal, _inputs(row), now)
        if not reasons:
            signatures.add(apply.summary_signature(list(views.values()), apply.clauses_of(row, views)))
    blocks.install(principal, signatures, reason="owner_rejection", operation_id=row.id, now=now)
    row.state, row.revision, row.reason, row.updated_at = "rejected", row.revision + 1, "owner_rejection", now
    row.save(update_fields=["state", "revision", "reason", "updated_at"])


_reject.state_from = "proposed"


def approve(principal: Principal, operation_id: UUID, *, expected_revision: int, idempotency_key: str,
            now: Optional[datetime] = None) -> OperationView:
    return _act("approved", principal, operation_id, expected_revision, idempotency_key, now, _approve)


def reject(principal: Principal, operation_id: UUID, *, expected_revision: int, idempotency_key: str,
           now: Optional[datetime] = None) -> OperationView:
    return _act("rejected", principal, operation_id, expected_revision, idempotency_key, now, _reject)
