"""The slice driver: claim -> inventory -> bounded model work under a renewed lease ->
release; the wall deadline, crash recovery by lease expiry, until-idle termination and
the dry run that writes nothing."""
from __future__ import annotations

import math
from datetime import timedelta

import pytest
from django.db import connection, reset_queries
from django.test.utils import CaptureQueriesContext

from reconsolidation.dry_run import dry_run_slice
from reconsolidation import bounds
from reconsolidation import driver
from reconsolidation.models import ReconsolidationGroup, ReconsolidationJob
from tests.factories import T0, make_owner
from evals.fixtures.bulk import bulk_originals
from tests.reconsolidation.helpers import groups_of, job_of, original, snapshot
from tests.reconsolidation.slices import Steps, flag_conflicts, no_change, owner_row_counts, pairs, slice_now
from veetbot.rls import owner_context

LEASE = timedelta(seconds=bounds.RECON_LEASE_SECONDS)


@pytest.fixture
def paired(db):
    principal, _ = make_owner()
    return principal, pairs(principal, 6)


def test_a_slice_scans_queues_and_hands_at_most_four_groups_to_the_model_then_releases(paired, enabled, store, day_one):
    principal, memories = paired
    seen = []

    def process(store, principal, group_lease, *, now):
        seen.append(group_lease.group_id)
        return flag_conflicts(store, principal, group_lease, now=now)

    run = slice_now(store, principal, day_one, process=process)
    assert run.report.full_anchors == len(memories)
    assert len(run.report.groups_queued) == bounds.RECON_SLICE_MAX_GROUPS
    assert run.groups_processed == len(seen) == bounds.RECON_SLICE_MAX_GROUPS and run.stopped == "max_groups"
    assert [op.kind for op in run.operations] == ["flag_conflict"] * 4
    assert run.spend_usd == 0  # this processor reserved nothing
    assert run.generation_complete and run.groups_pending == 0
    with owner_context(principal):
        job = ReconsolidationJob.objects.get()
    assert job.lease_token is None  # released: the next slice may start at once
    # still due exactly while the model lane has anchors left to queue
    assert (store.claim_due(principal, lease_owner="next", now=day_one) is None) == run.coverage.model_complete


def test_a_slice_reads_no_count_over_the_whole_job_and_the_report_reads_them_after(paired, enabled, store, day_one):
    """The job's model coverage counts every receipt and group of the generation (100,000 at
    the spec's scale): never inside a slice, only when reported."""
    principal, memories = paired
    reset_queries()
    with CaptureQueriesContext(connection) as captured:
        run = slice_now(store, principal, day_one, process=flag_conflicts)
    read = [q["sql"] for q in captured.captured_queries]
    assert not [q for q in read if "FROM reconsolidation_reconsolidationanchorreceipt r" in q]  # MODEL_COVERAGE
    assert not [q for q in read if "job_groups" in q]  # MODEL_REACH
    assert run.report.coverage.groupable_anchors is None and run.coverage.groups_sent is None  # not read: None, not 0
    reported = driver.coverage_after(run)
    assert reported.groupable_anchors == len(memories) and reported.groups_formed == len(run.report.groups_queued)
    assert reported.groups_processed == run.groups_processed


def test_without_a_per_group_processor_the_slice_hands_its_claimed_groups_to_one_batch(paired, enabled, store,
                                                                                       day_one, settings):
    from evals.reconsolidation.responder import HeuristicResponder
    from reconsolidation.models import ReconsolidationSpend

    settings.RECON_SCRIPTED_PROVIDER_ALLOWED = True
    principal, _ = paired
    responder = HeuristicResponder()
    run = slice_now(store, principal, day_one, process=None, provider=responder)
    assert run.groups_processed == bounds.RECON_SLICE_MAX_GROUPS and run.stopped == "max_groups"
    assert responder.requests == 2  # one proposal and one verification for all four groups
    with owner_context(principal):
        states = set(ReconsolidationGroup.objects.values_list("state", flat=True))
        audits = [s.call_audit for s in ReconsolidationSpend.objects.all()]
    assert "leased" not in states  # every claimed group ended the slice with a durable outcome
    proposal, verification = audits  # one reservation per request, each naming the whole batch
    assert proposal["group_ids"] == verification["group_ids"] and proposal["batch_id"] == verification["batch_id"]
    assert 1 <= len(proposal["group_ids"]) <= bounds.RECON_SLICE_MAX_GROUPS  # a group crowded out waits: batch_full


