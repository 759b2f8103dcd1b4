"""Queued model work and the minimal commit: oldest first, three failed attempts (one per
slice) then a terminal audited failure, crash recovery counting as a failure, dedup by digest, and a
commit that rechecks revisions and the group's scoped fence under the owner lock."""
from __future__ import annotations

from datetime import timedelta

import pytest

from memory import services
from memory.domain import MemoryChanges
from reconsolidation import bounds
from reconsolidation.domain import InputRef, input_digest
from reconsolidation.errors import Conflict, FenceLost, Invalid, LeaseLost, StaleInputs
from reconsolidation.models import (
    ReconsolidationAudit, ReconsolidationDependency, ReconsolidationGroup, ReconsolidationOperation,
)
from tests.factories import T0, make_owner
from tests.reconsolidation.helpers import original, proposal, refs, snapshot
from veetbot.rls import owner_context

LEASE = timedelta(seconds=bounds.RECON_LEASE_SECONDS)


@pytest.fixture
def bank(db):
    principal, _ = make_owner()
    memories = [original(principal, f"The owner prefers Celsius {n}.", subject="units") for n in range(4)]
    return principal, memories


def queue(store, principal, lease, *memories, now):
    return store.queue_group(principal, lease_token=lease.lease_token, inputs=refs(*memories),
                             input_digest=input_digest(refs(*memories)), now=now)


def next_slice(store, principal, lease, now):
    store.release(principal, lease.lease_token, now=now)
    return store.claim_due(principal, lease_owner="w", now=now)


def test_the_group_digest_binds_sorted_ids_revisions_and_the_policy():
    a, b = InputRef(memory_id="00000000-0000-0000-0000-00000000000a", content_revision=1), \
        InputRef(memory_id="00000000-0000-0000-0000-00000000000b", content_revision=2)
    assert input_digest([a, b]) == input_digest([b, a])
    assert input_digest([a, b]) != input_digest([a, b.model_copy(update={"content_revision": 3})])
    assert input_digest([a, b]) != input_digest([a, b], policy="reconsolidation@2")


def test_groups_are_claimed_oldest_first_and_identical_input_is_queued_once(bank, enabled, store, day_one):
    principal, (a, b, c, d) = bank
    lease = store.claim_due(principal, lease_owner="w", now=day_one)
    first = queue(store, principal, lease, a, b, now=day_one)
    second = queue(store, principal, lease, c, d, now=day_one + timedelta(seconds=1))
    assert queue(store, principal, lease, b, a, now=day_one + timedelta(seconds=2)).id == first.id
    assert store.claim_group(principal, lease_token=lease.lease_token, now=day_one).group_id == first.id
    assert store.claim_group(principal, lease_token=lease.lease_token, now=day_one).group_id == second.id
    assert store.claim_group(principal, lease_token=lease.lease_token, now=day_one) is None


def test_a_group_with_stale_revisions_or_tampered_digest_is_not_queued(bank, enabled, store, day_one):
    principal, (a, b, *_) = bank
    services.memory_revise(principal=principal, memory_id=a.id, changes=MemoryChanges(confidence=0.5), now=T0)
    lease = store.claim_due(principal, lease_owner="w", now=day_one)
    with pytest.raises(StaleInputs):
        queue(store, principal, lease, a, b, now=day_one)  # a is at revision 2 now
    with pytest.raises(Invalid):
        store.queue_group(principal, lease_token=lease.lease_token, inputs=refs(a, b), input_digest="0" * 64, now=day_one)


