"""The owner's controls of a derived memory (summary or hypothesis), each one unit of work under
the owner lock, idempotent through receipts in the owner's key namespace (resource kind
``derived``):

* ``mark_reviewed`` / ``dismiss`` set review instants only (no truth, no authority);
* ``not_here`` overlays a local-scope restriction (``restricted_at``): the immutable
  projection and its support are untouched, recall stops offering it outside its scope;
* ``not_true`` retires it: hash-only ``owner_rejection`` blocks (the namespaced summary
  claim signature plus the operation's recorded signatures) stop recreation from the
  same or copied evidence, its operation is invalidated, the clauses are purged; the
  answer is the retired, content-free view;
* ``delete`` does the same and marks the copy erased, so lookup becomes NotFound; a
  replay answers the same content-free success. Both bump the owner's erasure fence, so
  in-flight work and cached generated copies are fenced like any erasure; a delete also
  withholds every conversation prefix that froze the copy (``recall.snapshots.erasure``).

``derived_record_usage`` is usage only: a faithful, unambiguous citation raises a
projection's bounded utility and stamps its last use — never its revision, its operation,
its supports or their evidence clocks.

Originals are never touched. Nothing here logs or persists prose: receipts and blocks
hold digests and opaque IDs only.
"""
from __future__ import annotations

from datetime import datetime
from typing import Callable, Optional
from uuid import UUID

from django.db.models import F, Value
from django.db.models.functions import Least

from memory.models import Memory
from memory.services.owner_state import bump_erasure_fence, lock_owner
from memory.services.receipts import receipt_record, receipt_replay
from recall.snapshots.erasure import snapshot_withhold
from reconsolidation.errors import Invalid
from reconsolidation.models import DerivedMemory, ReconsolidationOperation
from reconsolidation.rows import audit
from reconsolidation.selectors.derived import DerivedView, derived_get, visible_row
from reconsolidation.writers import apply, blocks
from veetbot.clock import require_aware, utcnow
from veetbot.identity import Principal
from veetbot.rls import owner_context

RESOURCE_KIND = "derived"
REVIEW_ACTIONS = ("mark_reviewed", "dismiss", "not_here", "not_true")


def _once(principal: Principal, key: str, request: str, derived_id: UUID, now: datetime, status_code: int,
          act: Callable[[], None], replay: Callable[[], Optional[DerivedView]]) -> Optional[DerivedView]:
    """Run ``act`` once per (owner, key) and record its receipt with it; the same key and
    request replays (``replay``), any other request with the key is KeyReused."""
    if receipt_replay(key, request, RESOURCE_KIND) is None:
        act()
        receipt_record(principal, key, request, status_code=status_code, resource_kind=RESOURCE_KIND,
                       resource_id=derived_id, now=now)
    return replay()


def _signatures(principal: Principal, row: DerivedMemory, operation: ReconsolidationOperation) -> set[str]:
    """Hash-only block signatures: the operation's recorded ones and, while the clauses are
    still there, the namespaced claim/attribution signature of the rendered clause set."""
    found = apply.recorded_signatures(principal, operation)
    if row.clauses:
        first = Memory.objects.filter(id=operation.input_ids[0]).values_list("attribution", flat=True).first()
        if first is not None:
            found.add(blocks.summary_claims(first, [c["text"] for c in row.clauses]))
    return found


def _retire(principal: Principal, row: DerivedMemory, now: datetime, *, erase: bool, reason: str) -> None:
    if row.retired_at is not None and not erase:
        return  # already retired: nothing further to suppress
    operation = ReconsolidationOperation.objects.select_for_update().get(id=row.operation_id)
    installed = blocks.install(principal, _signatures(principal, row, operation), reason="owner_rejection",
                               operation_id=operation.id, now=now)
    if operation.state == "committed":
        operation.state, operation.invalidated_at, operation.revision = "invalidated", now, operation.revision + 1
        operation.reason, operation.updated_at = reason, now
        operation.save(update_fields=["state", "invalidated_at", "revision", "reason", "updated_at"])
    changes = {"status": "erased" if erase else "invalidated", "clauses": [], "subject": "", "updated_at": now,
               "revision": F("revision") + 1}
    if erase:
        changes["erased_at"] = now
    if row.retired_at is None:
        changes["retired_at"] = now
    DerivedMemory.objects.filter(id=row.id).update(**changes)
    # Generated copies (in-flight work, cached snapshots) are fenced like any erasure.
    bump_erasure_fence(principal, now)
    if erase:
        snapshot_withhold(principal=principal, copied_ids=[row.id], now=now)
    audit(principal, f"derived_{reason}", now, reason=reason, operation_id=operation.id, counts={"blocks": installed})


def derived_review(*, principal: Principal, derived_id: UUID, action: str, ceiling: str, idempotency_key: str,
                   request_sha256: str, now: Optional[datetime] = None,
                   expected_revision: Optional[int] = None) -> DerivedView:
    if action not in REVIEW_ACTIONS:
        raise Invalid("action: unknown review action")
    now = require_aware(now) if now is not None else utcnow()
    with owner_context(principal):
        lock_owner(principal)

        def act() -> None:
            row = visible_row(derived_id, ceiling, lock=True, expected_revision=expected_revision)
            if action == "not_true":
                _retire(principal, row, now, erase=False, reason="owner_not_true")
                return
            field = {"mark_reviewed": "reviewed_at", "dismiss": "dismissed_at", "not_here": "restricted_at"}[action]
            changes = {field: now, "updated_at": now}
            if action == "not_here":  # recall-visible: a new derived revision
                changes["revision"] = F("revision") + 1
            DerivedMemory.objects.filter(id=row.id).update(**changes)

        # A replay revalidates current visibility: it renders the row as it is now.
        return _once(principal, idempotency_key, request_sha256, derived_id, now, 200, act,
                     lambda: derived_get(principal=principal, derived_id=derived_id, ceiling=ceiling, now=now))


def derived_delete(*, principal: Principal, derived_id: UUID, ceiling: str, idempotency_key: str,
                   request_sha256: str, now: Optional[datetime] = None,
                   expected_revision: Optional[int] = None) -> None:
    now = require_aware(now) if now is not None else utcnow()
    with owner_context(principal):
        lock_owner(principal)

        def act() -> None:
            _retire(principal, visible_row(derived_id, ceiling, lock=True, expected_revision=expected_revision), now,
                    erase=True, reason="owner_deleted")

        _once(principal, idempotency_key, request_sha256, derived_id, now, 204, act, lambda: None)


def derived_record_usage(*, principal: Principal, derived_ids, now: datetime, gain: float) -> int:
    """Usage only (``recall.hooks.DerivedPort.credit``): raise each live projection's utility
    by ``gain``, bounded at 1.0, and stamp ``last_used_at``. Inside a caller's unit of work it
    joins that transaction, so a rolled-back citation report credits nothing."""
    with owner_context(principal):
        return DerivedMemory.objects.filter(id__in=list(derived_ids), erased_at__isnull=True).update(
            utility=Least(F("utility") + Value(gain), Value(1.0)), last_used_at=now)
