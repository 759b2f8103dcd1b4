"""What the owner does with a dreaming operation: approve or reject a proposal (reviewed
mode), undo a committed merge. Each is one unit of work under the owner lock, checked
against the revision the owner saw, idempotent under an Idempotency-Key (the owner's one
receipt namespace, ``memory.services.receipts``), and fails as a conflict without mutation.
None needs the processing switch: review and undo keep working when processing is off.

* ``operation_approve`` commits the operation's *current* revision only after revalidating
  it as a commit would — sources locked in sorted UUID order at their exact revisions and
  still eligible, no owner block, the kind's local rules, active membership — then writes
  its membership or projection (``writers.apply``).
* ``operation_reject`` ends a proposal and installs ``owner_rejection`` blocks (exact set;
  for merges every member pair and claim/event pair) so it cannot be recorded again.
* ``operation_undo`` of an applied update gives each earlier belief back the expiry it had (a new
  revision through the memory's own service). Of a committed merge, it ends its active memberships (recall stops suppressing
  duplicates) and installs ``owner_undo`` blocks for the exact member set, every member pair
  and every claim/original-event pair, so the same merge cannot recur across retries,
  renamed subjects or copies of the evidence. Originals are untouched: only still-valid ones
  render again (nothing erased or corrected is revived). A replay of the same key and
  revision returns the receipt even after its sources are gone.
"""
from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Callable, Optional
from uuid import UUID

from memory.services.owner_state import lock_owner
from memory.services.receipts import receipt_record, receipt_replay, request_sha256
from reconsolidation import bounds
from reconsolidation.domain import InputRef, OperationView
from reconsolidation.errors import Conflict, Invalid, NotFound, StaleInputs
from reconsolidation.models import ReconsolidationMember, ReconsolidationOperation
from reconsolidation.rows import audit, operation_view
from reconsolidation.sources import current_sources
from reconsolidation.writers import apply, blocks
from veetbot.clock import require_aware, utcnow
from veetbot.identity import Principal
from veetbot.rls import owner_context

RESOURCE_KIND = "recon_operation"


def _check_request(idempotency_key: str, expected_revision) -> None:
    if (not isinstance(idempotency_key, str) or not idempotency_key.strip()
            or len(idempotency_key) > bounds.RECON_IDEMPOTENCY_KEY_MAX_CHARS):
        raise Invalid(f"Idempotency-Key: nonblank, at most {bounds.RECON_IDEMPOTENCY_KEY_MAX_CHARS} characters")
    if not isinstance(expected_revision, int) or isinstance(expected_revision, bool) or expected_revision < 1:
        raise Invalid("expected_revision: a positive integer")


def _request_digest(action: str, operation_id: UUID, expected_revision: int) -> str:
    return request_sha256(route=f"reconsolidation.{action}", params={"id": str(operation_id)},
                          body={"expected_revision": expected_revision})


@dataclass(frozen=True)
class Acted:
    """An owner action's answer: the operation as it is now, and whether this request was a
    replay of an earlier identical one (nothing done again)."""

    operation: OperationView
    replayed: bool


def locked_operation(operation_id: UUID, *, state: str, expected_revision: int,
                     kinds: Optional[tuple[str, ...]] = None) -> ReconsolidationOperation:
    row = ReconsolidationOperation.objects.select_for_update().filter(id=operation_id).first()
    if row is None:
        raise NotFound("operation")
    if kinds is not None and row.kind not in kinds:
        raise Conflict("not_undoable")
    if row.state != state:
        raise Conflict(f"not_{state}")
    if row.revision != expected_revision:
        raise Conflict("stale_revision")
    return row


def _inputs(row: ReconsolidationOperation) -> list[InputRef]:
    return [InputRef(memory_id=i, content_revision=r) for i, r in zip(row.input_ids, row.input_revisions)]


def _approve(principal: Principal, row: ReconsolidationOperation, now: datetime) -> dict:
    views, reasons = current_sources(principal, _inputs(row), now, lock=True)
    if reasons:
        raise StaleInputs(sorted(reasons.values())[0])
    if blocks.any_blocked([blocks.exact(row.kind, row.input_ids)]):
        raise Conflict("blocked_by_owner")
    apply.validate(principal, row.kind, views, apply.clauses_of(row, views), now=now)
    apply.apply(principal, row, views, now)
    return {"revision": row.revision}


