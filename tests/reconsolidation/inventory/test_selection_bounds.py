"""Bounded, scoped selection: at most 128 anchors with 64 reserved for the full lane, at
most 4 groups of at most 32 eligible originals, filters before every bound, durable
receipts for every scanned anchor, the pending cap, and checkpoints that cannot skip."""
from __future__ import annotations

from datetime import timedelta

import pytest
from django.db import connection

from memory import services
from memory.domain import MemoryChanges
from reconsolidation import bounds, grouping
from reconsolidation.errors import Conflict
from reconsolidation.models import DerivedMemory, ReconsolidationGroup
from reconsolidation.driver import inventory_slice
from tests.factories import T0, make_owner
from evals.fixtures.bulk import bulk_originals, bulk_touch
from tests.reconsolidation.helpers import (
    groups_of, job_of, original, receipts_of, run_slice, snapshot,
)
from veetbot.rls import owner_context


def test_a_slice_scans_at_most_128_anchors_and_changes_never_displace_the_full_lane(db, enabled, store, day_one):
    principal, _ = make_owner()
    ids = bulk_originals(principal, 400, at=T0, clusters=400)
    _, first = run_slice(store, principal, day_one)
    assert (first.full_anchors, first.changed_anchors) == (128, 0)  # nothing changed: the full lane borrows all

    bulk_touch(principal, ids[-200:], at=day_one)  # 200 journal entries waiting
    _, second = run_slice(store, principal, day_one + timedelta(seconds=1))
    assert second.full_through - second.full_from == bounds.RECON_SLICE_FULL_LANE_ANCHORS
    assert second.changed_through - second.changed_from == bounds.RECON_SLICE_MAX_ANCHORS - 64
    assert second.full_anchors + second.changed_anchors <= bounds.RECON_SLICE_MAX_ANCHORS

    bulk_touch(principal, ids[:300], at=day_one)  # the journal keeps growing
    _, third = run_slice(store, principal, day_one + timedelta(seconds=2))
    assert third.full_through - third.full_from == 64 and third.changed_through - third.changed_from == 64

    reports = [run_slice(store, principal, day_one + timedelta(seconds=s))[1] for s in (3, 4, 5)]
    assert [r.full_through for r in reports] == [320, 384, 400]
    last = reports[-1]
    assert last.changed_through - last.changed_from == 128 - 16  # the changed lane borrows what is left


def test_every_scanned_anchor_gets_a_durable_receipt_even_without_neighbours(db, enabled, store, day_one):
    principal, _ = make_owner()
    ids = bulk_originals(principal, 100, at=T0, clusters=100)  # unique subjects: no neighbours
    _, report = run_slice(store, principal, day_one)
    receipts = receipts_of(principal)
    assert set(receipts) == set(ids)
    assert {r.outcome for r in receipts.values()} == {"no_neighbours"}
    assert {r.full_generation for r in receipts.values()} == {1}
    assert report.job_completed and report.coverage.scan_complete and report.groups_queued == ()


def test_at_most_four_groups_of_at_most_32_members_and_overflow_stays_queued(db, enabled, store, day_one):
    principal, _ = make_owner()
    ids = bulk_originals(principal, 100, at=T0, clusters=2)  # two subjects of 50 originals each
    ids += bulk_originals(principal, 24, at=T0 + timedelta(hours=1), clusters=12)  # and small subjects
    _, report = run_slice(store, principal, day_one)
    groups = groups_of(principal)
    assert 1 <= len(groups) <= bounds.RECON_SLICE_MAX_GROUPS
    assert all(2 <= len(g.input_ids) <= bounds.RECON_GROUP_MAX_MEMBERS for g in groups)
    assert any(len(g.input_ids) == 32 for g in groups)  # a 50-member subject is cut at 31 + the anchor
    receipts = receipts_of(principal)
    assert set(receipts) == set(ids)
    outcomes = [r.outcome for r in receipts.values()]
    assert outcomes.count("grouped") == len(groups) == len(report.groups_queued)
    # Overflow waits for the model lane of this generation (test_model_cursor.py), not a dead end.
    assert outcomes.count("queued") > 0 and outcomes.count("not_selected") == report.not_selected == 0
    assert report.coverage.not_selected == 0 and not report.coverage.model_complete


