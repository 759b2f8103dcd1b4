"""Journal triage: one page of operations, each row saying in words what it is.

A row names its kind and state, the subject(s) of its originals, the merged statement or
its first clause, how many originals support it and the reason in words — all read fresh
for this request, in one read per table (operations, originals, derived projections),
never cached. An operation whose required support is unavailable shows its kind and state
only (spec: "opaque history has no inferred titles, source counts or cached content").

Filters: kind (the lens), state, and subject. The subject never travels in a URL: it is
POSTed, resolved to the ID of one original that has it (``subject_token``), and the
journal's URL carries that ID only — IDs are the only variable parts of a dashboard URL.
Without a subject the reader's own cursor pages (``reconsolidation.owner.reads``); with one, the
rows are the operations with an input of that subject, paged by a cursor of this module
(signed, bound to owner, lens, state and subject, holding only a position).
"""
from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from datetime import datetime
from typing import Optional
from uuid import UUID

from django.core import signing

from memory import selectors as memory_selectors
from memory.errors import NotFound as MemoryNotFound
from reconsolidation.domain import OperationView
from reconsolidation.errors import Invalid
from reconsolidation.models import OPERATION_STATES, DerivedMemory, ReconsolidationMember, ReconsolidationOperation
from reconsolidation.owner import reads
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
SALT = "review_ui.journal.subject.v1"
MAX_CURSOR_CHARS = 512
SUBJECT_MATCH_MAX_ORIGINALS = 5000  # originals one subject filter looks for among inputs
SUBJECT_CHOICES_MAX = 200  # subjects offered as suggestions beside the filter
RECENT_OPERATIONS_FOR_SUGGESTIONS = 500


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
    """The ID of one visible original with this subject (case-insensitive), preferring one
    that some operation reads; None when no original has it."""
    subject = subject.strip()
    if not subject:
        return None
    with owner_context(principal):
        ids = memory_selectors.memory_ids_with_subject(subject=subject, ceiling=CEILING,
                                                      limit=SUBJECT_MATCH_MAX_ORIGINALS)
        if not ids:
            return None
        used = ReconsolidationOperation.objects.filter(input_ids__overlap=ids).values_list("input_ids", flat=True).first()
    return next((i for i in ids if used and i in used), ids[0])


def _fingerprint(principal: Principal, f: Filters) -> str:
    payload = json.dumps({"o": principal.label, "l": f.lens, "s": f.state, "j": str(f.subject_id)}, sort_keys=True)
    return hashlib.sha256(payload.encode()).hexdigest()


def _decode(cursor: str, bound_to: str) -> tuple[datetime, UUID]:
    if len(cursor) > MAX_CURSOR_CHARS:
        raise Invalid("cursor: invalid")
    try:
        payload = signing.loads(cursor, salt=SALT)
        after, last, bound = datetime.fromisoformat(payload["t"]), UUID(payload["i"]), payload["f"]
    except (signing.BadSignature, KeyError, TypeError, ValueError):
        raise Invalid("cursor: invalid")
    if bound != bound_to:
        raise Invalid("cursor: does not match this request")
    return after, last


def _subject_page(principal: Principal, f: Filters, cursor: Optional[str], limit: int) -> tuple[list[OperationView], Optional[str]]:
    bound_to = _fingerprint(principal, f)
    with owner_context(principal):
        ids = memory_selectors.memory_ids_with_subject(subject=f.subject, ceiling=CEILING,
                                                      limit=SUBJECT_MATCH_MAX_ORIGINALS)
        rows = ReconsolidationOperation.objects.filter(input_ids__overlap=ids)
        if f.kind:
            rows = rows.filter(kind=f.kind)
        if f.state:
            rows = rows.filter(state=f.state)
        if cursor:
            after, last = _decode(cursor, bound_to)
            table = ReconsolidationOperation._meta.db_table
            rows = rows.extra(where=[f"({table}.created_at, {table}.id) < (%s, %s)"], params=[after, last])
        found = list(rows.order_by("-created_at", "-id").values_list("id", "created_at")[: limit + 1])
    page = found[:limit]
    views = [reads.get_operation(principal, op_id, ceiling=CEILING) for op_id, _ in page]
    next_cursor = None
    if len(found) > limit:
        last_id, last_at = page[-1]
        next_cursor = signing.dumps({"t": last_at.isoformat(), "i": str(last_id), "f": bound_to}, salt=SALT)
    return views, next_cursor


