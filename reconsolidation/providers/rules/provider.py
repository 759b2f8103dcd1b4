"""The local rules provider: deterministic proposals from the originals of one group.

``propose(sources)`` is a pure function — same views, same proposals, in the same order —
and the default provider. It proposes only what local rules can establish (``propose``
lists each kind): exact merges (``equivalence``), paraphrase merges (``paraphrase``;
proposals the owner approves, never committed unattended), conflict flags, ends of
superseded statements (``updates``) and extractive summaries (``summaries``).

A conflict flag records a disagreement, never which side is true, and conflicting sources
are left out of summaries: an extractive bullet list would present both sides as facts.
It always abstains from hypotheses (``infer_connection`` needs provider verification):
``HYPOTHESIS_ABSTENTION`` is the reason code callers report. Proposals name only IDs and
revisions the caller supplied; the commit revalidates all of it.
"""
from __future__ import annotations

import hashlib
import re
from typing import Sequence

from reconsolidation import bounds
from reconsolidation.domain import Proposal
from reconsolidation.providers.rules import paraphrase, summaries, updates
from reconsolidation.providers.rules.equivalence import creation_key, equivalence_classes, normalize
from reconsolidation.sources import SourceView

PROVIDER = "rules"
MODEL = "rules@1"
MODEL_IDENTITY = hashlib.sha256(
    f"provider={PROVIDER};model={MODEL};pricing={bounds.RECON_RULES_CALL_USD}".encode()).hexdigest()
HYPOTHESIS_ABSTENTION = "rules_abstain_hypothesis"
_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")


def conflict_key(view: SourceView) -> tuple:
    """Claims about the same thing: subject, claim kind, scope and the statement with every
    number masked and case folded. Members of one key that differ in polarity or in a
    number disagree."""
    return (view.subject, view.claim_kind, view.scope, _NUMBER.sub("#", normalize(view.statement)).casefold())


def conflicts(classes) -> list[tuple[tuple[SourceView, ...], str]]:
    """One conflict set per key shared by two or more equivalence classes (linear, so a
    group of 32 yields at most 16 flags, not every pair)."""
    by_key: dict[tuple, list[tuple[SourceView, ...]]] = {}
    for members in classes:
        by_key.setdefault(conflict_key(members[0]), []).append(members)
    found = []
    for grouped in by_key.values():
        if len(grouped) < 2:
            continue
        views = tuple(view for members in grouped for view in members)
        texts = {normalize(members[0].statement) for members in grouped}
        reason = "polarity_difference" if len({v.polarity for v in views}) > 1 else (
            "value_difference" if len(texts) > 1 else "")
        if reason:
            found.append((views, reason))
    return found


def _proposal(kind: str, views: Sequence[SourceView], reason: str, **extra) -> Proposal:
    inputs = tuple(view.ref for view in sorted(views, key=creation_key))
    return Proposal(kind=kind, inputs=inputs, model_identity=MODEL_IDENTITY, reason=reason, **extra)


def paraphrase_proposals(views: Sequence[SourceView]) -> list[Proposal]:
    """Merges of paraphrase sets spanning two or more equivalence classes (exact duplicates of
    a member come along: the union supersedes their exact merge when approved)."""
    classes = equivalence_classes(views)
    heads = [members[0] for members in classes]
    by_head = {members[0].memory_id: members for members in classes}
    found = []
    for group in paraphrase.classes(heads):
        members = [view for head in group for view in by_head[head.memory_id]]
        verdict = paraphrase.match(members)
        if verdict.ok and len(members) <= bounds.RECON_GROUP_MAX_MEMBERS:
            found.append(_proposal("merge_equivalent", members, verdict.match))
    return found


def propose(sources: Sequence[SourceView]) -> list[Proposal]:
    """Every proposal local rules can establish over ``sources``, in a deterministic order.

    * ``merge_equivalent`` — one per equivalence class of two or more (``equivalence``). The
      inventory's bank-wide equivalence pass plans the same merges without a group slot
      (``inventory.equivalence.plan_equivalence_merges``); whichever is recorded first stands
      and the other is refused by input idempotency (``duplicate_operation``);
    * ``merge_equivalent`` over paraphrases — one per set of two or more equivalence classes
      whose members all pass the local paraphrase guards pairwise (``paraphrase``). Its reason
      is what matched (``paraphrase.MATCH_CODES``). The owner approves it, the commit
      re-checks the guards over the current rows, and it never commits unattended
      (``writers.apply``);
    * ``flag_conflict`` — one per set of claims about the same thing (``conflict_key``) whose
      polarity or numbers differ; also one per unresolved contradiction
      ``summaries.contradictions`` finds inside a related component (``place_difference``,
      ``polarity_difference``), which then gets no summary;
    * ``end_superseded`` — one per earlier statement a later one about the same holder
      supersedes (``updates``). Approval ends that belief's validity through the memory's own
      control (``writers.apply``), and it is undoable;
    * ``summarize_related`` — one extractive summary per related component (``summaries``),
      only where it says more than recall already renders (``summaries.worth_proposing``); the
      writer keeps one live summary per holder (``writers.summary_placement``).
    """
    views = sorted(sources, key=creation_key)
    proposals = [
        _proposal("merge_equivalent", members, "equivalence_key")
        for members in equivalence_classes(views) if len(members) >= 2
    ]
    proposals.extend(paraphrase_proposals(views))
    conflicted = set()
    for members, reason in conflicts(equivalence_classes(views)):
        proposals.append(_proposal("flag_conflict", members, reason))
        conflicted.update(view.memory_id for view in members)
    calm = [view for view in views if view.memory_id not in conflicted]
    for component in summaries.components(calm):
        for members, reason in summaries.contradictions(component):
            proposals.append(_proposal("flag_conflict", members, reason))
        for old, new, reason in updates.ended(component):
            proposals.append(_proposal("end_superseded", [*old, new], reason, clauses=updates.clauses(old, new)))
        plan = summaries.plan(component)
        by_id = {view.memory_id: view for view in component}
        if plan is not None and summaries.worth_proposing(plan.clauses, by_id) is None:
            proposals.append(_proposal("summarize_related", [by_id[i] for i in plan.inputs], "extractive_summary",
                                       clauses=plan.clauses))
    return proposals