def test_filters_precede_the_bound_and_planted_ineligible_rows_never_join_a_group(db, enabled, store, day_one):
    principal, _ = make_owner()
    stranger, _ = make_owner("Stranger")
    shared = dict(subject="seat preference", entity_ids=("trip:alps",))
    text = "The owner prefers the window seat on long flights"
    anchor = original(principal, text + ".", at=T0, **shared)
    planted = [
        original(stranger, text + " too.", **shared),  # another owner
        original(principal, text + " always.", sensitivity="sensitive", **shared),
        original(principal, text + " ever.", sensitivity="restricted", **shared),
        original(principal, text + " here.", scope="project:alps", **shared),  # another local scope
        original(principal, text + " there.", portable=False, **shared),  # user scope, not portable
        original(principal, text + " inferred.", derivation="inferred", authority="INFERRED", **shared),
        original(principal, text + " said.", event_kind="assistant.message.created", speaker="assistant", **shared),
        original(principal, text + " excluded.", excluded=True, **shared),  # its only evidence is excluded
        original(principal, text + " expiring.", expires_at=T0 + timedelta(hours=1), **shared),
    ]
    retracted = original(principal, text + " retracted.", **shared)
    services.memory_revise(principal=principal, memory_id=retracted.id, changes=MemoryChanges(status="retracted"), now=T0)
    erased = original(principal, text + " erased.", **shared)
    services.memory_erase(principal=principal, memory_id=erased.id, now=T0)
    for n in range(40):  # more planted rows than a group holds, all created before the eligible ones
        planted.append(original(principal, f"{text} {n}.", sensitivity="restricted", **shared))
    eligible = [original(principal, f"{text} on day {n}.", at=T0 + timedelta(minutes=n), **shared) for n in range(3)]
    planted_ids = {m.id for m in planted} | {retracted.id, erased.id}

    lease = store.claim_due(principal, lease_owner="w", now=day_one)
    report = inventory_slice(store, principal, lease, now=day_one)
    groups = groups_of(principal)
    assert groups and all(not (set(g.input_ids) & planted_ids) for g in groups)
    assert set(groups[0].input_ids) == {anchor.id, *(m.id for m in eligible)}
    reasons = {memory_id: r.reason for memory_id, r in receipts_of(principal).items() if r.outcome == "excluded"}
    assert reasons[retracted.id] == "not_active" and reasons[erased.id] == "erased"
    assert reasons[planted[1].id] == "above_sensitivity" and reasons[planted[4].id] == "not_portable"
    assert reasons[planted[5].id] == "not_direct" and reasons[planted[6].id] == "no_owner_evidence"
    assert reasons[planted[7].id] == "no_owner_evidence" and reasons[planted[8].id] == "expired"
    assert planted[3].id not in reasons  # another local scope is eligible on its own, never with user scope
    assert report.excluded == len(reasons)


def test_local_scopes_group_only_with_the_same_local_scope(db, enabled, store, day_one):
    principal, _ = make_owner()
    text = "The team deploys on Fridays after review"
    alps = [original(principal, f"{text} {n}.", subject="deploys", scope="project:alps") for n in range(3)]
    others = [
        original(principal, f"{text} b.", subject="deploys", scope="project:beta"),
        original(principal, f"{text} u.", subject="deploys"),  # portable user scope
    ]
    run_slice(store, principal, day_one)
    by_anchor = {g.anchor_id: set(g.input_ids) for g in groups_of(principal)}
    alps_ids = {m.id for m in alps}
    for members in by_anchor.values():
        assert members == alps_ids or not (members & alps_ids)
    assert alps_ids in by_anchor.values()
    assert all(not ({m.id for m in others} & members) for members in by_anchor.values() if members == alps_ids)


def test_derived_projections_never_enter_inventory(db, enabled, store, day_one):
    principal, _ = make_owner()
    a = original(principal, "The owner prefers Celsius.", subject="units")
    b = original(principal, "The owner prefers Celsius readings.", subject="units")
    _, report = run_slice(store, principal, day_one)
    assert report.full_anchors == 2
    page = store.inventory(principal, generation=1, lane="full", cursor=0, limit=128, now=day_one)
    assert {ref.memory_id for ref in page.items} == {a.id, b.id}
    with owner_context(principal):
        assert not DerivedMemory.objects.exists()  # nothing generated: and none could be an anchor
        assert ReconsolidationGroup.objects.count() == 1


def test_changed_originals_are_offered_for_grouping_before_the_full_lane(db, enabled, store, day_one):
    principal, _ = make_owner()
    old = [original(principal, f"Old fact number {n} about gardens.", subject=f"garden {n % 8}") for n in range(64)]
    _, first = run_slice(store, principal, day_one)  # first generation, groups for the first anchors
    late = day_one + timedelta(days=1)
    recent = original(principal, "The owner moved the tomato bed.", subject="garden 3", at=late)
    lease = store.claim_due(principal, lease_owner="w", now=late)
    report = inventory_slice(store, principal, lease, now=late)
    assert report.changed_anchors >= 1
    assert any(g.anchor_id == recent.id for g in groups_of(principal))
    assert old


