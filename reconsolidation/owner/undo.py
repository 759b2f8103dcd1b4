"""Undo of a committed merge: revision-checked, idempotent, durable.

In one owner unit of work: the operation must be a ``committed`` ``merge_equivalent`` at
the expected revision; its active memberships end (recall stops suppressing duplicates);
``owner_undo`` blocks are installed for the exact member set, every member pair and
every claim/original-event pair (``apply.recorded_signatures``) so the same merge cannot
recur across retries, renamed subjects, copies of the evidence under new IDs or policy
changes; the operation becomes ``undone``. Originals are untouched: only still-valid
ones render again (erased or corrected ones stay as they are — nothing is revived), and
the audit counts them. A replay of the same key and revision returns the receipt even
after its sources are gone. Works with processing switched off.
"""
from __future__ import annotations

from datetime import datetime
from typing import Optional
from uuid import UUID

from memory.services.owner_state import lock_owner
from reconsolidation.domain import OperationView
from reconsolidation.errors import Conflict, NotFound
from reconsolidation.models import ReconsolidationMember, ReconsolidationOperation
from reconsolidation.owner import receipts
from reconsolidation.owner.review import _inputs
from reconsolidation.rows import audit, operation_view
from reconsolidation.sources import current_sources
from reconsolidation.writers import apply, blocks
from veetbot.clock import require_aware, utcnow
from veetbot.identity import Principal
from veetbot.rls import owner_context


def undo(principal: Principal, operation_id: UUID, *, expected_revision: int, idempotency_key: str,
         now: Optional[datetime] = None) -> OperationView:
    receipts.check_key(idempotency_key)
    receipts.check_revision(expected_revision)
    now = require_aware(now) if now is not None else utcnow()
    request = receipts.request_digest("undo", operation_id, expected_revision)
    with owner_context(principal):
        lock_owner(principal)
        done = receipts.replayed(idempotency_key, request)
        if done is not None:
            return operation_view(principal, ReconsolidationOperation.objects.get(id=done))
        row = ReconsolidationOperation.objects.select_for_update().filter(id=operation_id).first()
        if row is None:
            raise NotFound("operation")
        if row.kind != "merge_equivalent":
            raise Conflict("not_a_merge")
        if row.state != "committed":
            raise Conflict("not_committed")
        if row.revision != expected_revision:
            raise Conflict("stale_revision")
        # Lock the members in the order every source mutation uses, then read who is valid.
        current, _gone = current_sources(principal, _inputs(row), now, lock=True)
        ended = ReconsolidationMember.objects.filter(operation_id=row.id, active=True).update(
            active=False, deactivated_at=now)
        installed = blocks.install(principal, apply.recorded_signatures(principal, row), reason="owner_undo",
                                   operation_id=row.id, now=now)
        row.state, row.undone_at, row.revision, row.reason, row.updated_at = (
            "undone", now, row.revision + 1, "owner_undo", now)
        row.save(update_fields=["state", "undone_at", "revision", "reason", "updated_at"])
        receipts.record(principal, idempotency_key, request, row.id, now)
        audit(principal, "operation_undone", now, reason="owner_undo", group_id=row.group_id, operation_id=row.id,
              counts={"members_ended": ended, "restored": len(current), "blocks": installed})
        return operation_view(principal, row)