def test_the_rules_provider_runs_every_claimed_group_of_the_batch(paired, enabled, store, day_one):
    principal, _ = paired
    run = slice_now(store, principal, day_one, process=None)  # the configured provider: rules
    assert run.groups_processed == bounds.RECON_SLICE_MAX_GROUPS and run.stopped == "max_groups"
    with owner_context(principal):
        finished = ReconsolidationGroup.objects.exclude(state__in=("pending", "leased")).count()
    assert finished == bounds.RECON_SLICE_MAX_GROUPS


def test_no_group_of_the_batch_is_claimed_at_or_after_the_slice_deadline(paired, enabled, store, day_one):
    principal, _ = paired
    # reads: the start, the inventory, the renewal check; from the first claim on, the deadline
    readings = iter([0.0] * 3 + [float(bounds.RECON_SLICE_DEADLINE_SECONDS)] * 100)
    run = slice_now(store, principal, day_one, process=None, monotonic=lambda: next(readings))
    assert run.stopped == "deadline" and run.groups_processed == 0
    assert run.groups_pending == bounds.RECON_SLICE_MAX_GROUPS  # left for the next slice, not lost


def test_nothing_due_or_a_lease_held_elsewhere_returns_none_and_writes_nothing(paired, enabled, store, day_one):
    principal, _ = paired
    held = store.claim_due(principal, lease_owner="other", now=day_one)
    before = snapshot(principal)
    assert slice_now(store, principal, day_one + timedelta(seconds=10)) is None
    assert snapshot(principal) == before
    store.release(principal, held.lease_token, now=day_one)


def test_the_slice_renews_its_lease_every_renew_interval_while_groups_are_processed(paired, enabled, store, day_one):
    principal, _ = paired
    observed = []

    def process(store, principal, group_lease, *, now):
        with owner_context(principal):
            observed.append((now, ReconsolidationJob.objects.get().lease_expires_at))
        return no_change(store, principal, group_lease, now=now)

    # Reads: claim, inventory, then one per loop turn; each turn is RECON_RENEW_SECONDS + 1 later.
    slice_now(store, principal, day_one, process=process, monotonic=Steps(bounds.RECON_RENEW_SECONDS + 1, start=2))
    assert len(observed) >= 2
    for now, expires in observed:  # renewed just before each group: a full lease ahead of it
        assert expires == now + LEASE


def test_no_group_starts_at_or_after_the_slice_deadline(paired, enabled, store, day_one):
    principal, _ = paired
    step = bounds.RECON_SLICE_DEADLINE_SECONDS / 2  # turns at +60 s, +120 s (the deadline)
    run = slice_now(store, principal, day_one, monotonic=Steps(step, start=2))
    assert run.stopped == "deadline" and run.groups_processed == 1
    assert run.groups_pending == bounds.RECON_SLICE_MAX_GROUPS - 1  # left for the next slice, not lost