def test_a_full_pending_queue_pauses_selection_and_keeps_both_cursors(db, enabled, store, day_one, monkeypatch):
    monkeypatch.setattr(bounds, "RECON_PENDING_MAX_GROUPS", 2)
    principal, _ = make_owner()
    bulk_originals(principal, 200, at=T0, clusters=20)
    lease, first = run_slice(store, principal, day_one)
    assert len(first.groups_queued) == 2  # only the queue's headroom
    job = job_of(principal)
    _, paused = run_slice(store, principal, day_one + timedelta(seconds=1))
    assert paused.paused and paused.full_anchors == 0 and paused.groups_queued == ()
    after = job_of(principal)
    assert (after.full_cursor_sequence, after.changed_cursor_seq) == (job.full_cursor_sequence, job.changed_cursor_seq)
    assert not paused.coverage.scan_complete


def test_a_checkpoint_refuses_a_plan_that_skips_rows_or_starves_the_full_lane(db, enabled, store, day_one):
    principal, _ = make_owner()
    ids = bulk_originals(principal, 300, at=T0, clusters=300)
    store.release(principal, store.claim_due(principal, lease_owner="w", now=day_one).lease_token, now=day_one)
    bulk_touch(principal, ids[:100], at=day_one)  # after the generation started: the changed lane's
    lease = store.claim_due(principal, lease_owner="w", now=day_one)
    plan = store.plan_slice(principal, lease_token=lease.lease_token, now=day_one)
    assert plan.full.entries == 64 and plan.changed.entries == 64
    skipping = plan.model_copy(update={"full": plan.full.model_copy(update={"next_cursor": 200})})
    starving = plan.model_copy(update={
        "full": plan.full.model_copy(update={"entries": 10, "next_cursor": plan.full.items[9].creation_sequence}),
    })
    oversized = plan.model_copy(update={"changed": plan.changed.model_copy(update={"entries": 100})})
    before = snapshot(principal)
    for tampered in (skipping, starving, oversized):
        with pytest.raises(Conflict):
            store.checkpoint(principal, lease_token=lease.lease_token, plan=tampered, now=day_one)
    assert snapshot(principal) == before
    report = store.checkpoint(principal, lease_token=lease.lease_token, plan=plan, now=day_one)
    assert report.full_through == plan.full.next_cursor


def _key_index_entries_read() -> int:
    """Entries this transaction has read so far from the GIN indexes of the neighbour
    lookup's key probes (words and entity IDs)."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT COALESCE(sum(pg_stat_get_xact_tuples_returned(indexrelid)), 0) FROM pg_index"
                       " WHERE indrelid = 'memory_memory'::regclass AND indexrelid::regclass::text LIKE 'memory_recon_%%'"
                       " AND indexrelid::regclass::text NOT IN ('memory_recon_subject', 'memory_recon_equivalence')")
        return cursor.fetchone()[0]


@pytest.mark.parametrize("elsewhere", [
    lambda n: {},  # the shared scope
    lambda n: {"scope": f"project:kitchen-{n}", "portable": False},  # 80 other projects
], ids=["shared_scope", "other_local_scopes"])
def test_a_local_scope_anchor_reads_only_its_own_scopes_holders_of_its_words(db, enabled, day_one, elsewhere):
    """Each of the anchor's words is probed among its own scope's holders only (a local key
    is qualified by its scope inside the index): the 80 breakfasts elsewhere that share
    "marmalade" are never read."""
    principal, _ = make_owner()
    for n in range(80):
        original(principal, f"Breakfast number {n} came with marmalade.", subject=f"breakfast {n}", **elsewhere(n))
    anchor = original(principal, "The cabin pantry keeps marmalade jars.", subject="cabin pantry",
                      scope="project:cabin", portable=False)
    neighbour = original(principal, "The cabin marmalade jars are homemade.", subject="cabin jars",
                         scope="project:cabin", portable=False)
    with owner_context(principal):
        before = _key_index_entries_read()
        found = grouping.lexical_neighbours([anchor.id], start_key=1, now=day_one)
        read = _key_index_entries_read() - before
    assert [row[0] for row in found[anchor.id]] == [neighbour.id]
    # The anchor's own scope (two originals) is read for each of its five keys, through at
    # most two indexes; the 80 elsewhere would be 88 (shared) and 410 (other projects) entries.
    assert read < 40, read
