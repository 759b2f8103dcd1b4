"""Journal triage: one page of operations, each row saying in words what it is.

A row names its kind and state, the subject(s) of its originals, how many originals support
it and the reason in words, and shows the decision itself: a merge's originals side by side
with the words that differ marked (``review_ui.diff``) and when each was said; every clause
of a summary, connection or update; both sides of a conflict with their dates and sources and
the owner's own memory controls on each ("No longer true", "Not true"), so one step resolves
it. All read fresh for this request through reconsolidation's journal selector, never cached. An operation whose required support is unavailable shows its kind and state
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
from reconsolidation.domain import OPERATION_STATES, OperationView
from reconsolidation.providers.rules import paraphrase
from reconsolidation.selectors import operation_views
from reconsolidation.selectors.exact_copies import exact_copies_pending
from reconsolidation.selectors.operation_views import OwnerOperation
from reconsolidation.selectors.operations import operation_subjects
from review_ui import bounds, words
from review_ui.diff import Segment, word_diff
from review_ui.forms import new_key
from veetbot.clock import utcnow
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


# The memory controls a conflict row offers on each side (review_ui.memory_views actions).
SIDE_ACTIONS = (("no_longer_true", "No longer true"), ("not_true", "Not true"))


@dataclass(frozen=True)
class Side:
    """One original as a row shows it: its words (diff-marked on a merge), when it was said,
    where it came from, and the revision its controls are checked against."""

    memory_id: UUID
    statement: str
    segments: tuple[Segment, ...]
    said_at: datetime
    attribution: str
    messages: int
    revision: int
    current: bool  # active and not ended: its controls are offered
    key: str  # a fresh idempotency key for its control forms


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
    support_count: int = 0
    reason_words: str = ""
    clauses: tuple[str, ...] = ()
    sides: tuple[Side, ...] = ()

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
    # Every pending exact-copy merge (any page), offered as one "Approve N exact copies" button.
    exact_copies: tuple[OperationView, ...] = ()

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
        headline = _headline(op, {line.id: line for line in found})
        subjects = tuple(dict.fromkeys(line.subject for line in found if line.subject))
        cards.append(Card(**base, withheld=False, subjects=subjects, headline=headline,
                          support_count=len(found),
                          reason_words=merge_reason_words(op.reason, [line.statement for line in found]),
                          clauses=tuple(c.text for c in op.content.clauses), sides=_sides(op, found)))
    return tuple(cards)


def merge_reason_words(reason: str, statements: list[str]) -> str:
    """The reason in words; a synonym merge also names each substitution it made ("wants ↔
    would like: synonyms"), recomputed from the originals as they read now, so the owner sees
    which words were taken to mean the same before approving."""
    said = words.reason(reason)
    if reason != paraphrase.MATCH_SYNONYMS:
        return said
    found = paraphrase.substitutions(statements)
    return said + "".join(f"; {a} \u2194 {b}: synonyms" for a, b in found) if found else said


def _sides(op: OwnerOperation, found: list) -> tuple[Side, ...]:
    """The originals a merge or a conflict row shows side by side (none for other kinds)."""
    if op.kind not in ("merge_equivalent", "flag_conflict"):
        return ()
    now = utcnow()
    found = sorted(found, key=lambda line: (line.evidence_at, line.creation_sequence))  # in the order said
    marked = word_diff([line.statement for line in found])
    return tuple(Side(memory_id=line.id, statement=line.statement, segments=segments, said_at=line.evidence_at,
                      attribution=line.attribution, messages=len({s.event for s in line.sources}),
                      revision=line.content_revision, key=new_key(),
                      current=line.status == "active" and (line.expires_at is None or line.expires_at > now))
                 for line, segments in zip(found, marked))


def _headline(op: OwnerOperation, by_id: dict) -> str:
    """The statement a merge row leads with (its canonical). Clauses and conflicting sides are
    shown in full below the headline, so other rows lead with none."""
    if op.kind == "merge_equivalent":
        return by_id.get(op.content.canonical_id, by_id[op.sources[0].memory_id]).statement
    return ""


def journal_page(principal: Principal, f: Filters, *, cursor: Optional[str] = None) -> JournalPage:
    """One page under the filters, newest first; a bad cursor is ``Invalid``."""
    page = operation_views.operation_page(principal=principal, ceiling=CEILING, cursor=cursor or None,
                                  limit=bounds.REVIEW_JOURNAL_PAGE_SIZE, kind=f.kind, state=f.state or None,
                                  subject=f.subject or None)
    return JournalPage(filters=f, cards=_cards(principal, page.items), next_cursor=page.next_cursor,
                       subjects=operation_subjects(principal=principal, ceiling=CEILING, limit=SUBJECT_CHOICES_MAX),
                       exact_copies=exact_copies_pending(principal=principal, ceiling=CEILING))
