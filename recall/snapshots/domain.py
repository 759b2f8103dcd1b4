"""Values of conversation snapshots: frozen references, corrections, snapshots, turns and
citation reports.

A frozen reference (``FrozenItem``) is content free: the ID the model cites, its kind, the
content revision rendered, the operation and operation revision it depended on (a merge set a
belief represented, a summary's operation) and, for a derived item, every original it was
built from. Turns and citation reports are dataclasses because they carry the planner's own
(dataclass) assembly result.
"""
from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Literal, Optional
from uuid import UUID

from recall.context.planner import ContextResult
from recall.domain import RecallItem, RecordKind, Value

# Why something the conversation was told no longer holds, most decisive first (an item gets
# the first that applies): erased (gone; named by its citation only), retracted (the owner
# said it is not true), expired, corrected (a content revision changed its subject or
# statement), withdrawn (no longer visible to this conversation: ceiling, scope, disabled
# derived recall), undone (the merge set a belief represented was undone by the owner),
# invalidated (a derived item's or merge set's support changed).
CorrectionReason = Literal["erased", "retracted", "expired", "corrected", "withdrawn", "undone", "invalidated"]
CORRECTION_REASONS: tuple[str, ...] = CorrectionReason.__args__  # type: ignore[attr-defined]
# What one reported citation did: credited (faithful, unambiguous, still valid: usage raised),
# ambiguous (a short ID naming more than one item of the turn: refused), unavailable (the
# turn's own corrections say it no longer holds), repeated (already credited for this turn).
CitationOutcome = Literal["credited", "ambiguous", "unavailable", "repeated"]
CITATION_OUTCOMES: tuple[str, ...] = CitationOutcome.__args__  # type: ignore[attr-defined]
PREFIX_TURN = 1  # the turn whose assembly is the prefix


class FrozenItem(Value):
    id: UUID
    record_kind: RecordKind
    content_revision: int
    operation_id: Optional[UUID] = None
    operation_revision: Optional[int] = None
    support_ids: tuple[UUID, ...] = ()

    @classmethod
    def of(cls, item: RecallItem) -> "FrozenItem":
        supports = {*item.support_ids, *(i for clause in item.clauses for i in clause.source_ids)}
        return cls(id=item.id, record_kind=item.record_kind, content_revision=item.content_revision,
                   operation_id=item.operation_id, operation_revision=item.operation_revision,
                   support_ids=tuple(sorted(supports, key=str)))


class Correction(Value):
    id: UUID
    record_kind: RecordKind
    reason: CorrectionReason
    changed_at: Optional[datetime] = None
    delivered_turn: int  # the turn that gave it to the model (1: the prefix)


class SnapshotView(Value):
    id: UUID
    session_id: UUID
    created_at: datetime
    prefix: str  # empty while withheld
    prefix_sha256: str  # of the prefix as frozen
    prefix_tokens: int
    prefix_withheld: bool
    items: tuple[FrozenItem, ...]
    ceiling: str
    scope: str
    selection_mode: str
    belief_types: tuple[str, ...]
    turns: int


@dataclass(frozen=True)
class TurnView:
    turn: int
    snapshot: SnapshotView
    context: str  # the turn context: new items, then any limitation notice, then corrections
    tokens: int  # of the new items' rendering
    items: tuple[RecallItem, ...]
    corrections: tuple[Correction, ...]
    notices: tuple[str, ...]
    assembly: ContextResult


class CitedItem(Value):
    citation: str
    outcome: CitationOutcome
    id: Optional[UUID] = None  # the one item it names (None when ambiguous)
    record_kind: Optional[RecordKind] = None


class CitationReportView(Value):
    id: UUID
    session_id: UUID
    turn: int
    created_at: datetime
    citations: tuple[CitedItem, ...]