def _reject(principal: Principal, row: ReconsolidationOperation, now: datetime) -> dict:
    signatures = apply.recorded_signatures(principal, row)
    if row.kind == "summarize_related":
        views, reasons = current_sources(principal, _inputs(row), now)
        if not reasons:
            signatures.add(apply.summary_signature(list(views.values()), apply.clauses_of(row, views)))
    blocks.install(principal, signatures, reason="owner_rejection", operation_id=row.id, now=now)
    row.state, row.revision, row.reason, row.updated_at = "rejected", row.revision + 1, "owner_rejection", now
    row.save(update_fields=["state", "revision", "reason", "updated_at"])
    return {"revision": row.revision}


def _undo(principal: Principal, row: ReconsolidationOperation, now: datetime) -> dict:
    if row.kind == "end_superseded":
        restored = apply.undo_update(principal, row, now)
        row.state, row.undone_at, row.revision, row.reason, row.updated_at = (
            "undone", now, row.revision + 1, "owner_undo", now)
        row.save(update_fields=["state", "undone_at", "revision", "reason", "updated_at"])
        return {"restored": restored}
    # Lock the members in the order every source mutation uses, then read who is valid.
    current, _gone = current_sources(principal, _inputs(row), now, lock=True)
    ended = ReconsolidationMember.objects.filter(operation_id=row.id, active=True).update(
        active=False, deactivated_at=now)
    installed = blocks.install(principal, apply.recorded_signatures(principal, row), reason="owner_undo",
                               operation_id=row.id, now=now)
    row.state, row.undone_at, row.revision, row.reason, row.updated_at = (
        "undone", now, row.revision + 1, "owner_undo", now)
    row.save(update_fields=["state", "undone_at", "revision", "reason", "updated_at"])
    return {"members_ended": ended, "restored": len(current), "blocks": installed}


@dataclass(frozen=True)
class _Action:
    change: Callable[[Principal, ReconsolidationOperation, datetime], dict]
    state_from: str
    digest_name: str  # what receipts digest the request under (unchanged since receipts began)
    audit_event: str
    kinds: Optional[tuple[str, ...]] = None  # the only kinds it applies to


ACTIONS = {
    "approve": _Action(_approve, "proposed", "approved", "operation_approved"),
    "reject": _Action(_reject, "proposed", "rejected", "operation_rejected"),
    "undo": _Action(_undo, "committed", "undo", "operation_undone", kinds=("merge_equivalent", "end_superseded")),
}


def operation_act(*, principal: Principal, action: str, operation_id: UUID, expected_revision: int,
                  idempotency_key: str, now: Optional[datetime] = None) -> Acted:
    """Approve, reject or undo (``ACTIONS``) once per Idempotency-Key, in one unit of work."""
    act = ACTIONS[action]
    _check_request(idempotency_key, expected_revision)
    now = require_aware(now) if now is not None else utcnow()
    request = _request_digest(act.digest_name, operation_id, expected_revision)
    with owner_context(principal):
        lock_owner(principal)
        done = receipt_replay(idempotency_key, request, RESOURCE_KIND)
        if done is not None:
            row = ReconsolidationOperation.objects.get(id=done.resource_id)
            return Acted(operation_view(principal, row), replayed=True)
        row = locked_operation(operation_id, state=act.state_from, expected_revision=expected_revision,
                               kinds=act.kinds)
        counts = act.change(principal, row, now)
        receipt_record(principal, idempotency_key, request, status_code=200, resource_kind=RESOURCE_KIND,
                       resource_id=row.id, now=now)
        reason = "owner_undo" if action == "undo" else row.kind
        audit(principal, act.audit_event, now, reason=reason, group_id=row.group_id, operation_id=row.id,
              counts=counts)
        return Acted(operation_view(principal, row), replayed=False)


def operation_approve(*, principal: Principal, operation_id: UUID, expected_revision: int, idempotency_key: str,
                      now: Optional[datetime] = None) -> OperationView:
    return operation_act(principal=principal, action="approve", operation_id=operation_id,
                         expected_revision=expected_revision, idempotency_key=idempotency_key, now=now).operation


def operation_reject(*, principal: Principal, operation_id: UUID, expected_revision: int, idempotency_key: str,
                     now: Optional[datetime] = None) -> OperationView:
    return operation_act(principal=principal, action="reject", operation_id=operation_id,
                         expected_revision=expected_revision, idempotency_key=idempotency_key, now=now).operation


def operation_undo(*, principal: Principal, operation_id: UUID, expected_revision: int, idempotency_key: str,
                   now: Optional[datetime] = None) -> OperationView:
    return operation_act(principal=principal, action="undo", operation_id=operation_id,
                         expected_revision=expected_revision, idempotency_key=idempotency_key, now=now).operation