def test_three_failed_attempts_end_in_a_terminal_audited_failure(bank, enabled, store, day_one):
    principal, (a, b, *_) = bank
    lease = store.claim_due(principal, lease_owner="w", now=day_one)
    group = queue(store, principal, lease, a, b, now=day_one)
    for attempt in range(1, bounds.RECON_MAX_GROUP_ATTEMPTS + 1):
        claimed = store.claim_group(principal, lease_token=lease.lease_token, now=day_one)
        assert claimed.group_id == group.id and claimed.attempt == attempt
        finished = store.finish_group(principal, claimed, outcome="failed", reason="provider_timeout", now=day_one)
        lease = next_slice(store, principal, lease, day_one)  # a failed group backs off to the next slice
    assert (finished.state, finished.retry_count, finished.reason) == ("failed", 3, "provider_timeout")
    assert store.claim_group(principal, lease_token=lease.lease_token, now=day_one) is None
    assert queue(store, principal, lease, a, b, now=day_one).state == "failed"  # identical input stays failed
    with owner_context(principal):
        audit = ReconsolidationAudit.objects.get(event="group_failed")
        assert (audit.group_id, audit.reason, audit.counts) == (group.id, "provider_timeout", {"attempts": 3, "failures": 3})
    services.memory_revise(principal=principal, memory_id=a.id, changes=MemoryChanges(confidence=0.4), now=day_one)
    a2 = refs(a)[0].model_copy(update={"content_revision": 2})
    fresh = store.queue_group(principal, lease_token=lease.lease_token, inputs=[a2, *refs(b)],
                              input_digest=input_digest([a2, *refs(b)]), now=day_one)
    assert fresh.id != group.id and fresh.state == "pending"  # a new revision is new input


def test_deferral_returns_the_group_without_counting_a_failure(bank, enabled, store, day_one):
    principal, (a, b, *_) = bank
    lease = store.claim_due(principal, lease_owner="w", now=day_one)
    queue(store, principal, lease, a, b, now=day_one)
    for _ in range(5):
        claimed = store.claim_group(principal, lease_token=lease.lease_token, now=day_one)
        deferred = store.finish_group(principal, claimed, outcome="deferred", reason="daily_budget", now=day_one)
        assert store.claim_group(principal, lease_token=lease.lease_token, now=day_one) is None  # backed off
        lease = next_slice(store, principal, lease, day_one)
    assert (deferred.state, deferred.retry_count, deferred.attempt_count) == ("pending", 0, 5)


def test_a_crash_mid_group_counts_one_failed_attempt_and_the_third_crash_is_terminal(bank, enabled, store, day_one):
    principal, (a, b, *_) = bank
    now = day_one
    lease = store.claim_due(principal, lease_owner="w", now=now)
    group = queue(store, principal, lease, a, b, now=now)
    for crash in range(bounds.RECON_MAX_GROUP_ATTEMPTS):
        claimed = store.claim_group(principal, lease_token=lease.lease_token, now=now)
        assert claimed is not None
        now += LEASE + timedelta(seconds=1)  # the worker died holding the group
        lease = store.claim_due(principal, lease_owner=f"w{crash}", now=now)
    with owner_context(principal):
        row = ReconsolidationGroup.objects.get(id=group.id)
    assert (row.state, row.retry_count, row.reason) == ("failed", 3, "lease_lost")
    assert store.claim_group(principal, lease_token=lease.lease_token, now=now) is None


def test_commit_writes_operation_dependencies_and_audit_together(bank, enabled, store, day_one):
    principal, (a, b, *_) = bank
    lease = store.claim_due(principal, lease_owner="w", now=day_one)
    queue(store, principal, lease, a, b, now=day_one)
    claimed = store.claim_group(principal, lease_token=lease.lease_token, now=day_one)
    op = store.commit(principal, claimed, expected_inputs=claimed.inputs, expected_fence=0,
                      proposal=proposal("flag_conflict", claimed.inputs, reason="equal_key"), now=day_one)
    assert (op.kind, op.state, op.revision, op.group_id) == ("flag_conflict", "proposed", 1, claimed.group_id)
    assert set(op.inputs) == set(claimed.inputs) and op.input_digest == input_digest(claimed.inputs)
    with owner_context(principal):
        deps = list(ReconsolidationDependency.objects.filter(operation_id=op.id))
        assert {d.memory_id for d in deps} == {a.id, b.id}
        assert {d.event_id for d in deps} == {a.sources[0].event, b.sources[0].event}
        assert all(d.content_revision == 1 and d.evidence_at == T0 for d in deps)
        assert ReconsolidationAudit.objects.filter(event="operation_proposed", operation_id=op.id).count() == 1
    with pytest.raises(Conflict, match="duplicate_operation"):  # one operation per input
        store.commit(principal, claimed, expected_inputs=claimed.inputs, expected_fence=0,
                     proposal=proposal("flag_conflict", claimed.inputs), now=day_one)


