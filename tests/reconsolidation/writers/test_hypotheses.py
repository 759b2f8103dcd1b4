"""Hypotheses (infer_connection): a verified tentative clause over two distinct owner events
becomes a pending hypothesis projection with inferred authority, confidence capped at 0.35
and at the least-confident support, the evidence clock of its latest supporting event and an
expiry bounded by 30 days and every support's expiry. Local checks refuse new names,
quantities, negation, sensitive traits, source copies (hedged or not) and repeated claims.
A hedge word is not required: the record and its rendering carry the tentativeness."""
from __future__ import annotations

import json
from datetime import timedelta
from uuid import uuid4

import pytest

from evals.reconsolidation.responder import HeuristicResponder
from memory import services
from reconsolidation import bounds
from reconsolidation.domain import ClauseDraft, Proposal
from reconsolidation.models import DerivedMemory, ReconsolidationGroup, ReconsolidationOperation
from reconsolidation.work.process import process_group
from reconsolidation.writers.apply import ProposalRefused
from tests.factories import T0, draft, make_owner, owner_message
from tests.reconsolidation.helpers import original, refs
from tests.reconsolidation.work_builders import claimed_group
from reconsolidation.services.operations import operation_approve
from veetbot.rls import owner_context

CONNECTION = "The owner may be an early riser."


class Connecting(HeuristicResponder):
    """Proposes one infer_connection over every source of each group; the verifier answers
    ``verdict`` for it."""

    def __init__(self, text=CONNECTION, verdict=("supported", "entailed")):
        super().__init__()
        self.text, self.verdict = text, verdict

    def answer(self, prepared):
        document = json.loads(prepared.body)
        if prepared.stage == "proposal":
            operations = []
            for payload in document["untrusted_data"]["groups"]:
                sources = payload["sources"]
                operations.append({
                    "id": str(uuid4()), "group_id": payload["group_id"], "kind": "infer_connection",
                    "inputs": [{"belief_id": s["belief_id"], "content_revision": s["content_revision"]}
                               for s in sources],
                    "clauses": [{"text": self.text, "support": [
                        {"belief_id": s["belief_id"], "excerpt_id": s["excerpt_ids"][0]} for s in sources]}]})
            reply = {"schema_version": "reconsolidation-proposal@1", "batch_id": document["batch_id"],
                     "group_ids": [p["group_id"] for p in document["untrusted_data"]["groups"]],
                     "operations": operations}
        else:
            reply = {"schema_version": "reconsolidation-verification@1", "batch_id": document["batch_id"],
                     "proposal_digest": document["proposal_digest"], "verdicts": [
                         {"operation_id": c["operation_id"], "clause_index": k["clause_index"],
                          "status": self.verdict[0], "reason": self.verdict[1]}
                         for c in document["untrusted_data"]["claims"] for k in c["clauses"]]}
        return json.dumps(reply).encode()


@pytest.fixture
def owner(db, settings):
    settings.RECON_SCRIPTED_PROVIDER_ALLOWED = True
    return make_owner()[0]


def connect(store, owner, memories, now, provider=None):
    lease, group = claimed_group(store, owner, memories, now)
    ops = process_group(store, owner, group, now=now, provider=provider or Connecting())
    with owner_context(owner):
        state = ReconsolidationGroup.objects.get(id=group.group_id)
        derived = list(DerivedMemory.objects.filter(kind="hypothesis"))
    return ops, state, derived


def pair(owner, *, first=T0 - timedelta(days=2), second=T0, **extra):
    a = original(owner, "The owner goes running at 6am.", subject="routine", at=first, **extra.get("a", {}))
    b = original(owner, "The owner writes in the early morning.", subject="routine", at=second,
                 **extra.get("b", {}))
    return a, b


def test_a_verified_connection_is_a_pending_hypothesis_on_the_evidence_clock(owner, enabled, store, day_one):
    a, b = pair(owner, b={"confidence": 0.3})
    ops, group, (hypothesis,) = connect(store, owner, [a, b], day_one)
    assert [(op.kind, op.state) for op in ops] == [("infer_connection", "proposed")]
    assert hypothesis.id == ops[0].id and hypothesis.clauses == [
        {"text": CONNECTION, "source_ids": sorted([str(a.id), str(b.id)])}]
    assert hypothesis.confidence == 0.3  # the least-confident support, below the cap
    assert hypothesis.evidence_at == T0  # the latest supporting event, not the commit instant
    assert hypothesis.expires_at == T0 + timedelta(days=bounds.RECON_HYPOTHESIS_MAX_DAYS)
    assert group.state == "completed"


def test_confidence_is_capped_at_the_hypothesis_ceiling(owner, enabled, store, day_one):
    a, b = pair(owner)  # both supports at 0.9
    _, _, (hypothesis,) = connect(store, owner, [a, b], day_one)
    assert hypothesis.confidence == bounds.RECON_HYPOTHESIS_MAX_CONFIDENCE == 0.35


def test_expiry_is_bounded_by_the_earliest_support_expiry(owner, enabled, store, day_one):
    a, b = pair(owner, a={"expires_at": day_one + timedelta(days=3)})
    _, _, (hypothesis,) = connect(store, owner, [a, b], day_one)
    assert hypothesis.expires_at == day_one + timedelta(days=3)


