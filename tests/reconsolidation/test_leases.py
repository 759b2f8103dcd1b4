"""Jobs and leases: daily due work, one live lease per owner, expiry as crash recovery,
stale tokens refused without mutation, coalesced missed days and the kill switch."""
from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from memory import services
from reconsolidation import bounds
from reconsolidation.domain import input_digest
from reconsolidation.errors import Invalid, LeaseLost, ReconsolidationDisabled
from reconsolidation.leases import due_day_for
from reconsolidation.models import ReconsolidationJob
from tests.factories import T0, make_owner
from tests.reconsolidation.helpers import (
    digest, drain, job_of, original, proposal, refs, run_slice, snapshot,
)
from veetbot.rls import owner_context

LEASE = timedelta(seconds=bounds.RECON_LEASE_SECONDS)


@pytest.fixture
def bank(db):
    principal, _ = make_owner()
    a = original(principal, "The owner prefers Celsius.", subject="units")
    b = original(principal, "The owner prefers Celsius for weather.", subject="units")
    return principal, a, b


def test_the_daily_due_time_decides_the_due_day():
    assert due_day_for(datetime(2026, 9, 2, 2, 59, tzinfo=timezone.utc)).isoformat() == "2026-09-01"
    assert due_day_for(datetime(2026, 9, 2, 3, 0, tzinfo=timezone.utc)).isoformat() == "2026-09-02"


def test_claim_creates_one_durable_job_and_a_single_live_lease(bank, enabled, store, day_one):
    principal, *_ = bank
    lease = store.claim_due(principal, lease_owner="w1", now=day_one)
    assert lease.due_day == day_one.date() and lease.generation == 1 and lease.attempt == 1
    assert lease.lease_expires_at == day_one + LEASE
    assert lease.slice_deadline_at == day_one + timedelta(seconds=bounds.RECON_SLICE_DEADLINE_SECONDS)
    assert store.claim_due(principal, lease_owner="w2", now=day_one + timedelta(seconds=179)) is None
    with owner_context(principal):
        assert ReconsolidationJob.objects.count() == 1


def test_a_new_owner_gets_no_job_before_its_first_original_so_a_same_day_import_is_dreamt_today(db, enabled, store, day_one):
    principal, _ = make_owner()
    assert store.claim_due(principal, lease_owner="w1", now=day_one) is None
    with owner_context(principal):
        assert ReconsolidationJob.objects.count() == 0
    original(principal, "The owner prefers Celsius.", subject="units")
    lease = store.claim_due(principal, lease_owner="w1", now=day_one + timedelta(minutes=5))
    assert lease is not None and lease.due_day == day_one.date() and lease.generation == 1


def test_an_expired_lease_is_a_crash_and_another_worker_takes_over(bank, enabled, store, day_one):
    principal, *_ = bank
    first = store.claim_due(principal, lease_owner="crashed", now=day_one)
    later = day_one + LEASE + timedelta(seconds=1)
    second = store.claim_due(principal, lease_owner="w2", now=later)
    assert second is not None and second.job_id == first.job_id
    assert second.lease_token != first.lease_token and second.attempt == 2
    assert second.generation == first.generation  # the saved cursor continues
    with pytest.raises(LeaseLost):
        store.renew(principal, first.job_id, first.lease_token, now=later)


def test_a_stale_lease_token_cannot_renew_queue_plan_checkpoint_claim_reserve_settle_or_commit(bank, enabled, store, day_one):
    principal, a, b = bank
    old = store.claim_due(principal, lease_owner="old", now=day_one)
    claimed = store.queue_group(principal, lease_token=old.lease_token, inputs=refs(a, b),
                                input_digest=input_digest(refs(a, b)), now=day_one)
    group = store.claim_group(principal, lease_token=old.lease_token, now=day_one)
    reservation = store.reserve(principal, group, request_digest=digest("r"), maximum_usd="0.01", now=day_one)
    plan = store.plan_slice(principal, lease_token=old.lease_token, now=day_one)
    later = day_one + LEASE + timedelta(seconds=5)
    new = store.claim_due(principal, lease_owner="new", now=later)  # recovery happens here
    before = snapshot(principal)
    attempts = [
        lambda: store.renew(principal, old.job_id, old.lease_token, now=later),
        lambda: store.queue_group(principal, lease_token=old.lease_token, inputs=refs(a, b),
                                  input_digest=input_digest(refs(a, b)), now=later),
        lambda: store.plan_slice(principal, lease_token=old.lease_token, now=later),
        lambda: store.checkpoint(principal, lease_token=old.lease_token, plan=plan, now=later),
        lambda: store.claim_group(principal, lease_token=old.lease_token, now=later),
        lambda: store.reserve(principal, group, request_digest=digest("r2"), maximum_usd="0.01", now=later),
        lambda: store.settle(principal, reservation.id, outcome="verified", actual_usd="0.001",
                             lease_token=old.lease_token, now=later),
        lambda: store.commit(principal, group, expected_inputs=group.inputs, expected_fence=0,
                             proposal=proposal("merge_equivalent", group.inputs), now=later),
        lambda: store.finish_group(principal, group, outcome="completed", now=later),
        lambda: store.release(principal, old.lease_token, now=later),
    ]
    for attempt in attempts:
        with pytest.raises(LeaseLost):
            attempt()
    assert snapshot(principal) == before
    assert new is not None and claimed.id == group.group_id


