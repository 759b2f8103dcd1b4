"""The model lane: a durable model cursor beside the two scan cursors reaches every
groupable anchor of a generation across its slices, oldest first from the generation's
rotated start key, within the pending cap — an anchor a slice cannot take is ``queued``
for a later slice of the same generation, never a ``not_selected`` dead end; the next
generation starts its model lane elsewhere.

Real PostgreSQL; slices are claim -> inventory -> checkpoint -> release, with queued model
work finished ``no_change``."""
from __future__ import annotations

from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from reconsolidation import bounds
from reconsolidation.driver import inventory_slice
from memory.models import Memory
from reconsolidation.inventory.coverage import coverage
from reconsolidation.inventory.lanes import MODEL_LANE_MAX_ANCHORS, MODEL_LANE_RESERVED_GROUPS
from reconsolidation.models import ReconsolidationGroup
from reconsolidation.leases import rotated_start_key
from tests.factories import T0, make_owner
from evals.fixtures.bulk import bulk_originals, bulk_touch
from tests.reconsolidation.helpers import drain, groups_of, job_of, receipts_of
from tests.reconsolidation.inventory.test_equivalence_pass import one_slice
from veetbot.rls import owner_context

DECIDED = {"grouped", "duplicate", "no_neighbours"}


@pytest.fixture
def owner(db):
    return make_owner()[0]



def test_a_run_of_isolated_anchors_costs_the_model_lane_a_few_doubling_statements(owner, enabled, store, day_one):
    bulk_originals(owner, 200, at=T0, clusters=200)  # unique subjects: no neighbours
    with CaptureQueriesContext(connection) as captured:
        report = one_slice(store, owner, day_one)
    lookups = [q for q in captured.captured_queries if "FROM reconsolidation_neighbours(" in q["sql"]]
    # The lane decides its 128 anchors in statements of 2, 4, 8, 16, 32, 64 and the last 2
    # (64 statements of 2 without the doubling).
    assert MODEL_LANE_MAX_ANCHORS == 128 and bounds.RECON_NEIGHBOUR_BATCH_ANCHORS == 2
    assert len(lookups) == 7
    assert job_of(owner).model_anchors == MODEL_LANE_MAX_ANCHORS and report.groups_queued == ()
    decided = [r for r in receipts_of(owner).values() if r.model_generation == 1]
    assert len(decided) == MODEL_LANE_MAX_ANCHORS and {r.outcome for r in decided} == {"no_neighbours"}

def test_the_model_lane_reaches_every_groupable_anchor_across_the_slices_of_one_generation(
        owner, enabled, store, day_one):
    ids = bulk_originals(owner, 120, at=T0, clusters=6)  # every original shares a subject with 19 others
    now, reports = day_one, []
    while not reports or not reports[-1].job_completed:
        reports.append(one_slice(store, owner, now))
        assert len(reports) < 200, "the generation never completed"
        now += timedelta(seconds=5)
    first = reports[0]
    assert first.coverage.scan_complete  # one slice scans the whole bank ...
    assert len(first.groups_queued) == bounds.RECON_SLICE_MAX_GROUPS  # ... but takes four groups
    assert first.not_selected == 0 and first.coverage.not_selected == 0  # the rest stays queued
    assert len(reports) > 1  # later slices of the same generation carry the model lane on
    assert all(report.coverage.generation == 1 for report in reports)
    receipts = receipts_of(owner)
    assert set(receipts) == set(ids)
    assert {r.outcome for r in receipts.values()} <= DECIDED  # every anchor was reached
    assert all(r.model_generation == 1 for r in receipts.values())
    grouped = [r for r in receipts.values() if r.outcome == "grouped"]
    assert len(grouped) == len(groups_of(owner)) > bounds.RECON_SLICE_MAX_GROUPS
    assert all(len(report.groups_queued) <= bounds.RECON_SLICE_MAX_GROUPS for report in reports)
    job = job_of(owner)
    assert job.state == "completed" and job.model_phase == 2 and job.model_anchors == len(ids)
    with owner_context(owner):  # once the last slice's groups are processed
        assert coverage(owner, job).model_complete


