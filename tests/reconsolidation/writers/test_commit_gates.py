"""Rejections as commit gates: the owner's memory rejections ("not true" of an original),
and the blocks installed by rejecting or retiring a summary or a hypothesis, refuse every
later merge, summary and hypothesis they cover — a rejected summary or hypothesis does not
return over a subset, a superset or copies of its support."""
from __future__ import annotations

from datetime import timedelta

import pytest

from memory import services
from reconsolidation.domain import ClauseDraft, Proposal
from reconsolidation.writers.apply import ProposalRefused
from tests.factories import T0, make_owner
from tests.reconsolidation.helpers import original, refs
from tests.reconsolidation.work_builders import by_kind, claimed_group, process
from reconsolidation.services.derived import derived_review
from reconsolidation.services.operations import operation_approve, operation_reject

CONNECTION = "The owner may be an early riser."
MODEL = "0" * 64


@pytest.fixture
def owner(db):
    return make_owner()[0]


def reject(store, owner, op, now):
    return operation_reject(principal=owner, operation_id=op.id, expected_revision=op.revision, idempotency_key=f"reject-{op.id}", now=now)


def sets(ops, kind):
    return [{ref.memory_id for ref in op.inputs} for op in by_kind(ops, kind)]


# --- memory rejections ---------------------------------------------------------------

@pytest.mark.parametrize("kind, third", [("merge_equivalent", "The owner prefers Celsius."),
                                         ("summarize_related", "The owner reads temperatures in the morning.")])
def test_a_live_copy_of_a_claim_the_owner_rejected_is_neither_merged_nor_summarised(owner, enabled, store, day_one,
                                                                                     kind, third):
    rejected = original(owner, "The owner prefers Celsius.", subject="units")
    copy = original(owner, "The owner prefers Celsius.", subject="units")
    other = original(owner, third, subject="units")
    services.memory_reject(principal=owner, memory_id=rejected.id, now=day_one)
    assert sets(process(store, owner, [copy, other], day_one), kind) == []


# --- rejected summaries ----------------------------------------------------------------

SUMMARY = ("The owner reads temperatures in the morning.", "The owner checks the forecast at night.",
           "The owner keeps a thermometer outside.")


def summary_bank(owner):
    return [original(owner, text, subject="weather") for text in SUMMARY]


def rejected_summary(store, owner, memories, now, how="rejected"):
    (op,) = by_kind(process(store, owner, memories, now), "summarize_related")
    if how == "rejected":
        reject(store, owner, op, now)
    else:
        retire_not_true(store, owner, op, now)
    return op


@pytest.mark.parametrize("how", ["rejected", "not_true"])
@pytest.mark.parametrize("support", ["subset", "superset", "copies", "copied_subset"])
def test_a_rejected_summary_does_not_return_over_other_support(owner, enabled, store, day_one, support, how):
    a, b, c = summary_bank(owner)
    rejected_summary(store, owner, [a, b, c], day_one, how)
    later = day_one + timedelta(days=1)
    if support == "subset":
        memories = [a, b]
    elif support == "superset":
        memories = [a, b, c, original(owner, "The owner owns a weather station.", subject="weather")]
    elif support == "copies":
        memories = [original(owner, text, subject="weather", at=T0 + timedelta(hours=1)) for text in SUMMARY]
    else:
        memories = [original(owner, text, subject="weather", at=T0 + timedelta(hours=1)) for text in SUMMARY[1:]]
    assert sets(process(store, owner, memories, later), "summarize_related") == []


def test_a_summary_sharing_one_clause_with_a_rejected_one_still_forms(owner, enabled, store, day_one):
    a, b, c = summary_bank(owner)
    rejected_summary(store, owner, [a, b, c], day_one)
    d = original(owner, "The owner owns a weather station.", subject="weather")
    assert sets(process(store, owner, [a, d], day_one + timedelta(days=1)), "summarize_related") == [{a.id, d.id}]


# --- rejected hypotheses ---------------------------------------------------------------

ROUTINE = ("The owner goes running at 6am.", "The owner writes in the early morning.",
           "The owner reads the news at dawn.")


