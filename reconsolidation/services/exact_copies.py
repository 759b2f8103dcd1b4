"""Approve several exact-copy merges in one request — and nothing else.

Exact copies are the cheapest decision an owner makes (the same words, the same subject,
type, scope and attribution), so both surfaces offer them as one step. Each operation is
still approved by the ordinary ``operation_act`` (revision-checked against what the owner
saw, revalidated, idempotent through a receipt), one unit of work per operation so one
stale item never holds back its siblings. Before approving, the operation must be visible
under the caller's ceiling and still be an exact copy over the current rows
(``selectors.exact_copies.is_exact_copy``): a paraphrase merge, a summary or a conflict
sent here is answered ``not_exact_copy`` and left alone.

Idempotency: the request's own key holds a receipt of the whole body (the same key with
another body is ``KeyReused``); each operation is approved under a key derived from it and
the operation ID, so a resubmission replays every item already approved and completes the
rest. Answers carry IDs, revisions and outcome codes only.
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass
from datetime import datetime
from typing import Optional
from uuid import UUID

from memory.services.owner_state import lock_owner
from memory.services.receipts import receipt_record, receipt_replay, request_sha256
from reconsolidation import bounds
from reconsolidation.errors import Conflict, Invalid, NotFound, StaleInputs
from reconsolidation.models import ReconsolidationOperation
from reconsolidation.selectors.exact_copies import is_exact_copy
from reconsolidation.selectors.operations import visible_under
from reconsolidation.services.operations import operation_act
from veetbot.clock import require_aware, utcnow
from veetbot.identity import Principal
from veetbot.rls import owner_context

BATCH_KIND = "recon_exact_batch"  # the receipt of the whole request (no resource of its own)
OUTCOMES = ("approved", "replayed", "stale_revision", "not_pending", "sources_changed", "conflict",
            "not_exact_copy", "not_found")
_CONFLICTS = {"stale_revision": "stale_revision", "not_proposed": "not_pending"}


@dataclass(frozen=True)
class ExactApproval:
    """One operation's answer: its outcome code and its revision now (None when not found)."""

    operation_id: UUID
    outcome: str
    revision: Optional[int]

    @property
    def approved(self) -> bool:
        return self.outcome in ("approved", "replayed")


def _check(expected: dict, idempotency_key: str) -> None:
    if (not isinstance(idempotency_key, str) or not idempotency_key.strip()
            or len(idempotency_key) > bounds.RECON_IDEMPOTENCY_KEY_MAX_CHARS):
        raise Invalid(f"Idempotency-Key: nonblank, at most {bounds.RECON_IDEMPOTENCY_KEY_MAX_CHARS} characters")
    if not isinstance(expected, dict) or not 1 <= len(expected) <= bounds.RECON_OPERATIONS_PAGE_MAX:
        raise Invalid(f"operations: 1 to {bounds.RECON_OPERATIONS_PAGE_MAX}")
    for operation_id, revision in expected.items():
        if (not isinstance(operation_id, UUID) or not isinstance(revision, int) or isinstance(revision, bool)
                or revision < 1):
            raise Invalid("operations: an ID and a positive revision each")


def _item_key(idempotency_key: str, operation_id: UUID) -> str:
    """The key one operation is approved under: fixed by the request's key and the ID."""
    return "exact-copies:" + hashlib.sha256(f"{idempotency_key}\n{operation_id}".encode()).hexdigest()


def _approve_one(principal: Principal, operation_id: UUID, revision: int, key: str, ceiling: str,
                 now: datetime) -> ExactApproval:
    with owner_context(principal):
        lock_owner(principal)
        row = visible_under(ReconsolidationOperation.objects.filter(id=operation_id), ceiling).first()
        if row is None:
            return ExactApproval(operation_id=operation_id, outcome="not_found", revision=None)
        # Only what would be approved is judged: a replay, a decided or a stale-revision item
        # gets the ordinary approval's answer, which approves nothing.
        pending_as_seen = row.state == "proposed" and row.revision == revision
        if pending_as_seen and not is_exact_copy(principal, row, now):
            return ExactApproval(operation_id=operation_id, outcome="not_exact_copy", revision=row.revision)
        try:
            acted = operation_act(principal=principal, action="approve", operation_id=operation_id,
                                  expected_revision=revision, idempotency_key=_item_key(key, operation_id), now=now)
        except NotFound:
            return ExactApproval(operation_id=operation_id, outcome="not_found", revision=None)
        except StaleInputs:
            outcome = "sources_changed"
        except Conflict as exc:
            outcome = _CONFLICTS.get(str(exc), "conflict")
        else:
            return ExactApproval(operation_id=operation_id, outcome="replayed" if acted.replayed else "approved",
                                 revision=acted.operation.revision)
        current = ReconsolidationOperation.objects.filter(id=operation_id).values_list("revision", flat=True).first()
        return ExactApproval(operation_id=operation_id, outcome=outcome, revision=current)


def operations_approve_exact(*, principal: Principal, expected: dict[UUID, int], idempotency_key: str,
                             ceiling: str = "restricted", now: Optional[datetime] = None
                             ) -> tuple[ExactApproval, ...]:
    """Approve each pending exact-copy merge in ``expected`` (ID -> the revision the owner
    saw); one answer per ID, in the order given."""
    _check(expected, idempotency_key)
    now = require_aware(now) if now is not None else utcnow()
    request = request_sha256(route="reconsolidation.approve_exact_copies", params={"ceiling": ceiling},
                             body={"operations": sorted([str(i), r] for i, r in expected.items())})
    with owner_context(principal):
        lock_owner(principal)
        if receipt_replay(idempotency_key, request, BATCH_KIND) is None:
            receipt_record(principal, idempotency_key, request, status_code=200, resource_kind=BATCH_KIND,
                           resource_id=None, now=now)
    return tuple(_approve_one(principal, operation_id, revision, idempotency_key, ceiling, now)
                 for operation_id, revision in expected.items())