def test_a_crash_mid_slice_leaves_the_lease_to_expire_and_the_next_claim_recovers_the_group(paired, enabled, store, day_one):
    principal, _ = paired
    calls = []

    def crashing(store, principal, group_lease, *, now):
        calls.append(group_lease.group_id)
        if len(calls) == 2:
            raise RuntimeError("worker died")
        return no_change(store, principal, group_lease, now=now)

    with pytest.raises(RuntimeError):
        slice_now(store, principal, day_one, process=crashing)
    crashed = calls[1]
    assert slice_now(store, principal, day_one + LEASE - timedelta(seconds=1)) is None  # still leased
    with owner_context(principal):
        assert ReconsolidationGroup.objects.get(id=crashed).state == "leased"
    run = slice_now(store, principal, day_one + LEASE + timedelta(seconds=1), process=no_change)
    with owner_context(principal):
        recovered = ReconsolidationGroup.objects.get(id=crashed)
        first = ReconsolidationGroup.objects.get(id=calls[0])
    assert recovered.retry_count == 1 and recovered.attempt_count == 2 and recovered.state == "no_change"
    assert first.state == "no_change" and first.attempt_count == 1  # a finished sibling is not redone
    assert run.groups_processed >= 1


def test_a_group_that_crashes_three_times_fails_terminally(db, enabled, store, day_one):
    principal, _ = make_owner()
    pairs(principal, 1)

    def crashing(store, principal, group_lease, *, now):
        raise RuntimeError("worker died")

    now = day_one
    for _ in range(bounds.RECON_MAX_GROUP_ATTEMPTS):
        with pytest.raises(RuntimeError):
            slice_now(store, principal, now, process=crashing)
        now += LEASE + timedelta(seconds=1)
    last = slice_now(store, principal, now)  # its claim recovers the third crash: terminal
    assert last.groups_processed == 0 and driver.coverage_after(last).groups_failed == 1 and last.groups_pending == 0
    (group,) = groups_of(principal)
    assert group.state == "failed" and group.retry_count == bounds.RECON_MAX_GROUP_ATTEMPTS


def test_switching_processing_off_mid_slice_admits_no_further_group_and_releases(paired, settings, store, day_one):
    settings.AGENT_MEMORY_RECONSOLIDATION_ENABLED = True
    principal, _ = paired

    def switch_off(store, principal, group_lease, *, now):
        settings.AGENT_MEMORY_RECONSOLIDATION_ENABLED = False
        return no_change(store, principal, group_lease, now=now)

    run = slice_now(store, principal, day_one, process=switch_off)
    assert run.stopped == "disabled" and run.groups_processed == 1 and run.groups_pending == 3
    assert job_of(principal).lease_token is None


def test_until_idle_completes_the_generation_within_ceil_n_over_64_slices(db, enabled, store, day_one):
    principal, _ = make_owner()
    n = 300
    bulk_originals(principal, n, at=T0, clusters=60)  # groups of five across the bank
    runs, stopped = driver.run_until_idle(principal, lease_owner="test", store=store, process=no_change,
                                          now=day_one)
    assert stopped == "idle"
    assert runs[-1].generation_complete and runs[-1].groups_pending == 0
    assert not any(run.generation_complete for run in runs[:-1]) or runs[-1].report.full_anchors == 0
    scanning = [run for run in runs if run.report.full_anchors]
    assert len(scanning) <= math.ceil(n / bounds.RECON_SLICE_FULL_LANE_ANCHORS)
    assert sum(run.report.full_anchors for run in runs) == n
    assert sum(run.groups_processed for run in runs) == sum(len(run.report.groups_queued) for run in runs) > 0
    assert driver.run_slice(principal, lease_owner="test", store=store, now=day_one, process=no_change) is None


def test_until_idle_stops_when_every_group_is_deferred_instead_of_spinning(paired, enabled, store, day_one):
    principal, _ = paired

    def defer(store, principal, group_lease, *, now):
        store.finish_group(principal, group_lease, outcome="deferred", reason="slice_budget", now=now)
        return ()

    runs, stopped = driver.run_until_idle(principal, lease_owner="test", store=store, process=defer, now=day_one)
    assert stopped == "no_progress" and len(runs) == 2
    assert runs[-1].groups_pending == runs[-1].report.coverage.groups_pending > 0


