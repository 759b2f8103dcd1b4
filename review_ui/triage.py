"""Journal triage: one page of operations, each row saying in words what it is.

A row names its kind and state, the subject(s) of its originals, the merged statement or
its first clause, how many originals support it and the reason in words — all read fresh
for this request through reconsolidation's journal selector, never cached. An operation whose required support is unavailable shows its kind and state
only (spec: "opaque history has no inferred titles, source counts or cached content").

Filters: kind (the lens), state, and subject. The subject never travels in a URL: it is
POSTed, resolved to the ID of one original that has it (``subject_token``), and the
journal's URL carries that ID only — IDs are the only variable parts of a dashboard URL.
The operation selector filters by subject and signs the cursor, bound to owner, lens, state
and subject, holding only a position.
"""
from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Optional
from uuid import UUID

from memory import selectors as memory_selectors
from memory.errors import NotFound as MemoryNotFound
from reconsolidation.errors import Invalid
from reconsolidation.domain import OPERATION_STATES
from reconsolidation.selectors import operation_views
from reconsolidation.selectors.operation_views import OwnerOperation
from reconsolidation.selectors.operations import operation_subjects
from review_ui import bounds, words
from veetbot.identity import Principal
from veetbot.rls import owner_context

CEILING = "restricted"  # the owner's own view (see review_ui.selectors)
LENSES = {  # lens slug -> (label, operation kind or None for all)
    "all": ("All", None),
    "summaries": ("Summaries", "summarize_related"),
    "connections": ("Connections", "infer_connection"),
    "conflicts": ("Conflicts", "flag_conflict"),
    "merges": ("Merges", "merge_equivalent"),
}
STATES = OPERATION_STATES
DERIVED_KINDS = ("summarize_related", "infer_connection")
SUBJECT_CHOICES_MAX = 200  # subjects offered as suggestions beside the filter


@dataclass(frozen=True)
class Card:
    id: UUID
    kind: str
    kind_label: str
    kind_phrase: str
    state: str
    state_label: str
    state_phrase: str
    revision: int
    created_at: datetime
    withheld: bool
    subjects: tuple[str, ...] = ()
    headline: str = ""
    more_clauses: int = 0
    support_count: int = 0
    reason_words: str = ""

    @property
    def derived(self) -> bool:
        return self.kind in DERIVED_KINDS

    @property
    def selectable(self) -> bool:
        """Bulk review acts on pending proposals of a known kind whose sources are all there."""
        return self.state == "proposed" and self.kind in words.KIND and not self.withheld


@dataclass(frozen=True)
class Filters:
    lens: str = "all"
    state: str = ""
    subject_id: Optional[UUID] = None
    subject: str = ""  # the resolved subject text (page body only, never a URL)

    @property
    def kind(self) -> Optional[str]:
        return LENSES[self.lens][1]


@dataclass(frozen=True)
class JournalPage:
    filters: Filters
    cards: tuple[Card, ...]
    next_cursor: Optional[str]
    subjects: tuple[str, ...] = ()

    # Kept for templates written against the older page shape.
    @property
    def lens(self) -> str:
        return self.filters.lens

    @property
    def state(self) -> str:
        return self.filters.state


def filters(principal: Principal, *, lens: str, state: str, subject: Optional[str]) -> Filters:
    """Checked filters; an unknown lens, state or subject token is ``Invalid``."""
    if lens not in LENSES:
        raise Invalid("lens: unknown")
    if state and state not in STATES:
        raise Invalid("state: unknown")
    if not subject:
        return Filters(lens=lens, state=state)
    try:
        subject_id = UUID(subject)
        with owner_context(principal):
            text = memory_selectors.memory_get(memory_id=subject_id, ceiling=CEILING).subject
    except (ValueError, MemoryNotFound):
        raise Invalid("subject: unknown")
    return Filters(lens=lens, state=state, subject_id=subject_id, subject=text)


def subject_token(principal: Principal, subject: str) -> Optional[UUID]:
    """The ID of one visible original with this subject (case-insensitive); None when no
    original has it."""
    subject = subject.strip()
    if not subject:
        return None
    with owner_context(principal):
        ids = memory_selectors.memory_ids_with_subject(subject=subject, ceiling=CEILING, limit=1)
    return ids[0] if ids else None


def _cards(principal: Principal, operations: tuple[OwnerOperation, ...]) -> tuple[Card, ...]:
    """Rows in words: each operation's allowlisted view and its originals, read in one go."""
    with owner_context(principal):
        originals = memory_selectors.memory_map(
            memory_ids=[link.memory_id for op in operations for link in op.sources], ceiling=CEILING)
    cards = []
    for op in operations:
        base = dict(id=op.id, kind=op.kind, kind_label=words.KIND.get(op.kind, op.kind),
                    kind_phrase=words.KIND_PHRASE.get(op.kind, "An operation of an unknown kind"),
                    state=op.state, state_label=words.STATE.get(op.state, op.state),
                    state_phrase=words.STATE_PHRASE.get(op.state, ""), revision=op.revision,
                    created_at=op.created_at)
        found = [originals.get(link.memory_id) for link in op.sources]
        if op.content is None or not found or any(line is None for line in found):
            cards.append(Card(**base, withheld=True))
            continue
        headline, more = _headline(op, {line.id: line for line in found})
        subjects = tuple(dict.fromkeys(line.subject for line in found if line.subject))
        cards.append(Card(**base, withheld=False, subjects=subjects, headline=headline, more_clauses=more,
                          support_count=len(found), reason_words=words.reason(op.reason)))
    return tuple(cards)


def _headline(op: OwnerOperation, by_id: dict) -> tuple[str, int]:
    """(the statement the row leads with, how many further clauses it has)."""
    first_input = by_id[op.sources[0].memory_id]
    clauses = op.content.clauses
    if op.kind == "merge_equivalent":
        return by_id.get(op.content.canonical_id, first_input).statement, 0
    if op.kind in ("summarize_related", "infer_connection"):
        # An ended summary or hypothesis keeps no text: its history is the operation.
        return (clauses[0].text, len(clauses) - 1) if clauses else ("", 0)
    if op.kind == "flag_conflict":
        return first_input.statement, len(op.sources) - 1
    return "", 0


def journal_page(principal: Principal, f: Filters, *, cursor: Optional[str] = None) -> JournalPage:
    """One page under the filters, newest first; a bad cursor is ``Invalid``."""
    page = operation_views.operation_page(principal=principal, ceiling=CEILING, cursor=cursor or None,
                                  limit=bounds.REVIEW_JOURNAL_PAGE_SIZE, kind=f.kind, state=f.state or None,
                                  subject=f.subject or None)
    return JournalPage(filters=f, cards=_cards(principal, page.items), next_cursor=page.next_cursor,
                       subjects=operation_subjects(principal=principal, ceiling=CEILING, limit=SUBJECT_CHOICES_MAX))
