"""apply_review: verified provider candidates → the local writers (``operations.commit``).

Each candidate that passed the strict parser, local exclusions and the verifier becomes a
local ``Proposal`` over exactly the inputs it names, so every operation gets its own
dependencies and input digest. Provider text is kept only where the kind stores text, and
local rules still decide (``local_proposal``).

All commits of one group AND its completion (``claims.finish_group``) run in ONE owner
transaction, so a crash leaves neither operations nor a completion behind, and a committed
group cannot be recommitted (its claim is gone; input digests are unique). Each commit is
a savepoint: a candidate refused by local rules rolls back alone. A kill switch turned off
before the transaction ends rolls the whole group back (``deferred``). Operation IDs are
returned only after the commit.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from uuid import UUID

from reconsolidation.domain import ClauseDraft, GroupLease, InputRef, OperationView, Proposal
from reconsolidation.work.admission import CHANGED
from reconsolidation.leases import processing_enabled
from reconsolidation.providers.envelopes import Operation
from reconsolidation.providers.parser import ProposalParse
from reconsolidation.providers.verification import Review
from reconsolidation.store import ReconsolidationStore
from reconsolidation.work.group_commits import commit_proposals
from veetbot.identity import Principal
from veetbot.rls import owner_context

PROVIDER_REASON = {"merge_equivalent": "provider_merge", "summarize_related": "provider_summary",
                   "flag_conflict": "provider_conflict", "infer_connection": "provider_connection"}


@dataclass
class Applied:
    """What one group's review did, and the outcome its completion recorded."""

    recorded: list[OperationView] = field(default_factory=list)
    refused: dict[UUID, str] = field(default_factory=dict)  # envelope operation id -> reason code
    stale: int = 0
    budget: str = ""  # set when the slice's operation budget ran out midway
    outcome: str = ""
    reason: str = ""

    def decide(self) -> tuple[str, str]:
        """The group's (outcome, reason): candidates excluded because their sources changed
        count as stale, not as refused."""
        refused = [reason for reason in self.refused.values() if reason not in CHANGED]
        changed = self.stale + len(self.refused) - len(refused)
        if self.budget:
            return "deferred", self.budget
        if self.recorded:
            return "completed", ""
        if changed and not refused:
            return "stale", "sources_changed"
        return "no_change", "proposals_refused" if refused else "provider_no_change"


class _Withdrawn(Exception):
    """The kill switch withdrew admission before the group's transaction ended."""


def local_proposal(op: Operation, model_identity: str) -> Proposal:
    """The local form of one envelope operation (``ValueError`` when it has none).

    * ``merge_equivalent`` / ``flag_conflict`` — no text kept; local rules decide (equivalence
      key; two sources) and the dependencies are the record;
    * ``summarize_related`` — each clause must copy one source statement exactly
      (``summaries.check_clauses``), citing the beliefs it copies;
    * ``infer_connection`` — the one tentative clause, marked ``verified`` (it reached here
      only because the verifier said supported); ``hypotheses`` applies the local rules and
      writes the projection;
    * ``no_change`` — nothing.
    """
    if op.kind == "no_change":
        raise ValueError(op.kind)
    inputs = tuple(InputRef(memory_id=p.belief_id, content_revision=p.content_revision) for p in op.inputs)
    clauses = ()
    if op.kind in ("summarize_related", "infer_connection"):
        clauses = tuple(ClauseDraft(text=c.text, source_ids=tuple(dict.fromkeys(s.belief_id for s in c.support)))
                        for c in op.clauses)
    return Proposal(kind=op.kind, inputs=inputs, model_identity=model_identity, reason=PROVIDER_REASON[op.kind],
                    clauses=clauses, verified=op.kind == "infer_connection")


def _commit_group(store: ReconsolidationStore, principal: Principal, group_lease: GroupLease, ops: list[Operation],
                  applied: Applied, model_identity: str, now: datetime) -> None:
    """Every accepted candidate of one group (inside the caller's transaction).

    Each commit is a savepoint. A crash before the caller commits leaves nothing: the slice's
    recovery counts the group a failed attempt and its retry pays through a new reservation;
    a recommit finds its claim gone (``LeaseLost``) or its input digest taken
    (``duplicate_operation``). A merge refused because it overlaps another active set is
    replanned as their union (``replan.replan_union``), queued in the same transaction. A
    source that changed makes the candidate stale (the group is finished ``stale`` and
    replanned independently of other groups).
    """
    proposals, envelope_ids = [], []
    for op in ops:
        try:
            proposals.append(local_proposal(op, model_identity))
            envelope_ids.append(op.id)
        except ValueError:
            applied.refused[op.id] = "malformed_candidate"
    done = commit_proposals(store, principal, group_lease, proposals, now)
    applied.recorded.extend(done.recorded)
    applied.refused.update({envelope_ids[index]: reason for index, reason in done.refused.items()})
    applied.stale += done.stale
    applied.budget = done.budget


def apply_review(store: ReconsolidationStore, principal: Principal, group_lease: GroupLease, parsed: ProposalParse,
                 review: Review, *, model_identity: str, now: datetime) -> Applied:
    """Commit one group's accepted candidates and finish the group, in one transaction."""
    ours = {op.id for op in parsed.envelope.operations if op.group_id == group_lease.group_id}
    accepted = set(review.accepted)
    ops = [op for op in parsed.envelope.operations if op.id in ours and op.id in accepted and op.kind != "no_change"]
    try:
        with owner_context(principal):
            applied = Applied(refused={item.operation_id: item.reason for item in review.rejected
                                       if item.operation_id in ours})
            _commit_group(store, principal, group_lease, ops, applied, model_identity, now)
            applied.outcome, applied.reason = applied.decide()
            if not processing_enabled():
                raise _Withdrawn()
            store.finish_group(principal, group_lease, outcome=applied.outcome, reason=applied.reason, now=now)
    except _Withdrawn:
        applied = Applied(outcome="deferred", reason="disabled")
        store.finish_group(principal, group_lease, outcome=applied.outcome, reason=applied.reason, now=now)
    return applied