def test_the_dry_run_previews_the_next_slice_exactly_and_writes_nothing(db, enabled, store, day_one):
    principal, _ = make_owner()
    memories = pairs(principal, 6)
    excluded = original(principal, "A restricted note.", subject="pair 0", sensitivity="restricted")
    before = owner_row_counts(principal)
    preview = dry_run_slice(principal, now=day_one)
    assert owner_row_counts(principal) == before

    assert preview.due and preview.new_generation and preview.generation == 1
    assert {a.memory_id for a in preview.anchors} == {m.id for m in memories} | {excluded.id}
    (flagged,) = [a for a in preview.anchors if a.outcome == "excluded"]
    assert flagged.memory_id == excluded.id and flagged.reason
    assert len(preview.groups) == bounds.RECON_SLICE_MAX_GROUPS

    run = slice_now(store, principal, day_one)
    queued = {tuple(str(i) for i in g.input_ids) for g in groups_of(principal)}
    assert {tuple(str(m) for m in g.members) for g in preview.groups} == queued
    assert run.report.excluded == 1


def test_a_dry_run_with_nothing_due_says_so(paired, enabled, store, day_one):
    principal, _ = paired
    driver.run_until_idle(principal, lease_owner="test", store=store, process=no_change, now=day_one)
    before = owner_row_counts(principal)
    preview = dry_run_slice(principal, now=day_one + timedelta(minutes=5))
    assert not preview.due and preview.anchors == () and preview.pending_groups == 0
    assert owner_row_counts(principal) == before


def test_a_slice_whose_equivalence_merges_fill_its_operation_bound_claims_no_model_group(db, settings):
    """Eight exact-copy sets give the slice its eight operations in the equivalence pass; a
    queued group claimed after that could only defer (operation budget) after paying for
    its calls, so the slice claims none and the group waits for the next slice."""
    from reconsolidation.store import ReconsolidationStore
    from veetbot.rls import owner_context

    settings.AGENT_MEMORY_RECONSOLIDATION_ENABLED = True
    owner, _ = make_owner()
    for k in range(bounds.RECON_SLICE_MAX_OPERATIONS):
        for c in range(2):
            original(owner, f"Locker {k} code is private.", subject=f"locker {k}", at=T0 + timedelta(minutes=k + c),
                     valid_from=T0)
    original(owner, "The owner runs on Tuesdays.", subject="running", at=T0 + timedelta(hours=1))
    original(owner, "The owner runs along the river.", subject="running", at=T0 + timedelta(hours=1, minutes=1))
    run = driver.run_slice(owner, lease_owner="test", store=ReconsolidationStore(), now=T0 + timedelta(days=1, hours=4))
    assert len(run.operations) == bounds.RECON_SLICE_MAX_OPERATIONS and run.stopped == "operation_budget"
    assert run.groups_processed == 0
    with owner_context(owner):
        assert ReconsolidationGroup.objects.filter(state="pending", origin="neighbours").exists()


def test_until_idle_counts_a_failed_attempt_as_progress_and_ends_with_the_groups_terminal(
        paired, enabled, store, day_one):
    principal, _ = paired

    def refuse(store, principal, group_lease, *, now):  # a provider refusing every batch
        store.finish_group(principal, group_lease, outcome="failed", reason="provider_error", now=now)
        return ()

    runs, stopped = driver.run_until_idle(principal, lease_owner="test", store=store, process=refuse, now=day_one)
    assert stopped == "idle"
    final = driver.coverage_after(runs[-1])
    assert runs[-1].groups_pending == 0 and final.groups_failed > 0
    assert runs[-1].coverage.failed_attempts == 0  # attempts are counted on waiting groups; none waits
    assert any(run.coverage.failed_attempts > 0 for run in runs)  # a retried group waited in between
    with owner_context(principal):
        failed = ReconsolidationGroup.objects.filter(state="failed", origin="neighbours")
        assert failed.count() == final.groups_failed
        assert set(failed.values_list("retry_count", flat=True)) == {bounds.RECON_MAX_GROUP_ATTEMPTS}
