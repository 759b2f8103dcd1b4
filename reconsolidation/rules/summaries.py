"""Extractive summaries: whole source statements under a fixed heading, nothing invented.

A summary supplements its atoms; it never replaces them. Its rules:

* It needs at least two distinct supporting originals that are *related* (same subject or
  a shared entity ID) but *not equivalent* (equivalent ones are merges, not summaries),
  with one scope and one attribution: conflicting scopes or attributions abstain rather
  than pick the broader one.
* At most ``RECON_SUMMARY_MAX_CLAUSES`` clauses; each is exactly (after the equivalence
  normalisation: NFC + whitespace collapse) the statement of every source it names.
* ``render`` — the fixed heading, one bullet per clause — must fit in
  ``RECON_SUMMARY_MAX_CHARS``. A clause that does not fit is omitted whole (never cut),
  later ones still get their chance, and the omitted sources are listed; they remain
  inputs, hence dependencies, so their change still invalidates the summary.
* Metadata is inherited conservatively: the strictest sensitivity and portability, the
  weakest authority and confidence, the latest original evidence clock (never the commit
  time), the latest validity start and the earliest expiry.

Pure functions over ``SourceView`` values; ``check_clauses`` is the commit-time validation
of a proposal's clauses against the locked sources.
"""
from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Optional, Sequence
from uuid import UUID

from memory import vocabulary
from reconsolidation import bounds
from reconsolidation.domain import ClauseDraft
from reconsolidation.rules.equivalence import creation_key, normalize
from reconsolidation.pipeline.sources import SourceView

HEADING = "Summary of related memories:"
BULLET = "- "
MIXED_BELIEF_TYPES = "mixed"


def render(texts: Sequence[str]) -> str:
    return "\n".join([HEADING, *(BULLET + text for text in texts)])


@dataclass(frozen=True)
class SummaryPlan:
    clauses: tuple[ClauseDraft, ...]
    inputs: tuple[UUID, ...]  # every source considered: clause support and omitted ones
    omitted: tuple[UUID, ...]  # inputs that support no clause

    @property
    def text(self) -> str:
        return render([clause.text for clause in self.clauses])


@dataclass(frozen=True)
class Projection:
    """The inherited metadata of a summary over ``views`` (all of its inputs)."""

    subject: str
    belief_type: str
    sensitivity: str
    scope: str
    portable: bool
    authority: str
    confidence: float
    evidence_at: datetime
    valid_from: datetime
    expires_at: Optional[datetime]


def related(a: SourceView, b: SourceView) -> bool:
    return a.subject == b.subject or bool(set(a.entity_ids) & set(b.entity_ids))


def components(views: Sequence[SourceView]) -> list[tuple[SourceView, ...]]:
    """Connected components of ``related`` within one scope and attribution, in creation
    order. Groups hold at most 32 views, so the pairwise pass is bounded."""
    ordered = sorted(views, key=creation_key)
    parent = list(range(len(ordered)))

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for i, a in enumerate(ordered):
        for j in range(i + 1, len(ordered)):
            b = ordered[j]
            if a.scope == b.scope and a.attribution == b.attribution and related(a, b):
                parent[root(j)] = root(i)
    found: dict[int, list[SourceView]] = {}
    for i, view in enumerate(ordered):
        found.setdefault(root(i), []).append(view)
    return [tuple(members) for members in found.values()]


def statement_classes(views: Sequence[SourceView]) -> list[tuple[SourceView, ...]]:
    """Views grouped by normalised statement (a clause and its support), each ordered by
    creation key, the classes in the creation order of their oldest member."""
    found: dict[str, list[SourceView]] = {}
    for view in sorted(views, key=creation_key):
        found.setdefault(normalize(view.statement), []).append(view)
    return list(found.values())


def plan(views: Sequence[SourceView], *, max_chars: int = bounds.RECON_SUMMARY_MAX_CHARS,
         max_clauses: int = bounds.RECON_SUMMARY_MAX_CLAUSES) -> Optional[SummaryPlan]:
    """The summary of one component, or None (fewer than two non-equivalent clauses fit)."""
    classes = statement_classes(views)
    if len(classes) < 2 or len(components(views)) != 1:  # one scope, attribution and related set
        return None
    clauses: list[ClauseDraft] = []
    for members in classes:
        if len(clauses) == max_clauses:
            break
        text = normalize(members[0].statement)
        if not text or len(render([*(c.text for c in clauses), text])) > max_chars:
            continue  # omitted whole; a shorter later clause may still fit
        clauses.append(ClauseDraft(text=text, source_ids=tuple(view.memory_id for view in members)))
    if len(clauses) < 2:
        return None
    supported = {memory_id for clause in clauses for memory_id in clause.source_ids}
    inputs = tuple(view.memory_id for view in sorted(views, key=creation_key))
    return SummaryPlan(clauses=tuple(clauses), inputs=inputs,
                       omitted=tuple(memory_id for memory_id in inputs if memory_id not in supported))


def projection(views: Sequence[SourceView]) -> Projection:
    rank = vocabulary.SENSITIVITY_RANK
    subjects = {view.subject for view in views}
    types = {view.belief_type for view in views}
    expiries = [view.expires_at for view in views if view.expires_at is not None]
    return Projection(
        subject=subjects.pop() if len(subjects) == 1 else "",
        belief_type=types.pop() if len(types) == 1 else MIXED_BELIEF_TYPES,
        sensitivity=max((view.sensitivity for view in views), key=rank.__getitem__),
        scope=views[0].scope,
        portable=all(view.portable for view in views),
        authority=max((view.authority for view in views), key=vocabulary.AUTHORITIES.index),
        confidence=min(view.confidence for view in views),
        evidence_at=max(view.evidence_at for view in views),
        valid_from=max(view.valid_from for view in views),
        expires_at=min(expiries) if expiries else None,
    )


def check_clauses(clauses: Sequence[ClauseDraft], views: dict[UUID, SourceView], *,
                  max_chars: int = bounds.RECON_SUMMARY_MAX_CHARS,
                  max_clauses: int = bounds.RECON_SUMMARY_MAX_CLAUSES) -> Optional[str]:
    """Why these clauses cannot be committed over ``views`` (a reason code), or None."""
    if not 2 <= len(clauses) <= max_clauses:
        return "summary_clause_count"
    if len(render([clause.text for clause in clauses])) > max_chars:
        return "summary_too_long"
    if len({(v.scope, v.attribution) for v in views.values()}) != 1:
        return "summary_mixed_scope"
    texts = set()
    for clause in clauses:
        if not clause.source_ids or not set(clause.source_ids) <= set(views):
            return "summary_foreign_source"
        text = normalize(clause.text)
        if any(normalize(views[memory_id].statement) != text for memory_id in clause.source_ids):
            return "summary_not_extractive"
        if text in texts:
            return "summary_not_distinct"
        texts.add(text)
    ordered = list(views.values())
    if len(components(ordered)) != 1:
        return "summary_unrelated"
    return None