def _cards(principal: Principal, views: list[OperationView]) -> tuple[Card, ...]:
    """Rows in words, from one read per table."""
    op_ids = [v.id for v in views]
    with owner_context(principal):
        originals = memory_selectors.memory_map(memory_ids=[r.memory_id for v in views for r in v.inputs],
                                                ceiling=CEILING)
        clause_sources = dict(ReconsolidationOperation.objects.filter(id__in=op_ids)
                              .values_list("id", "clause_sources"))
        canonical = dict(ReconsolidationMember.objects.filter(operation_id__in=op_ids)
                         .values_list("operation_id", "canonical_id"))
        projections = dict(DerivedMemory.objects.filter(operation_id__in=op_ids).exclude(status="erased")
                           .values_list("operation_id", "clauses"))
    cards = []
    for view in views:
        base = dict(id=view.id, kind=view.kind, kind_label=words.KIND.get(view.kind, view.kind),
                    kind_phrase=words.KIND_PHRASE.get(view.kind, "An operation of an unknown kind"),
                    state=view.state, state_label=words.STATE.get(view.state, view.state),
                    state_phrase=words.STATE_PHRASE.get(view.state, ""), revision=view.revision,
                    created_at=view.created_at)
        found = [originals.get(ref.memory_id) for ref in view.inputs]
        if not found or any(line is None for line in found):
            cards.append(Card(**base, withheld=True))
            continue
        by_id = {line.id: line for line in found}
        headline, more = _headline(view, by_id, clause_sources.get(view.id) or [], canonical.get(view.id),
                                   projections.get(view.id))
        subjects = tuple(dict.fromkeys(line.subject for line in found if line.subject))
        cards.append(Card(**base, withheld=False, subjects=subjects, headline=headline, more_clauses=more,
                          support_count=len(found), reason_words=words.reason(view.reason)))
    return tuple(cards)


def _headline(view: OperationView, by_id: dict, clause_sources: list, canonical: Optional[UUID],
              projection: Optional[list]) -> tuple[str, int]:
    """(the statement the row leads with, how many further clauses it has)."""
    if view.kind == "merge_equivalent":
        head = by_id.get(canonical) or by_id[view.inputs[0].memory_id]
        return head.statement, 0
    if view.kind == "summarize_related" and clause_sources:
        first = by_id.get(UUID(str(clause_sources[0][0])))
        return (first.statement if first else ""), len(clause_sources) - 1
    if view.kind == "infer_connection":
        if projection:
            return projection[0].get("text", ""), len(projection) - 1
        return "", 0  # an ended hypothesis keeps no text: its history is the operation
    if view.kind == "flag_conflict":
        return by_id[view.inputs[0].memory_id].statement, len(view.inputs) - 1
    return "", 0


def _suggestions(principal: Principal) -> tuple[str, ...]:
    with owner_context(principal):
        recent = ReconsolidationOperation.objects.order_by("-created_at", "-id").values_list("input_ids", flat=True)
        ids = {i for row in recent[:RECENT_OPERATIONS_FOR_SUGGESTIONS] for i in row}
        return tuple(memory_selectors.memory_subjects(ceiling=CEILING, memory_ids=ids, limit=SUBJECT_CHOICES_MAX))


def journal_page(principal: Principal, f: Filters, *, cursor: Optional[str] = None) -> JournalPage:
    """One page under the filters, newest first; a bad cursor is ``Invalid``."""
    limit = bounds.REVIEW_JOURNAL_PAGE_SIZE
    if f.subject_id is None:
        page = reads.list_operations(principal, ceiling=CEILING, cursor=cursor or None, limit=limit, kind=f.kind,
                                     state=f.state or None)
        views, next_cursor = list(page.items), page.next_cursor
    else:
        views, next_cursor = _subject_page(principal, f, cursor or None, limit)
    return JournalPage(filters=f, cards=_cards(principal, views), next_cursor=next_cursor,
                       subjects=_suggestions(principal))