def test_commit_refuses_touched_sources_a_foreign_fence_and_unsupplied_sources_without_mutation(bank, enabled, store,
                                                                                              day_one):
    principal, (a, b, c, d) = bank
    lease = store.claim_due(principal, lease_owner="w", now=day_one)
    queue(store, principal, lease, a, b, c, now=day_one)
    claimed = store.claim_group(principal, lease_token=lease.lease_token, now=day_one)
    services.memory_revise(principal=principal, memory_id=a.id, changes=MemoryChanges(confidence=0.3), now=day_one)
    before = snapshot(principal)
    with pytest.raises(StaleInputs, match="source_changed"):  # a's change stales the whole group
        store.commit(principal, claimed, expected_inputs=claimed.inputs, expected_fence=0,
                     proposal=proposal("summarize_related", refs(b, c)), now=day_one)
    with pytest.raises(Invalid):  # a provider cannot choose a source it was not given
        store.commit(principal, claimed, expected_inputs=claimed.inputs, expected_fence=0,
                     proposal=proposal("summarize_related", refs(b, d)), now=day_one)
    with pytest.raises(FenceLost):  # not the fence the group was queued under
        store.commit(principal, claimed, expected_inputs=claimed.inputs, expected_fence=1,
                     proposal=proposal("summarize_related", refs(b, c)), now=day_one)
    with pytest.raises(StaleInputs, match="inputs_mismatch"):
        store.commit(principal, claimed, expected_inputs=refs(b, c), expected_fence=0,
                     proposal=proposal("summarize_related", refs(b, c)), now=day_one)
    assert snapshot(principal) == before
    with owner_context(principal):
        assert not ReconsolidationOperation.objects.exists()


def test_commit_needs_the_group_claimed_under_the_live_lease(bank, enabled, store, day_one):
    principal, (a, b, *_) = bank
    lease = store.claim_due(principal, lease_owner="w", now=day_one)
    queue(store, principal, lease, a, b, now=day_one)
    claimed = store.claim_group(principal, lease_token=lease.lease_token, now=day_one)
    store.finish_group(principal, claimed, outcome="no_change", now=day_one)
    with pytest.raises(LeaseLost, match="group_not_leased"):
        store.commit(principal, claimed, expected_inputs=claimed.inputs, expected_fence=0,
                     proposal=proposal("flag_conflict", claimed.inputs), now=day_one)


def test_invalidation_stales_proposals_and_pending_groups_over_a_source(bank, enabled, store, day_one):
    principal, (a, b, c, d) = bank
    lease = store.claim_due(principal, lease_owner="w", now=day_one)
    queue(store, principal, lease, a, b, now=day_one)
    other = queue(store, principal, lease, a, c, now=day_one + timedelta(seconds=1))
    untouched = queue(store, principal, lease, c, d, now=day_one + timedelta(seconds=2))
    claimed = store.claim_group(principal, lease_token=lease.lease_token, now=day_one)
    op = store.commit(principal, claimed, expected_inputs=claimed.inputs, expected_fence=0,
                      proposal=proposal("flag_conflict", claimed.inputs), now=day_one)
    receipt = store.invalidate(principal, [a.id], reason="revised", now=day_one)
    assert receipt.staled == (op.id,) and receipt.invalidated == () and receipt.groups_staled == 1
    with owner_context(principal):
        assert ReconsolidationOperation.objects.get(id=op.id).revision == 2
        states = dict(ReconsolidationGroup.objects.values_list("id", "state"))
    assert states[other.id] == "stale" and states[untouched.id] == "pending"


