"""Reviewed mode: proposals stay pending (no membership, no projection) until the owner
approves their current revision; approval revalidates, is idempotent and writes exactly
what the kind means; rejection blocks the same proposal; overlapping merges replan as
the union."""
from __future__ import annotations

from datetime import timedelta

import pytest

from memory import selectors, services
from memory.domain import MemoryChanges
from memory.services.receipts import KeyReused
from reconsolidation.errors import Conflict, Invalid, StaleInputs
from reconsolidation.models import ReconsolidationBlock, ReconsolidationGroup
from reconsolidation.work.process import process_group
from tests.factories import make_owner
from tests.reconsolidation.helpers import original, snapshot
from tests.reconsolidation.work_builders import (
    active_members, approve, by_kind, claimed_group, derived_rows, merged, operation_row, process,
)
from reconsolidation.services.operations import operation_approve, operation_reject
from veetbot.rls import owner_context


@pytest.fixture
def owner(db):
    return make_owner()[0]


def originals_of(owner, *memories):
    with owner_context(owner):
        return [selectors.memory_get(memory_id=m.id, ceiling="restricted") for m in memories]


def celsius(owner, n=2, **overrides):
    return [original(owner, "The owner prefers Celsius.", subject="units", **overrides) for _ in range(n)]


def test_approving_a_merge_commits_it_and_writes_membership_with_the_oldest_canonical(owner, enabled, store, day_one):
    a, b, c = celsius(owner, 3)
    (op,) = process(store, owner, [c, b, a], day_one)
    committed = approve(store, owner, op, day_one)
    assert (committed.state, committed.revision, committed.committed_at) == ("committed", 2, day_one)
    assert active_members(owner) == {(op.id, a.id, m.id) for m in (a, b, c)}


def test_approval_is_idempotent_and_a_reused_key_with_another_request_conflicts(owner, enabled, store, day_one):
    (op,) = process(store, owner, celsius(owner), day_one)
    first = approve(store, owner, op, day_one, key="k1")
    assert approve(store, owner, op, day_one, key="k1") == first  # replay: same view, nothing repeated
    with pytest.raises(KeyReused):
        operation_approve(principal=owner, operation_id=op.id, expected_revision=2, idempotency_key="k1", now=day_one)
    with pytest.raises(Conflict, match="not_proposed"):
        approve(store, owner, op, day_one, key="k2")


def test_approval_refuses_a_stale_revision_or_changed_sources_without_mutation(owner, enabled, store, day_one):
    a, b = celsius(owner)
    (op,) = process(store, owner, [a, b], day_one)
    before = snapshot(owner)
    with pytest.raises(Conflict, match="stale_revision"):
        operation_approve(principal=owner, operation_id=op.id, expected_revision=op.revision + 1, idempotency_key="k", now=day_one)
    with pytest.raises(Invalid):
        operation_approve(principal=owner, operation_id=op.id, expected_revision=op.revision, idempotency_key=" ", now=day_one)
    with pytest.raises(Invalid):
        operation_approve(principal=owner, operation_id=op.id, expected_revision=op.revision, idempotency_key="k" * 129, now=day_one)
    assert snapshot(owner) == before
    # A correction stales the proposal in its own transaction: there is nothing left to approve.
    services.memory_revise(principal=owner, memory_id=a.id, changes=MemoryChanges(confidence=0.5), now=day_one)
    assert operation_row(owner, op.id).state == "stale"
    with pytest.raises(Conflict, match="not_proposed"):
        approve(store, owner, op, day_one)


def test_an_idempotency_key_of_exactly_128_characters_is_accepted(owner, enabled, store, day_one):
    (op,) = process(store, owner, celsius(owner), day_one)
    assert approve(store, owner, op, day_one, key="k" * 128).state == "committed"


def test_approval_rechecks_eligibility_that_elapsed_without_a_write(owner, enabled, store, day_one):
    a, b = celsius(owner, expires_at=day_one + timedelta(hours=1))
    (op,) = process(store, owner, [a, b], day_one)
    with pytest.raises(StaleInputs, match="expired"):
        approve(store, owner, op, day_one + timedelta(hours=2))
    assert operation_row(owner, op.id).state == "proposed"


