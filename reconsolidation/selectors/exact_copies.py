"""The pending exact-copy merges: the proposals the owner may approve all at once.

An exact copy is a ``merge_equivalent`` proposal recorded for the local equivalence key
(``reason="equivalence_key"``, the rules provider's exact-copy rule) whose members *still*
share that key at the revisions it recorded: the reason alone is not trusted, the current
rows are read again (``is_exact_copy``). Paraphrase merges, provider merges and anything a
source change has made stale are not exact copies and are never listed here.

The list feeds both surfaces of the bulk approval (the API and the dashboard's one button);
it returns metadata only (IDs and revisions), never source text.
"""
from __future__ import annotations

from datetime import datetime
from typing import Optional

from reconsolidation import bounds
from reconsolidation.domain import InputRef, OperationView
from reconsolidation.models import ReconsolidationOperation
from reconsolidation.providers.rules.equivalence import all_equivalent
from reconsolidation.rows import operation_view
from reconsolidation.selectors.operations import visible_under
from reconsolidation.sources import current_sources
from veetbot.clock import require_aware, utcnow
from veetbot.identity import Principal
from veetbot.rls import owner_context

EXACT_KIND = "merge_equivalent"
EXACT_REASON = "equivalence_key"  # the proposal reason of the local equivalence key


def recorded_exact(row: ReconsolidationOperation) -> bool:
    """Whether the operation was recorded as an exact-copy merge (kind and reason only)."""
    return row.kind == EXACT_KIND and row.reason == EXACT_REASON


def is_exact_copy(principal: Principal, row: ReconsolidationOperation, now: datetime) -> bool:
    """Recorded as an exact copy *and* every member is still eligible at its recorded revision
    with one equivalence key. Call inside the owner's context."""
    if not recorded_exact(row):
        return False
    refs = [InputRef(memory_id=i, content_revision=r) for i, r in zip(row.input_ids, row.input_revisions)]
    views, reasons = current_sources(principal, refs, now)
    return not reasons and len(views) >= 2 and all_equivalent(list(views.values()))


def exact_copies_pending(*, principal: Principal, ceiling: str = "restricted",
                         limit: int = bounds.RECON_OPERATIONS_PAGE_MAX,
                         now: Optional[datetime] = None) -> tuple[OperationView, ...]:
    """The pending exact-copy merges visible under ``ceiling``, oldest first, at most ``limit``."""
    now = require_aware(now) if now is not None else utcnow()
    with owner_context(principal):
        rows = visible_under(ReconsolidationOperation.objects.filter(
            state="proposed", kind=EXACT_KIND, reason=EXACT_REASON), ceiling).order_by("created_at", "id")
        found = []
        # Read a bounded window: a row that fails the re-check is skipped, not counted.
        for row in rows[: limit * 2]:
            if is_exact_copy(principal, row, now):
                found.append(operation_view(principal, row))
                if len(found) == limit:
                    break
        return tuple(found)
