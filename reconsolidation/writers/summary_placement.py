"""One live summary per holder: where a new summary proposal goes before it is recorded.

A summary is worth proposing only where it says more than recall already renders
(``summaries.worth_proposing``). Then, against the owner's live summaries (proposed or
committed) of the same holder — the subject, person or entity every input shares — or whose
support overlaps its own by a Jaccard index of ``RECON_SUMMARY_MAX_SHARED_SUPPORT`` or more:

* none: it is recorded as it is (``extractive_summary``);
* one already covers its support: nothing is recorded (``summary_exists``);
* otherwise the holder's facts are planned again as one summary over the union of their
  inputs: it replaces the holder's pending summaries (they become ``stale``, reason
  ``summary_revised``) and, when the holder has a committed summary, it is an update of that
  one (``summary_update``; approving it retires the old summary, ``writers.apply``). A union
  that no longer plans (too large, incoherent, contradictory) is refused and the older
  proposal stays.

The caller holds the owner lock, so no other writer changes the holder's summaries meanwhile;
every union input is locked and checked at its current revision like the group's own.
"""
from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Optional, Sequence
from uuid import UUID

from django.db.models.expressions import RawSQL

from memory.models import Memory
from reconsolidation import bounds
from reconsolidation.domain import ClauseDraft, InputRef
from reconsolidation.models import ReconsolidationOperation
from reconsolidation.providers.rules import summaries
from reconsolidation.sources import SourceView, current_sources
from reconsolidation.writers.apply import ProposalRefused
from veetbot.bulk import id_array
from veetbot.identity import Principal

LIVE = ("proposed", "committed")


@dataclass(frozen=True)
class Placement:
    views: dict[UUID, SourceView]  # every input of the summary to record, locked
    clauses: tuple[ClauseDraft, ...]
    reason: str  # extractive_summary | summary_revision | summary_update
    supersedes: Optional[UUID] = None  # the committed summary an update replaces
    replaced: tuple[UUID, ...] = ()  # pending summaries of the holder it replaces


@dataclass(frozen=True)
class _Live:
    row: ReconsolidationOperation
    support: frozenset[UUID]
    holder: frozenset[str]


def _support(clauses: Sequence[ClauseDraft]) -> frozenset[UUID]:
    return frozenset(memory_id for clause in clauses for memory_id in clause.source_ids)


def shares_support(a: frozenset[UUID], b: frozenset[UUID]) -> bool:
    """Whether two summaries' supports overlap by ``RECON_SUMMARY_MAX_SHARED_SUPPORT`` (a
    Jaccard index) or more: then they would ask the owner about much the same facts twice."""
    return summaries.jaccard(a, b) >= bounds.RECON_SUMMARY_MAX_SHARED_SUPPORT


def _holders_of(ids: set[UUID]) -> dict[UUID, frozenset[str]]:
    """Each original's anchors (subject and entities), read once."""
    rows = Memory.objects.filter(id__in=list(ids)).values_list("id", "subject", "entity_ids")
    return {i: frozenset((*(f"entity:{e}" for e in (entities or ())), f"subject:{subject}"))
            for i, subject, entities in rows}


# The owner's live summaries that share an input with the new one or may hold a fact of its
# holder (a subject, or an entity ID). It starts from the live summaries — at most one per
# holder, so a few hundred in a large bank — and probes one input of each by primary key: a
# summary's holder is what *every* input shares, so its first input has it. (A search of the
# holder's originals instead read every original of a 100,000-memory bank, 127 ms a
# placement, since under row-level security neither an OR of subject and entity nor the
# entities' GIN index (``&&`` is not leakproof) can use an index; probing every input of
# every live summary cost 25 lookups a summary, 40 ms a placement after 220 slices.) A
# superset: ``_live_summaries``' caller keeps the ones whose holder really meets this one.
_LIVE_SUMMARIES = """
    SELECT op.id FROM reconsolidation_reconsolidationoperation op
    WHERE op.kind = 'summarize_related' AND op.state = ANY(%s)
      AND (op.input_ids && %s::uuid[] OR EXISTS (
          SELECT 1 FROM memory_memory m
          WHERE m.id = op.input_ids[1] AND (m.subject = ANY(%s) OR m.entity_ids && %s::varchar[])))
"""


def _live_summaries(views: dict[UUID, SourceView], holder: frozenset[str]) -> list[_Live]:
    """The live summaries that share an input with this one or hold a fact of its holder."""
    rows = list(ReconsolidationOperation.objects.filter(id__in=RawSQL(_LIVE_SUMMARIES, [
        list(LIVE), id_array(views),
        [anchor[8:] for anchor in holder if anchor.startswith("subject:")],
        [anchor[7:] for anchor in holder if anchor.startswith("entity:")],
    ])).order_by("created_at", "id"))
    anchors = _holders_of({i for row in rows for i in row.input_ids})
    found = []
    for row in rows:
        held = [anchors.get(i, frozenset()) for i in row.input_ids]
        found.append(_Live(row=row, support=frozenset(UUID(str(i)) for ids in row.clause_sources for i in ids),
                           holder=frozenset.intersection(*held) if held else frozenset()))
    return found


def place(principal: Principal, views: dict[UUID, SourceView], clauses: Sequence[ClauseDraft],
          now: datetime) -> Placement:
    """Where a summary over ``views`` goes (see the module docstring); ``ProposalRefused``
    when it is not recorded."""
    why = summaries.worth_proposing(clauses, views)
    if why:
        raise ProposalRefused(why)
    holder = summaries.holder(list(views.values()))
    support = _support(clauses)
    same = [live for live in _live_summaries(views, holder) if live.holder & holder or shares_support(live.support, support)]
    if not same:
        return Placement(views=views, clauses=tuple(clauses), reason="extractive_summary")
    if any(support <= live.support for live in same):
        raise ProposalRefused("summary_exists")
    refs = {InputRef(memory_id=i, content_revision=r) for live in same
            for i, r in zip(live.row.input_ids, live.row.input_revisions)}
    extra, _gone = current_sources(principal, sorted(refs - {view.ref for view in views.values()},
                                                     key=lambda ref: str(ref.memory_id)), now, lock=True)
    union = {**extra, **views}
    if len(union) > bounds.RECON_GROUP_MAX_MEMBERS:
        raise ProposalRefused("summary_holder_too_large")
    plan = summaries.plan(list(union.values()))
    if plan is None or summaries.worth_proposing(plan.clauses, union) is not None:
        raise ProposalRefused("summary_revision_unplannable")
    revised = _support(plan.clauses)
    if any(revised <= live.support for live in same):
        raise ProposalRefused("summary_exists")
    committed = [live.row for live in same if live.row.state == "committed"]
    return Placement(
        views={i: union[i] for i in plan.inputs}, clauses=plan.clauses,
        reason="summary_update" if committed else "summary_revision",
        supersedes=committed[-1].id if committed else None,
        replaced=tuple(live.row.id for live in same if live.row.state == "proposed"),
    )