def test_renewal_extends_the_lease_but_never_the_slice_deadline(bank, enabled, store, day_one):
    principal, *_ = bank
    lease = store.claim_due(principal, lease_owner="w", now=day_one)
    renewed = store.renew(principal, lease.job_id, lease.lease_token, now=day_one + timedelta(seconds=30))
    assert renewed.lease_expires_at == day_one + timedelta(seconds=30) + LEASE
    assert renewed.slice_deadline_at == lease.slice_deadline_at
    with pytest.raises(LeaseLost, match="slice_deadline"):
        store.renew(principal, lease.job_id, lease.lease_token, now=lease.slice_deadline_at)


def test_a_released_lease_lets_the_next_slice_start_at_once(bank, enabled, store, day_one):
    principal, *_ = bank
    lease = store.claim_due(principal, lease_owner="w", now=day_one)
    store.release(principal, lease.lease_token, now=day_one)
    with pytest.raises(LeaseLost):
        store.renew(principal, lease.job_id, lease.lease_token, now=day_one)


def test_a_lease_shorter_than_the_slice_deadline_is_refused(bank, enabled, store, day_one):
    principal, *_ = bank
    with pytest.raises(Invalid):
        store.claim_due(principal, lease_owner="w", lease_seconds=60, now=day_one)


def test_missed_days_coalesce_into_one_job_not_a_backlog(bank, enabled, store, day_one):
    principal, *_ = bank
    _, report = run_slice(store, principal, day_one)
    assert report.job_completed  # two originals: one slice scans the generation
    week_later = day_one + timedelta(days=7)
    lease, report = run_slice(store, principal, week_later)
    with owner_context(principal):
        days = list(ReconsolidationJob.objects.order_by("due_day").values_list("due_day", "full_generation"))
    assert days == [(day_one.date(), 1), (week_later.date(), 2)]  # one job for the whole week, next generation
    # Today's scan is done; queued model work keeps today's job claimable, and nothing else.
    later = week_later + timedelta(hours=1)
    lease = store.claim_due(principal, lease_owner="w", now=later)
    assert lease.due_day == week_later.date()
    drain(store, principal, lease, later)
    store.release(principal, lease.lease_token, now=later)
    assert store.claim_due(principal, lease_owner="w", now=later) is None
    with owner_context(principal):
        assert ReconsolidationJob.objects.count() == 2


def test_an_unfinished_scan_is_continued_across_days_not_restarted(db, enabled, store, day_one):
    principal, _ = make_owner()
    from evals.fixtures.bulk import bulk_originals

    bulk_originals(principal, 300, at=T0, clusters=300)
    _, first = run_slice(store, principal, day_one)
    assert not first.job_completed and first.full_through == 128
    _, second = run_slice(store, principal, day_one + timedelta(days=3))
    job = job_of(principal)
    assert (job.due_day, job.full_generation) == (day_one.date(), 1)
    assert second.full_from == 128


def test_the_next_generation_rotates_the_grouping_start_key(db, enabled, store, day_one):
    principal, _ = make_owner()
    for n in range(5):
        original(principal, f"Statement number {n}.", subject=f"s{n}")
    run_slice(store, principal, day_one)
    first = job_of(principal)
    run_slice(store, principal, day_one + timedelta(days=1))
    second = job_of(principal)
    assert (first.full_generation, second.full_generation) == (1, 2)
    assert first.full_start_key != second.full_start_key
    assert 1 <= second.full_start_key <= second.full_high_watermark


def test_the_kill_switch_stops_new_slices_and_model_admission_but_not_settlement_or_invalidation(bank, settings, store, day_one):
    principal, a, b = bank
    settings.AGENT_MEMORY_RECONSOLIDATION_ENABLED = True
    lease = store.claim_due(principal, lease_owner="w", now=day_one)
    store.queue_group(principal, lease_token=lease.lease_token, inputs=refs(a, b), input_digest=input_digest(refs(a, b)),
                      now=day_one)
    group = store.claim_group(principal, lease_token=lease.lease_token, now=day_one)
    reservation = store.reserve(principal, group, request_digest=digest("r"), maximum_usd="0.02", now=day_one)
    store.commit(principal, group, expected_inputs=group.inputs, expected_fence=0,
                 proposal=proposal("flag_conflict", group.inputs), now=day_one)

    settings.AGENT_MEMORY_RECONSOLIDATION_ENABLED = False
    with pytest.raises(ReconsolidationDisabled):
        store.claim_due(principal, lease_owner="other", now=day_one + timedelta(days=1))
    with pytest.raises(ReconsolidationDisabled):
        store.claim_group(principal, lease_token=lease.lease_token, now=day_one)
    with pytest.raises(ReconsolidationDisabled):
        store.reserve(principal, group, request_digest=digest("r2"), maximum_usd="0.01", now=day_one)
    receipt = store.settle(principal, reservation.id, outcome="verified", actual_usd="0.005",
                           lease_token=lease.lease_token, now=day_one)
    assert receipt.state == "settled"
    store.finish_group(principal, group, outcome="completed", now=day_one)
    invalidation = store.invalidate(principal, [a.id], reason="revised", now=day_one)
    assert len(invalidation.staled) == 1
    services.memory_erase(principal=principal, memory_id=b.id, now=day_one)  # erasure unaffected
    store.release(principal, lease.lease_token, now=day_one)