def test_a_groups_proposals_share_one_check_of_its_lease_claim_and_sources(bank, enabled, store, day_one):
    """The lease, the claim and the sources are locked and checked once for all of a group's
    proposals; each proposal then costs only its own checks and writes, and a refused one
    rolls back alone."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from reconsolidation.work.group_commits import commit_proposals

    principal, (a, b, c, _) = bank
    lease = store.claim_due(principal, lease_owner="w", now=day_one)
    queue(store, principal, lease, a, b, c, now=day_one)
    claimed = store.claim_group(principal, lease_token=lease.lease_token, now=day_one)
    proposals = [proposal("flag_conflict", refs(a, b), reason="equal_key"),
                 proposal("flag_conflict", refs(a, b), reason="equal_key"),  # the same input: refused
                 proposal("flag_conflict", refs(b, c), reason="equal_key")]
    with owner_context(principal), CaptureQueriesContext(connection) as captured:
        done = commit_proposals(store, principal, claimed, proposals, day_one)
    assert [set(op.inputs) for op in done.recorded] == [set(refs(a, b)), set(refs(b, c))]
    assert (done.refused, done.stale, done.budget) == ({1: "refused"}, 0, "")  # a duplicate of the first
    statements = [query["sql"] for query in captured.captured_queries]
    locked = [sql for sql in statements if "FOR UPDATE" in sql]
    assert sum('FROM "reconsolidation_reconsolidationjob"' in sql for sql in locked) == 1
    assert sum('FROM "reconsolidation_reconsolidationgroup"' in sql for sql in locked) == 1
    assert sum("memory_memory" in sql for sql in locked) == 1  # the sources, once, in one statement


def test_a_group_whose_sources_changed_stales_every_proposal_without_writing(bank, enabled, store, day_one):
    from reconsolidation.work.group_commits import commit_proposals

    principal, (a, b, c, _) = bank
    lease = store.claim_due(principal, lease_owner="w", now=day_one)
    queue(store, principal, lease, a, b, c, now=day_one)
    claimed = store.claim_group(principal, lease_token=lease.lease_token, now=day_one)
    services.memory_revise(principal=principal, memory_id=a.id, changes=MemoryChanges(confidence=0.3), now=day_one)
    with owner_context(principal):
        done = commit_proposals(store, principal, claimed, [proposal("flag_conflict", refs(b, c)),
                                                            proposal("flag_conflict", refs(a, b))], day_one)
        assert not ReconsolidationOperation.objects.exists()
    assert (done.recorded, done.stale, done.refused) == ([], 2, {})


def test_a_commit_counts_the_waiting_proposals_and_its_slices_operations_through_indexes(bank, enabled, store,
                                                                                           day_one):
    """Every commit counts the proposals waiting and its own slice's operations: under forced
    row-level security both predicates can use an index, so neither reads every operation
    the owner ever had (the planner is told to avoid sequential scans: a bank this small
    would otherwise be scanned anyway)."""
    from django.db import connection

    principal, (a, b, *_) = bank
    with owner_context(principal), connection.cursor() as cursor:
        cursor.execute("SET LOCAL enable_seqscan = off")
        plans = {}
        for name, queryset in {
            "waiting": ReconsolidationOperation.objects.filter(state="proposed"),
            "slice": ReconsolidationOperation.objects.filter(slice_token=a.id),
        }.items():
            plans[name] = queryset.explain()
    assert "reconop_by_state" in plans["waiting"] and "Index Cond: ((state)" in plans["waiting"], plans
    assert "reconop_by_slice" in plans["slice"], plans
