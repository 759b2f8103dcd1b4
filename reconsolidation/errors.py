"""Failures of reconsolidation's store. Messages are fixed phrases and reason codes,
never source text, provider prose or another owner's identifiers.

Conflicts subclass ``memory.errors.Conflict`` so the API's one envelope maps them to
``conflict`` without a second translation table. Every conflict is raised *before* any
write of the failing unit of work (or rolls it back), so a conflict never mutates.
"""
from __future__ import annotations

from memory.errors import Conflict, Invalid, MemoryError_, NotFound

__all__ = [
    "BudgetExhausted", "Conflict", "DuplicateReservation", "FenceLost", "Invalid", "LeaseLost", "QueueFull",
    "NotFound", "ReconsolidationDisabled", "ReconsolidationError", "StaleInputs",
]


class ReconsolidationError(MemoryError_):
    """Base class of the failures below that are not conflicts."""


class ReconsolidationDisabled(ReconsolidationError):
    """The processing kill switch is off: no new slice, group claim or provider admission."""

    def __init__(self) -> None:
        super().__init__("reconsolidation processing is disabled")


class LeaseLost(Conflict):
    """The lease token is not the job's current, unexpired lease (expired, taken over, released)."""

    def __init__(self, reason: str = "lease_lost") -> None:
        self.reason = reason
        super().__init__(reason)


class StaleInputs(Conflict):
    """A source's content revision, lifecycle or evidence no longer matches the expected input."""

    def __init__(self, reason: str = "stale_inputs") -> None:
        self.reason = reason
        super().__init__(reason)


class FenceLost(Conflict):
    """The owner's erasure fence moved since the work was queued."""

    def __init__(self) -> None:
        self.reason = "fence_lost"
        super().__init__("fence_lost")


class DuplicateReservation(Conflict):
    """A reservation for this request digest already exists in this slice: never send twice."""

    def __init__(self) -> None:
        self.reason = "duplicate_reservation"
        super().__init__("duplicate_reservation")


class BudgetExhausted(ReconsolidationError):
    """The request does not fit the slice or daily headroom: the group is deferred, not failed."""

    def __init__(self, reason: str) -> None:
        self.reason = reason  # slice_budget | daily_budget | above_slice_ceiling
        super().__init__(reason)


class QueueFull(ReconsolidationError):
    """Pending model work is at its per-owner cap: selection pauses, the cursor is kept."""

    def __init__(self) -> None:
        self.reason = "pending_cap"
        super().__init__("pending_cap")


class ReviewQueueFull(ReconsolidationError):
    """As many proposals wait for the owner's review as ``RECON_REVIEW_QUEUE_MAX`` allows: nothing
    new is recorded (the group waits, the cursors keep their place) until the owner decides."""

    def __init__(self) -> None:
        self.reason = "review_queue_full"
        super().__init__("review_queue_full")
