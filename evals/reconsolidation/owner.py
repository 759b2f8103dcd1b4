"""The owner who keeps up with the review queue, as the benchmarks simulate them: whenever
the queue is full they decide everything waiting, so dreaming goes on from its place and a
benchmark can measure a whole generation (what nobody decides stops at the queue bound)."""
from __future__ import annotations

from collections import Counter
from datetime import datetime

from reconsolidation import bounds
from reconsolidation.errors import Conflict, StaleInputs
from reconsolidation.selectors.review_queue import review_order
from reconsolidation.services.operations import operation_approve
from veetbot.identity import Principal


def owner_decides(principal: Principal, now: datetime) -> Counter:
    """The owner keeping up: every waiting proposal approved, highest priority first (the
    review queue's order); a proposal that can no longer apply (an overlapping merge went
    first) is decided all the same. Returns the decided proposals' kinds."""
    waiting = review_order(principal=principal, limit=bounds.RECON_REVIEW_QUEUE_MAX)
    for view in waiting:
        operation_id, revision = view.id, view.revision
        try:
            operation_approve(principal=principal, operation_id=operation_id, expected_revision=revision,
                              idempotency_key=f"owner-decides-{operation_id}", now=now)
        except (Conflict, StaleInputs):
            pass
    return Counter(view.kind for view in waiting)
