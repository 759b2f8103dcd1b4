"""The owner's review queue: the proposals waiting for a decision, in the order that matters
most, and whether dreaming may record more.

At most ``RECON_REVIEW_QUEUE_MAX`` proposals wait at once. When the queue is full dreaming
keeps its place: no slice is claimed (``leases.claim_due``) and no proposal is recorded
(``writers.operations.commit``) until the owner approves or rejects something. The order puts
first what changes what the assistant is told: conflicts, then exact copies, paraphrase
merges, updates, then summaries by how many originals support them.
"""
from __future__ import annotations

from dataclasses import dataclass

from django.db.models import Case, F, Func, IntegerField, Value, When

from reconsolidation import bounds
from reconsolidation.domain import OperationView
from reconsolidation.models import ReconsolidationOperation
from reconsolidation.rows import operation_view
from veetbot.identity import Principal
from veetbot.rls import owner_context

# Lower ranks are reviewed first.
PRIORITY = Case(
    When(kind="flag_conflict", then=Value(0)),
    When(kind="merge_equivalent", reason="equivalence_key", then=Value(1)),
    When(kind="merge_equivalent", then=Value(2)),
    When(kind="end_superseded", then=Value(3)),
    When(reason="summary_update", then=Value(3)),
    default=Value(4), output_field=IntegerField(),
)


@dataclass(frozen=True)
class ReviewQueue:
    waiting: int
    bound: int

    @property
    def full(self) -> bool:
        return self.waiting >= self.bound


def waiting() -> int:
    """Proposals waiting for the owner (call inside the owner's context)."""
    return ReconsolidationOperation.objects.filter(state="proposed").count()


def queue_full() -> bool:
    """Whether dreaming must wait for the owner before recording more (inside the owner's
    context). Unattended mode commits what it may and queues only what it may not."""
    return waiting() >= bounds.RECON_REVIEW_QUEUE_MAX


def review_queue(*, principal: Principal) -> ReviewQueue:
    with owner_context(principal):
        return ReviewQueue(waiting=waiting(), bound=bounds.RECON_REVIEW_QUEUE_MAX)


def review_order(*, principal: Principal, limit: int) -> tuple[OperationView, ...]:
    """The waiting proposals, most important first (``PRIORITY``, then more support, then older)."""
    with owner_context(principal):
        rows = (ReconsolidationOperation.objects.filter(state="proposed")
                .annotate(rank=PRIORITY, support=Func(F("input_ids"), function="cardinality", output_field=IntegerField()))
                .order_by("rank", "-support", "created_at", "id")[:limit])
        return tuple(operation_view(principal, row) for row in rows)

