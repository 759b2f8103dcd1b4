"""Back-off and terminal groups: a deferred or failed group is never claimed again by the
slice that claimed it, so one outage costs one attempt per slice and the third failing
slice ends the group (audited); a group that can never fit ends terminal with that reason
and the queue moves on."""
from __future__ import annotations

from datetime import timedelta
from decimal import Decimal

import pytest

from reconsolidation import bounds
from reconsolidation.domain import input_digest
from reconsolidation.work.process import process_group
from reconsolidation.models import ReconsolidationAudit, ReconsolidationGroup
from tests.factories import make_owner
from tests.reconsolidation.helpers import original, refs, spend_of
from veetbot.rls import owner_context


@pytest.fixture
def owner(db):
    return make_owner()[0]


@pytest.fixture
def pairs(owner):
    """Two equivalent pairs: each a group the rules provider would merge."""
    return [[original(owner, f"The owner prefers {unit}.", subject="units") for _ in range(2)]
            for unit in ("Celsius", "metres")]


class Slices:
    """Consecutive slices of one owner, each a new lease a second after the last ended."""

    def __init__(self, store, owner, now):
        self.store, self.owner, self.now, self.lease = store, owner, now, None

    def next(self):
        if self.lease is not None:
            self.store.release(self.owner, self.lease.lease_token, now=self.now)
            self.now += timedelta(seconds=1)
        self.lease = self.store.claim_due(self.owner, lease_owner="w", now=self.now)
        assert self.lease is not None
        return self.lease

    def queue(self, memories, offset):
        return self.store.queue_group(self.owner, lease_token=self.lease.lease_token, inputs=refs(*memories),
                                      input_digest=input_digest(refs(*memories)),
                                      now=self.now + timedelta(microseconds=offset))

    def claim(self):
        return self.store.claim_group(self.owner, lease_token=self.lease.lease_token, now=self.now)


def group_row(owner, group_id):
    with owner_context(owner):
        return ReconsolidationGroup.objects.get(id=group_id)


def test_a_deferred_group_is_not_claimed_again_in_the_same_slice(owner, enabled, store, day_one, pairs):
    slices = Slices(store, owner, day_one)
    slices.next()
    older, newer = slices.queue(pairs[0], 0), slices.queue(pairs[1], 1)
    first = slices.claim()
    assert first.group_id == older.id
    store.finish_group(owner, first, outcome="deferred", reason="daily_budget", now=slices.now)
    second = slices.claim()
    assert second is not None and second.group_id == newer.id  # the deferred one backed off
    store.finish_group(owner, second, outcome="no_change", now=slices.now)
    assert slices.claim() is None
    slices.next()
    again = slices.claim()  # the next slice takes it, with its old age
    assert again.group_id == older.id and again.attempt == 2


def test_a_group_deferred_by_the_slice_budget_waits_for_the_next_slice(owner, enabled, store, day_one, pairs,
                                                                       monkeypatch):
    # Each rules call priced at most of the slice budget: the second group of a slice cannot fit.
    monkeypatch.setattr(bounds, "RECON_RULES_CALL_USD", bounds.RECON_SLICE_BUDGET_USD * Decimal("0.8"))
    slices = Slices(store, owner, day_one)
    slices.next()
    older, newer = slices.queue(pairs[0], 0), slices.queue(pairs[1], 1)
    assert process_group(store, owner, slices.claim(), now=slices.now)
    deferred = slices.claim()
    assert deferred.group_id == newer.id
    assert process_group(store, owner, deferred, now=slices.now) == ()
    assert (group_row(owner, newer.id).state, group_row(owner, newer.id).reason) == ("pending", "slice_budget")
    assert slices.claim() is None  # not again in this slice
    slices.next()
    assert process_group(store, owner, slices.claim(), now=slices.now)
    assert group_row(owner, newer.id).state == "completed"