def test_queued_anchors_are_reported_queued_not_dead_ends(owner, enabled, store, day_one):
    bulk_originals(owner, 100, at=T0, clusters=2)
    report = one_slice(store, owner, day_one)
    outcomes = [r.outcome for r in receipts_of(owner).values()]
    assert outcomes.count("not_selected") == 0
    assert outcomes.count("queued") > 0
    assert not report.job_completed and job_of(owner).state == "open"


def test_the_model_lane_keeps_its_place_at_the_pending_cap(owner, enabled, store, day_one, monkeypatch):
    monkeypatch.setattr(bounds, "RECON_PENDING_MAX_GROUPS", 2)
    bulk_originals(owner, 60, at=T0, clusters=6)
    lease = store.claim_due(owner, lease_owner="w", now=day_one)
    first = inventory_slice(store, owner, lease, now=day_one)
    store.release(owner, lease.lease_token, now=day_one)  # nothing processed: the queue is full
    assert len(first.groups_queued) == 2
    cursor = job_of(owner).model_cursor_sequence
    lease = store.claim_due(owner, lease_owner="w", now=day_one + timedelta(seconds=1))
    paused = inventory_slice(store, owner, lease, now=day_one + timedelta(seconds=1))
    assert paused.paused and job_of(owner).model_cursor_sequence == cursor
    drain(store, owner, lease, day_one)
    store.release(owner, lease.lease_token, now=day_one + timedelta(seconds=1))
    resumed = one_slice(store, owner, day_one + timedelta(seconds=2))
    assert len(resumed.groups_queued) == 2 and job_of(owner).model_cursor_sequence > cursor


def test_the_next_generation_starts_its_model_lane_at_the_rotated_start_key(owner, enabled, store, day_one):
    ids = bulk_originals(owner, 300, at=T0, clusters=3)  # more than one slice's model-lane anchors
    now = day_one
    while not one_slice(store, owner, now).job_completed:
        now += timedelta(seconds=5)
    second_day = day_one + timedelta(days=1)
    one_slice(store, owner, second_day)
    job = job_of(owner)
    start = rotated_start_key(2, len(ids))
    assert job.full_generation == 2 and job.full_start_key == start > 1
    # Its first slice walked from the start key on (phase 0), not from the oldest key.
    assert job.model_generation == 2 and job.model_phase == 0
    assert start <= job.model_cursor_sequence <= start - 1 + MODEL_LANE_MAX_ANCHORS
    with owner_context(owner):
        sequences = dict(Memory.objects.values_list("id", "creation_sequence"))
    decided_now = sorted(sequences[r.memory_id] for r in receipts_of(owner).values() if r.model_generation == 2)
    assert decided_now == list(range(start, job.model_cursor_sequence + 1))


def test_a_stream_of_changes_cannot_take_the_model_lanes_slots(owner, enabled, store, day_one):
    ids = bulk_originals(owner, 200, at=T0, clusters=40)  # 40 subjects of 5: many groups to find
    one_slice(store, owner, day_one)
    now = day_one + timedelta(seconds=5)
    bulk_touch(owner, ids[-120:], at=now)  # more changed anchors than the slice has group slots
    cursor = job_of(owner).model_cursor_sequence
    report = one_slice(store, owner, now)
    with owner_context(owner):
        lanes = list(ReconsolidationGroup.objects.filter(id__in=report.groups_queued).values_list("lane", flat=True))
    assert lanes.count("changed") == bounds.RECON_SLICE_MAX_GROUPS - MODEL_LANE_RESERVED_GROUPS
    assert lanes.count("full") == MODEL_LANE_RESERVED_GROUPS  # the model lane got its reserved slots
    assert job_of(owner).model_cursor_sequence > cursor


def test_a_changed_anchor_beyond_the_generation_is_not_promised_to_its_model_lane(owner, enabled, store, day_one):
    bulk_originals(owner, 60, at=T0, clusters=6)
    one_slice(store, owner, day_one)
    late = day_one + timedelta(seconds=5)
    newcomers = bulk_originals(owner, 30, at=late, clusters=1_000_003, journal_entries=True)  # after the watermark
    report = one_slice(store, owner, late)
    assert report.changed_anchors == len(newcomers)
    receipts = receipts_of(owner)
    outcomes = {receipts[i].outcome for i in newcomers}
    assert "queued" not in outcomes  # the next generation's lane reaches them, not this one's
    assert outcomes <= {"grouped", "duplicate", "no_neighbours", "not_selected"}
