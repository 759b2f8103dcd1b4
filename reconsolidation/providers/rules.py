"""The local rules provider: deterministic proposals from the originals of one group.

``propose(sources)`` is a pure function — same views, same proposals, in the same order —
and the default provider of the maintenance pipeline. It proposes only what local rules
can establish:

* ``merge_equivalent`` — one per equivalence class of two or more (``equivalence``);
* ``flag_conflict`` — one per pair with the same subject and claim kind whose polarity
  differs, or whose statements differ only in a number/quantity (a value difference). It
  records the disagreement, never which side is true. Conflicting sources are left out of
  summaries: an extractive bullet list would present both sides as facts;
* ``summarize_related`` — one extractive summary per related component (``summaries``).

It always abstains from hypotheses (``infer_connection`` needs provider verification):
``HYPOTHESIS_ABSTENTION`` is the reason code callers report. Proposals name only IDs and
revisions the caller supplied; the commit revalidates all of it.
"""
from __future__ import annotations

import hashlib
import re
from itertools import combinations
from typing import Sequence

from reconsolidation import bounds, summaries
from reconsolidation.domain import Proposal
from reconsolidation.equivalence import canonical, creation_key, equivalence_classes, normalize
from reconsolidation.sources import SourceView

PROVIDER = "rules"
MODEL = "rules@1"
MODEL_IDENTITY = hashlib.sha256(
    f"provider={PROVIDER};model={MODEL};pricing={bounds.RECON_RULES_CALL_USD}".encode()).hexdigest()
HYPOTHESIS_ABSTENTION = "rules_abstain_hypothesis"
_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")


def _conflicting(a: SourceView, b: SourceView) -> str:
    """The reason code of a conflict between two originals, or ''."""
    if a.subject != b.subject or a.claim_kind != b.claim_kind or a.scope != b.scope:
        return ""
    left, right = normalize(a.statement), normalize(b.statement)
    if a.polarity != b.polarity:
        return "polarity_difference"
    if left != right and _NUMBER.sub("#", left) == _NUMBER.sub("#", right):
        return "value_difference"
    return ""


def _proposal(kind: str, views: Sequence[SourceView], reason: str, **extra) -> Proposal:
    inputs = tuple(view.ref for view in sorted(views, key=creation_key))
    return Proposal(kind=kind, inputs=inputs, model_identity=MODEL_IDENTITY, reason=reason, **extra)


def propose(sources: Sequence[SourceView]) -> list[Proposal]:
    views = sorted(sources, key=creation_key)
    proposals = [
        _proposal("merge_equivalent", members, "equivalence_key")
        for members in equivalence_classes(views) if len(members) >= 2
    ]
    # Conflicts between classes (compared through their canonicals, reported over all members).
    classes = equivalence_classes(views)
    conflicted = set()
    for left, right in combinations(classes, 2):
        reason = _conflicting(canonical(left), canonical(right))
        if reason:
            proposals.append(_proposal("flag_conflict", (*left, *right), reason))
            conflicted.update(view.memory_id for view in (*left, *right))
    calm = [view for view in views if view.memory_id not in conflicted]
    for component in summaries.components(calm):
        plan = summaries.plan(component)
        if plan is not None:
            by_id = {view.memory_id: view for view in component}
            proposals.append(_proposal("summarize_related", [by_id[i] for i in plan.inputs], "extractive_summary",
                                       clauses=plan.clauses))
    return proposals
