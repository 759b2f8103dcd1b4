"""Recall over operations made by the real services end to end: a slice's group, the
store's commit (reviewed mode: proposed), the owner's approval (membership / summary
projection), the owner's undo and the source-change hook. Recall follows every step."""
from __future__ import annotations

from datetime import timedelta

import pytest

from memory.domain import MemoryChanges
from memory.services import memory_revise
from reconsolidation.domain import ClauseDraft, InputRef, Proposal, input_digest
from tests.factories import T0
from tests.reconsolidation.helpers import MODEL
from tests.recall.helpers import Bank
from reconsolidation.services.operations import operation_approve, operation_undo

QUERY = "passport renewal"


@pytest.fixture
def bank(db, enabled) -> Bank:
    return Bank.new()


def _propose(store, bank: Bank, now, ids, **proposal):
    """One proposed operation over ``ids`` through a leased slice's claimed group."""
    refs = [InputRef(memory_id=i, content_revision=bank.revision(i)) for i in ids]
    lease = store.claim_due(bank.principal, lease_owner="worker", now=now)
    store.queue_group(bank.principal, lease_token=lease.lease_token, inputs=refs, input_digest=input_digest(refs),
                      now=now)
    claimed = store.claim_group(bank.principal, lease_token=lease.lease_token, now=now)
    op = store.commit(bank.principal, claimed, expected_inputs=claimed.inputs, expected_fence=0,
                      proposal=Proposal(inputs=claimed.inputs, model_identity=MODEL, **proposal), now=now)
    store.finish_group(bank.principal, claimed, outcome="completed", now=now)
    store.release(bank.principal, lease.lease_token, now=now)
    return op


def _ids(result):
    return [item.id for item in result.items]


def test_recall_follows_approval_undo_and_source_changes_made_by_the_services(bank, store, day_one):
    a, b, c = bank.add_many([dict(statement="The passport renewal is due in March.", subject="passport")] * 3)
    anchor = bank.add("The passport renewal appointment is on Friday.", subject="passport renewal")
    p, q = bank.add_many([dict(statement="The embassy is closed on Mondays.", subject="embassy"),
                          dict(statement="The embassy asks for printed photos.", subject="embassy")])
    plain = bank.recall(QUERY)
    assert set(_ids(plain)) == {a, b, c, anchor}

    merge = _propose(store, bank, day_one, [a, b, c], kind="merge_equivalent", reason="equal_key")
    summary = _propose(store, bank, day_one + timedelta(minutes=1), [p, q], kind="summarize_related",
                       clauses=(ClauseDraft(text="The embassy is closed on Mondays.", source_ids=(p,)),
                                ClauseDraft(text="The embassy asks for printed photos.", source_ids=(q,))))
    assert (merge.state, summary.state) == ("proposed", "proposed")
    assert bank.recall(QUERY).items == plain.items  # proposals change nothing

    approved = operation_approve(principal=bank.principal, operation_id=merge.id, expected_revision=merge.revision, idempotency_key="m1",
                              now=day_one + timedelta(hours=1))
    operation_approve(principal=bank.principal, operation_id=summary.id, expected_revision=summary.revision, idempotency_key="s1",
                   now=day_one + timedelta(hours=1))
    merged = bank.recall(QUERY)
    assert set(_ids(merged)) == {a, anchor}  # canonical: the oldest creation key
    assert {i.id for i in merged.items if i.operation_id == merge.id} == {a}
    assert set(merged.stages.suppressed_ids) == {b, c}
    # The summary is anchored on p/q only: nothing the query matched, so it is not offered.
    assert merged.stages.summary_ids == ()
    by_embassy = bank.recall("embassy photos passport renewal appointment")
    assert {p, q} <= set(_ids(by_embassy)) and summary.id in by_embassy.stages.summary_ids
    assert summary.id not in _ids(by_embassy)  # offered, but p and q are selected: it would repeat them

    operation_undo(principal=bank.principal, operation_id=merge.id, expected_revision=approved.revision, idempotency_key="u1",
              now=day_one + timedelta(hours=2))
    assert set(_ids(bank.recall(QUERY))) == {a, b, c, anchor}


def test_a_summary_from_the_services_fills_a_remaining_slot_and_a_correction_withholds_it(bank, store, day_one):
    anchor = bank.add("The passport renewal appointment is on Friday.", subject="embassy visit")
    p, q = bank.add_many([dict(statement="The embassy is closed on Mondays.", subject="embassy visit"),
                          dict(statement="The embassy asks for printed photos.", subject="embassy visit")])
    op = _propose(store, bank, day_one, [anchor, p, q], kind="summarize_related",
                  clauses=(ClauseDraft(text="The embassy is closed on Mondays.", source_ids=(p,)),
                           ClauseDraft(text="The embassy asks for printed photos.", source_ids=(q,))))
    operation_approve(principal=bank.principal, operation_id=op.id, expected_revision=op.revision, idempotency_key="s1",
                   now=day_one + timedelta(hours=1))
    result = bank.recall(QUERY)
    assert _ids(result) == [anchor, op.id]
    assert result.items[1].record_kind == "summary" and set(result.items[1].support_ids) == {anchor, p, q}

    memory_revise(principal=bank.principal, memory_id=anchor, changes=MemoryChanges(confidence=0.4),
                  now=T0 + timedelta(days=3))  # an omitted input: still a dependency
    assert _ids(bank.recall(QUERY)) == [anchor]