def routine(owner, *, start=T0 - timedelta(days=3)):
    return [original(owner, text, subject="routine", at=start + timedelta(days=n)) for n, text in enumerate(ROUTINE)]


def connect(store, owner, memories, now, text=CONNECTION):
    """A verified connection over ``memories``, committed through the real writer."""
    lease, group = claimed_group(store, owner, memories, now)
    proposal = Proposal(kind="infer_connection", inputs=tuple(refs(*memories)), model_identity=MODEL, verified=True,
                        clauses=(ClauseDraft(text=text, source_ids=tuple(m.id for m in memories)),))
    try:
        op = store.commit(owner, group, expected_inputs=group.inputs, expected_fence=group.fence_generation,
                          proposal=proposal, now=now)
        store.finish_group(owner, group, outcome="completed", now=now)
        return op
    finally:
        store.release(owner, lease.lease_token, now=now)  # a refused group is recovered, never reclaimed here


def retire_not_true(store, owner, op, now):

    approved = operation_approve(principal=owner, operation_id=op.id, expected_revision=op.revision, idempotency_key=f"ok-{op.id}", now=now)
    derived_review(principal=owner, derived_id=approved.id, action="not_true", ceiling="sensitive", idempotency_key=f"nt-{op.id}",
                   request_sha256="0" * 64, now=now)


@pytest.mark.parametrize("how", ["rejected", "not_true"])
@pytest.mark.parametrize("support", ["subset", "superset", "copies"])
def test_a_rejected_hypothesis_does_not_return_over_other_support(owner, enabled, store, day_one, how, support):
    a, b, c = routine(owner)
    op = connect(store, owner, [a, b, c], day_one)
    if how == "rejected":
        reject(store, owner, op, day_one)
    else:
        retire_not_true(store, owner, op, day_one)
    if support == "subset":
        memories = [a, b]
    elif support == "superset":
        memories = [a, b, c, original(owner, "The owner makes coffee before sunrise.", subject="routine",
                                      at=T0 - timedelta(hours=5))]
    else:
        memories = routine(owner, start=T0 - timedelta(days=2, hours=1))
    with pytest.raises(ProposalRefused, match="blocked_by_owner"):
        connect(store, owner, memories, day_one + timedelta(hours=1))


def test_another_connection_over_the_same_support_still_forms(owner, enabled, store, day_one):
    a, b, c = routine(owner)
    reject(store, owner, connect(store, owner, [a, b, c], day_one), day_one)
    assert connect(store, owner, [a, b], day_one, text="The owner may prefer mornings.").state == "proposed"


def test_a_hypothesis_over_a_copy_of_a_rejected_claim_is_refused(owner, enabled, store, day_one):
    a, b, c = routine(owner)
    copy = original(owner, ROUTINE[0], subject="routine", at=T0 - timedelta(hours=2))
    services.memory_reject(principal=owner, memory_id=a.id, now=day_one)
    with pytest.raises(ProposalRefused, match="claim_rejected_by_owner"):
        connect(store, owner, [copy, b], day_one)


def test_a_hypothesis_worded_as_a_rejected_claim_is_refused(owner, enabled, store, day_one):
    a, b, c = routine(owner)
    said = original(owner, "The owner is a morning person.", subject="routine", at=T0 - timedelta(hours=2))
    services.memory_reject(principal=owner, memory_id=said.id, now=day_one)
    with pytest.raises(ProposalRefused, match="claim_rejected_by_owner"):
        connect(store, owner, [a, b], day_one, text="The owner is a morning person.")


def test_approval_is_gated_too_a_proposal_over_a_claim_rejected_since_is_refused(owner, enabled, store, day_one):
    a = original(owner, "The owner prefers Celsius.", subject="units")
    b = original(owner, "The owner prefers Celsius.", subject="units")
    copy = original(owner, "The owner prefers Celsius.", subject="units")
    (op,) = by_kind(process(store, owner, [a, b], day_one), "merge_equivalent")
    services.memory_reject(principal=owner, memory_id=copy.id, now=day_one)  # the same claim, not a source
    with pytest.raises(ProposalRefused, match="claim_rejected_by_owner"):
        operation_approve(principal=owner, operation_id=op.id, expected_revision=op.revision, idempotency_key="approve-merge", now=day_one)