def test_an_outage_costs_one_attempt_per_slice_and_the_third_slice_ends_the_group(owner, enabled, store, day_one,
                                                                                pairs, monkeypatch):
    def outage(_views):
        raise ConnectionError("provider down")

    monkeypatch.setattr("reconsolidation.providers.rules.provider.propose", outage)
    slices = Slices(store, owner, day_one)
    slices.next()
    group = slices.queue(pairs[0], 0)
    for attempt in range(1, bounds.RECON_MAX_GROUP_ATTEMPTS + 1):
        claimed = slices.claim()
        assert claimed.group_id == group.id and claimed.attempt == attempt
        assert process_group(store, owner, claimed, now=slices.now) == ()
        assert slices.claim() is None  # the outage does not burn another attempt in this slice
        row = group_row(owner, group.id)
        assert (row.retry_count, row.reason) == (attempt, "provider_error")
        slices.next()
    assert row.state == "failed"
    assert slices.claim() is None  # terminal
    with owner_context(owner):
        failed = ReconsolidationAudit.objects.get(event="group_failed", group_id=group.id)
    assert (failed.reason, failed.counts) == ("provider_error", {"attempts": 3, "failures": 3})
    reservations, _ = spend_of(owner)
    assert [r.state for r in reservations] == ["unknown"] * bounds.RECON_MAX_GROUP_ATTEMPTS  # one per slice


def test_a_group_priced_above_the_slice_ceiling_ends_terminal_and_the_queue_moves_on(owner, enabled, store, day_one,
                                                                                    pairs, monkeypatch):
    slices = Slices(store, owner, day_one)
    slices.next()
    over, other = slices.queue(pairs[0], 0), slices.queue(pairs[1], 1)
    monkeypatch.setattr(bounds, "RECON_RULES_CALL_USD", bounds.RECON_SLICE_BUDGET_USD + bounds.RECON_MONEY_QUANTUM_USD)
    assert process_group(store, owner, slices.claim(), now=slices.now) == ()
    row = group_row(owner, over.id)
    assert (row.state, row.reason) == ("failed", "above_slice_ceiling")
    with owner_context(owner):
        assert ReconsolidationAudit.objects.filter(event="group_failed", group_id=over.id,
                                                   reason="above_slice_ceiling").count() == 1
    monkeypatch.undo()
    assert process_group(store, owner, slices.claim(), now=slices.now)
    assert group_row(owner, other.id).state == "completed"
    slices.next()
    assert slices.claim() is None  # never queued again


@pytest.mark.parametrize("reason", ["above_slice_ceiling", "request_too_large", "group_excerpts_exceeded"])
def test_a_deferral_that_may_never_fit_counts_an_attempt_and_the_third_ends_the_group(owner, enabled, store, day_one,
                                                                                   pairs, reason):
    # A batch can give these reasons to a group only because of its siblings, so each costs
    # one attempt (the group may fit alone next slice) rather than ending it at once.
    slices = Slices(store, owner, day_one)
    slices.next()
    group = slices.queue(pairs[0], 0)
    for attempt in range(1, bounds.RECON_MAX_GROUP_ATTEMPTS + 1):
        store.finish_group(owner, slices.claim(), outcome="deferred", reason=reason, now=slices.now)
        row = group_row(owner, group.id)
        assert (row.retry_count, row.reason) == (attempt, reason)
        assert slices.claim() is None
        slices.next()
    assert (row.state, row.finished_at) == ("failed", slices.now - timedelta(seconds=1))
    assert slices.claim() is None


def test_an_unfittable_outcome_ends_the_group_at_once(owner, enabled, store, day_one, pairs):
    slices = Slices(store, owner, day_one)
    slices.next()
    group = slices.queue(pairs[0], 0)
    finished = store.finish_group(owner, slices.claim(), outcome="unfittable", reason="above_slice_ceiling",
                                  now=slices.now)
    assert (finished.state, finished.reason, finished.retry_count) == ("failed", "above_slice_ceiling", 0)
    with owner_context(owner):
        assert ReconsolidationAudit.objects.filter(event="group_failed", group_id=group.id).count() == 1