def test_approving_a_summary_writes_the_extractive_projection_with_inherited_metadata(owner, enabled, store, day_one):
    a = original(owner, "The owner prefers Celsius.", subject="units", confidence=0.9, sensitivity="public")
    b = original(owner, "The owner reads temperatures in the morning.", subject="units", confidence=0.6,
                 authority="EXTRACTED", derivation="extracted")
    (op,) = process(store, owner, [a, b], day_one)
    approve(store, owner, op, day_one)
    (row,) = derived_rows(owner)
    assert row.id == op.id and row.status == "active" and row.kind == "summary"
    assert row.clauses == [{"text": "The owner prefers Celsius.", "source_ids": [str(a.id)]},
                           {"text": "The owner reads temperatures in the morning.", "source_ids": [str(b.id)]}]
    assert (row.sensitivity, row.confidence, row.subject, row.portable) == ("internal", 0.6, "units", True)
    assert row.evidence_at == max(a.evidence_at, b.evidence_at) and row.store_position is not None


def test_approving_a_conflict_flag_writes_no_recall_item(owner, enabled, store, day_one):
    a = original(owner, "The owner's flat is on floor 3.", subject="home")
    b = original(owner, "The owner's flat is on floor 4.", subject="home")
    (op,) = process(store, owner, [a, b], day_one)
    assert approve(store, owner, op, day_one).state == "committed"
    assert derived_rows(owner) == [] and active_members(owner) == set()


def test_a_rejected_proposal_is_blocked_from_being_recorded_again(owner, enabled, store, day_one):
    a, b = celsius(owner)
    (op,) = process(store, owner, [a, b], day_one)
    rejected = operation_reject(principal=owner, operation_id=op.id, expected_revision=1, idempotency_key="r", now=day_one)
    assert (rejected.state, rejected.reason) == ("rejected", "owner_rejection")
    with owner_context(owner):
        assert set(ReconsolidationBlock.objects.values_list("reason", flat=True)) == {"owner_rejection"}
    c = original(owner, "The owner prefers Celsius.", subject="units")
    later = day_one + timedelta(days=1)
    assert by_kind(process(store, owner, [a, b, c], later), "merge_equivalent") == []  # contains a rejected pair


def test_an_overlapping_merge_is_refused_and_replanned_as_the_union(owner, enabled, store, day_one):
    a, b, c = celsius(owner, 3)
    first = merged(store, owner, [a, b], day_one)
    later = day_one + timedelta(days=1)
    lease, group = claimed_group(store, owner, [b, c], later)
    assert process_group(store, owner, group, now=later) == ()  # b is already in an active set
    with owner_context(owner):
        union = ReconsolidationGroup.objects.get(state="pending")
    assert set(union.input_ids) == {a.id, b.id, c.id}
    replanned = store.claim_group(owner, lease_token=lease.lease_token, now=later)
    (op,) = process_group(store, owner, replanned, now=later)
    approve(store, owner, op, later)
    assert active_members(owner) == {(op.id, a.id, m.id) for m in (a, b, c)}
    assert (operation_row(owner, first.id).state, operation_row(owner, first.id).reason) == (
        "invalidated", "superseded_by_union")


def test_merging_adds_no_corroboration_and_never_rewrites_an_original(owner, enabled, store, day_one):
    a, b = celsius(owner)
    before = originals_of(owner, a, b)
    merged(store, owner, [a, b], day_one)
    assert originals_of(owner, a, b) == before


def test_a_rejected_summary_claim_set_is_blocked_even_from_new_copies(owner, enabled, store, day_one):
    a = original(owner, "The owner prefers Celsius.", subject="units")
    b = original(owner, "The owner reads temperatures in the morning.", subject="units")
    (op,) = process(store, owner, [a, b], day_one)
    operation_reject(principal=owner, operation_id=op.id, expected_revision=op.revision, idempotency_key="r", now=day_one)
    assert operation_reject(principal=owner, operation_id=op.id, expected_revision=op.revision, idempotency_key="r", now=day_one).state == "rejected"
    c = original(owner, "The owner prefers Celsius.", subject="temperature")  # same claims, new IDs and subject
    d = original(owner, "The owner reads temperatures in the morning.", subject="temperature")
    assert by_kind(process(store, owner, [c, d], day_one + timedelta(days=1)), "summarize_related") == []


def test_review_keeps_working_with_processing_switched_off(owner, enabled, store, day_one, settings):
    (op,) = process(store, owner, celsius(owner), day_one)
    settings.AGENT_MEMORY_RECONSOLIDATION_ENABLED = False
    assert approve(store, owner, op, day_one).state == "committed"
