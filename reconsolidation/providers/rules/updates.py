"""Updates: a later statement about the same holder that supersedes an earlier one ("moved to
Porto" after "lives in Rotterdam") is proposed as *the earlier belief ended* (``end_superseded``).

The supersession rules are the summaries' (``summaries.supersedes``: general English structure
only, never a bank's names). A proposal names the earlier statement's class (every copy of it)
and the newest statement that supersedes it; its clauses are those two, in that order. It is
offered only while the earlier belief is still valid when the later one begins, and it ends
the earlier one at the later one's validity start (its evidence time when both start
together). Approving it applies the memory's own control — a revision that sets the expiry —
never a rewrite of the statement; it is undoable, and historical recall before the approval
still sees the earlier belief (revisions are read as of their instant).
"""
from __future__ import annotations

from datetime import datetime
from typing import Optional, Sequence
from uuid import UUID

from reconsolidation.domain import ClauseDraft
from reconsolidation.providers.rules import summaries
from reconsolidation.providers.rules.equivalence import normalize
from reconsolidation.sources import SourceView


def end_of(old: Sequence[SourceView], new: SourceView) -> Optional[datetime]:
    """When the earlier belief ends: the later one's validity start, else its evidence time;
    None when neither lies after every earlier copy's start, or every copy already ended."""
    start = max(view.valid_from for view in old)
    for candidate in (new.valid_from, new.evidence_at):
        if candidate > start:
            if all(view.expires_at is not None and view.expires_at <= candidate for view in old):
                return None  # already over by then: nothing to end
            return candidate
    return None


def ended(views: Sequence[SourceView]) -> list[tuple[tuple[SourceView, ...], SourceView, str]]:
    """(every copy of an earlier statement, the newest statement superseding it, the reason) of
    one coherent component, earliest first."""
    classes = summaries.statement_classes(views)
    claims = [summaries.claim(members) for members in classes]
    newer = summaries.supersessions(claims)
    found = []
    for i, later in newer.items():
        if not later:
            continue
        j = max(later, key=lambda k: claims[k].at)
        reason = summaries.supersedes(claims[j], claims[i])
        new = classes[j][0]
        if reason and end_of(classes[i], new) is not None:
            found.append((tuple(classes[i]), new, reason))
    return found


def clauses(old: Sequence[SourceView], new: SourceView) -> tuple[ClauseDraft, ClauseDraft]:
    return (ClauseDraft(text=normalize(old[0].statement), source_ids=tuple(view.memory_id for view in old)),
            ClauseDraft(text=normalize(new.statement), source_ids=(new.memory_id,)))


def check(clause_drafts: Sequence[ClauseDraft], views: dict[UUID, SourceView]) -> Optional[str]:
    """Why an update cannot be recorded or applied over ``views`` (a reason code), or None."""
    if len(clause_drafts) != 2 or len(clause_drafts[1].source_ids) != 1:
        return "update_shape"
    old_ids, (new_id,) = clause_drafts[0].source_ids, clause_drafts[1].source_ids
    if not old_ids or not set(old_ids) | {new_id} <= set(views) or new_id in old_ids:
        return "update_foreign_source"
    old = [views[i] for i in old_ids]
    if len({normalize(view.statement) for view in old}) != 1:
        return "update_not_one_statement"
    if not summaries.supersedes(summaries.claim([views[new_id]]), summaries.claim(old)):
        return "update_not_superseded"
    if end_of(old, views[new_id]) is None:
        return "update_already_ended"
    return None