def test_expiry_at_and_just_past_the_thirty_day_horizon(owner, enabled, store, day_one):
    horizon = timedelta(days=bounds.RECON_HYPOTHESIS_MAX_DAYS)
    a, b = pair(owner, first=day_one - horizon - timedelta(days=1), second=day_one - horizon)
    ops, group, derived = connect(store, owner, [a, b], day_one)  # expiry == now: already expired
    assert ops == () and derived == [] and group.state == "no_change"
    owner2 = make_owner()[0]
    c, d = pair(owner2, first=day_one - horizon, second=day_one - horizon + timedelta(seconds=1))
    ops, _, (hypothesis,) = connect(store, owner2, [c, d], day_one)
    assert hypothesis.expires_at == day_one + timedelta(seconds=1)


@pytest.mark.parametrize("text, reason", [
    ("The owner may be an early riser in Paris.", "hypothesis_new_name"),
    ("The owner may sleep 5 hours.", "hypothesis_new_quantity"),
    ("The owner may sleep two hours less.", "hypothesis_new_quantity"),
    ("The owner may not sleep late.", "hypothesis_negation"),
    # refused by the per-clause egress check before verification: the clause is never even sent
    ("The owner probably has an anxiety disorder.", "sensitive_pattern"),
    ("The owner perhaps goes running at 6am.", "hypothesis_source_copy"),
    ("The owner goes running at 6am.", "hypothesis_source_copy"),
    ("The owner writes in the early morning, it seems.", "hypothesis_source_copy"),
])
def test_local_checks_refuse_the_candidate_and_record_nothing(owner, enabled, store, day_one, text, reason, monkeypatch):
    from reconsolidation.work import apply_review

    refused = {}
    real = apply_review.apply_review

    def spy(*args, **kwargs):
        result = real(*args, **kwargs)
        refused.update(result.refused)
        return result

    monkeypatch.setattr("reconsolidation.work.model_path.apply_review", spy)
    a, b = pair(owner)
    ops, group, derived = connect(store, owner, [a, b], day_one, Connecting(text))
    assert ops == () and derived == []
    assert list(refused.values()) == [reason]
    assert (group.state, group.reason) == ("no_change", "proposals_refused")


def test_identical_claims_repeated_across_events_connect_nothing(owner, enabled, store, day_one):
    a = original(owner, "The owner goes running at 6am.", subject="routine", at=T0 - timedelta(days=1))
    b = original(owner, "The owner goes running at 6am.", subject="routine")
    ops, _, derived = connect(store, owner, [a, b], day_one)
    assert ops == () and derived == []


def test_two_originals_from_one_event_are_not_two_events(owner, enabled, store, day_one):
    event = owner_message(owner, "I go running at 6am and write early.", at=T0)
    a = services.memory_create(principal=owner, draft=draft(event, statement="The owner goes running at 6am.",
                                                            subject="routine"), now=T0)
    b = services.memory_create(principal=owner, draft=draft(event, statement="The owner writes in the early morning.",
                                                            subject="routine"), now=T0)
    ops, _, derived = connect(store, owner, [a, b], day_one)
    assert ops == () and derived == []


@pytest.mark.parametrize("verdict", [("uncertain", "insufficient_evidence"), ("unsupported", "contradicted")])
def test_a_connection_the_verifier_does_not_support_is_never_recorded(owner, enabled, store, day_one, verdict):
    a, b = pair(owner)
    ops, _, derived = connect(store, owner, [a, b], day_one, Connecting(verdict=verdict))
    assert ops == () and derived == []


def test_an_unverified_connection_is_refused_by_the_writer(owner, enabled, store, day_one):
    a, b = pair(owner)
    lease, group = claimed_group(store, owner, [a, b], day_one)
    proposal = Proposal(kind="infer_connection", inputs=tuple(refs(a, b)), model_identity="0" * 64,
                        clauses=(ClauseDraft(text=CONNECTION, source_ids=(a.id, b.id)),))
    with pytest.raises(ProposalRefused, match="hypothesis_needs_verification"):
        store.commit(owner, group, expected_inputs=group.inputs, expected_fence=group.fence_generation,
                     proposal=proposal, now=day_one)


def test_approval_commits_the_hypothesis_valid_from_the_commit_instant(owner, enabled, store, day_one):
    a, b = pair(owner)
    (op,), _, _ = connect(store, owner, [a, b], day_one)
    later = day_one + timedelta(hours=2)
    approved = operation_approve(principal=owner, operation_id=op.id, expected_revision=op.revision, idempotency_key="approve-h", now=later)
    assert approved.state == "committed"
    with owner_context(owner):
        hypothesis = DerivedMemory.objects.get(id=op.id)
        assert hypothesis.valid_from == later and hypothesis.evidence_at == T0
        assert ReconsolidationOperation.objects.get(id=op.id).state == "committed"


def test_the_writer_itself_refuses_a_sensitive_trait_inference():
    """The egress check normally stops such a clause first; the writer refuses it anyway."""
    from types import SimpleNamespace

    from reconsolidation.writers.hypotheses import text_reason

    views = [SimpleNamespace(subject="routine", statement="The owner goes running at 6am."),
             SimpleNamespace(subject="routine", statement="The owner writes in the early morning.")]
    assert text_reason("The owner probably has an anxiety disorder.", views) == "hypothesis_sensitive_trait"
    assert text_reason(CONNECTION, views) is None
