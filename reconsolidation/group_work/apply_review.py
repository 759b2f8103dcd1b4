"""apply_review: verified provider candidates → the local writers (``operations.commit``).

Input is the batch review (``providers.verification.review``): the candidates that passed
the strict parser, local exclusions and the verifier. Each becomes a local ``Proposal``
over exactly the inputs it names (a subset of the claimed group, at their revisions), so
every operation gets its own complete subset dependencies and its own input digest. The
provider's clause text matters only where the kind stores text:

* ``merge_equivalent`` / ``flag_conflict`` — no text kept; local rules decide (equivalence
  key; two sources) and the dependencies are the record;
* ``summarize_related`` — each clause must copy one source statement exactly
  (``summaries.check_clauses``), citing the beliefs it copies;
* ``infer_connection`` — the one tentative clause, marked ``verified`` (it reached here
  only because the verifier said supported); ``hypotheses`` applies the local rules and
  writes the projection;
* ``no_change`` — nothing.

All commits of one group run in ONE owner transaction; each commit is a savepoint, so a
candidate refused by local rules rolls back alone and its valid siblings survive. A source
that changed makes the candidate stale (the group is then finished ``stale`` and replanned
independently of other groups). Replay cannot recommit: the input digest of a committed
operation is unique per policy and kind (``duplicate_operation``).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from uuid import UUID

from reconsolidation.domain import ClauseDraft, GroupLease, InputRef, OperationView, Proposal
from reconsolidation.errors import BudgetExhausted, Conflict, Invalid, LeaseLost, StaleInputs
from reconsolidation.providers.envelopes import Operation
from reconsolidation.providers.parser import ProposalParse
from reconsolidation.providers.verification import Review
from reconsolidation.pipeline.store import ReconsolidationStore
from reconsolidation.writers.apply import ProposalRefused
from veetbot.identity import Principal
from veetbot.rls import owner_context

PROVIDER_REASON = {"merge_equivalent": "provider_merge", "summarize_related": "provider_summary",
                   "flag_conflict": "provider_conflict", "infer_connection": "provider_connection"}


@dataclass
class Applied:
    recorded: list[OperationView] = field(default_factory=list)
    refused: dict[UUID, str] = field(default_factory=dict)  # envelope operation id -> reason code
    stale: int = 0
    budget: str = ""  # set when the slice's operation budget ran out midway


def local_proposal(op: Operation, model_identity: str) -> Proposal:
    """The local form of one envelope operation (``ValueError`` when it has none)."""
    if op.kind == "no_change":
        raise ValueError(op.kind)
    inputs = tuple(InputRef(memory_id=p.belief_id, content_revision=p.content_revision) for p in op.inputs)
    clauses = ()
    if op.kind in ("summarize_related", "infer_connection"):
        clauses = tuple(ClauseDraft(text=c.text, source_ids=tuple(dict.fromkeys(s.belief_id for s in c.support)))
                        for c in op.clauses)
    return Proposal(kind=op.kind, inputs=inputs, model_identity=model_identity, reason=PROVIDER_REASON[op.kind],
                    clauses=clauses, verified=op.kind == "infer_connection")


def apply_review(store: ReconsolidationStore, principal: Principal, group_lease: GroupLease, parsed: ProposalParse,
                 review: Review, *, model_identity: str, now: datetime) -> Applied:
    applied = Applied(refused={item.operation_id: item.reason for item in review.rejected})
    accepted = set(review.accepted)
    ops = [op for op in parsed.envelope.operations
           if op.id in accepted and op.group_id == group_lease.group_id and op.kind != "no_change"]
    with owner_context(principal):
        for op in ops:
            try:
                proposal = local_proposal(op, model_identity)
            except ValueError:
                applied.refused[op.id] = "malformed_candidate"
                continue
            try:
                applied.recorded.append(store.commit(
                    principal, group_lease, expected_inputs=group_lease.inputs,
                    expected_fence=group_lease.fence_generation, proposal=proposal, now=now))
            except LeaseLost:
                raise
            except BudgetExhausted as error:
                applied.budget = error.reason
                break
            except ProposalRefused as error:
                applied.refused[op.id] = error.reason
            except StaleInputs:
                applied.stale += 1
            except (Conflict, Invalid) as error:
                applied.refused[op.id] = getattr(error, "reason", "") or "refused"
    return applied
