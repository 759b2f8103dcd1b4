"""The processing kill switch (AGENT_MEMORY_RECONSOLIDATION_ENABLED=false) at the slice
driver: no new slice, no dry run, no beat work — and nothing written by the refusal —
while invalidation and the recorded history of earlier slices stay available."""
from __future__ import annotations

import pytest

from reconsolidation.dry_run import dry_run_slice
from reconsolidation import driver
from reconsolidation.errors import ReconsolidationDisabled
from reconsolidation.models import ReconsolidationOperation
from tests.factories import make_owner
from tests.reconsolidation.slices import owner_row_counts, pairs, row_counts, slice_now
from veetbot.rls import owner_context


@pytest.fixture
def bank(db):
    principal, _ = make_owner()
    return principal, pairs(principal, 3)


def test_with_processing_off_no_slice_starts_and_nothing_is_written(bank, settings, store, day_one):
    settings.AGENT_MEMORY_RECONSOLIDATION_ENABLED = False
    principal, _ = bank
    before, everything = owner_row_counts(principal), row_counts()
    with pytest.raises(ReconsolidationDisabled, match="disabled"):
        slice_now(store, principal, day_one)
    with pytest.raises(ReconsolidationDisabled):
        driver.run_until_idle(principal, lease_owner="test", store=store, now=day_one)
    with pytest.raises(ReconsolidationDisabled):
        dry_run_slice(principal, now=day_one)
    assert owner_row_counts(principal) == before and row_counts() == everything


def test_switching_off_keeps_earlier_history_readable_and_invalidation_working(bank, settings, store, day_one):
    settings.AGENT_MEMORY_RECONSOLIDATION_ENABLED = True
    principal, memories = bank
    run = driver.run_slice(principal, lease_owner="test", store=store, now=day_one)  # the real rules provider
    assert run.operations
    settings.AGENT_MEMORY_RECONSOLIDATION_ENABLED = False
    source = run.operations[0].inputs[0].memory_id
    receipt = store.invalidate(principal, [source], reason="revised", now=day_one)
    assert run.operations[0].id in receipt.staled + receipt.invalidated
    with owner_context(principal):
        states = dict(ReconsolidationOperation.objects.values_list("id", "state"))
    assert set(states) == {op.id for op in run.operations}  # history kept, nothing deleted
    assert states[run.operations[0].id] in ("stale", "invalidated")


def test_the_switch_is_read_at_call_time_so_turning_it_back_on_resumes(bank, settings, store, day_one):
    principal, _ = bank
    settings.AGENT_MEMORY_RECONSOLIDATION_ENABLED = False
    with pytest.raises(ReconsolidationDisabled):
        slice_now(store, principal, day_one)
    settings.AGENT_MEMORY_RECONSOLIDATION_ENABLED = True
    assert slice_now(store, principal, day_one) is not None
