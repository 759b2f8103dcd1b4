"""Reverse invalidation through the memory hook: any correction, retraction, expiry,
attribution change or erasure of a source invalidates every dependent operation and purges
its derived copies in the source change's own transaction — with processing switched off
too — and erasure leaves no deleted prose in any table."""
from __future__ import annotations

from datetime import timedelta

import pytest

from memory import services
from memory.domain import MemoryChanges
from memory.models import Event
from reconsolidation import bounds
from reconsolidation.models import ReconsolidationGroup
from reconsolidation.providers.rules import summaries
from tests.factories import make_owner
from tests.memory.test_services_erasure import tables_containing
from tests.reconsolidation.helpers import original
from tests.reconsolidation.work_builders import (
    active_members, approve, by_kind, derived_rows, merged, operation_row, process,
)
from veetbot.rls import owner_context

CHANGES = {
    "statement_corrected": lambda owner, m, now: services.memory_revise(
        principal=owner, memory_id=m.id, changes=MemoryChanges(statement="The owner prefers Kelvin."), now=now),
    "attribution_changed": lambda owner, m, now: services.memory_revise(
        principal=owner, memory_id=m.id, changes=MemoryChanges(attribution="person:00000000-0000-4000-8000-00000000000a"), now=now),
    "retracted": lambda owner, m, now: services.memory_reject(principal=owner, memory_id=m.id, now=now),
    "expired": lambda owner, m, now: services.memories_expire_due(principal=owner, now=now + timedelta(days=400)),
    "erased": lambda owner, m, now: services.memory_erase(principal=owner, memory_id=m.id, now=now),
    "session_erased": lambda owner, m, now: services.session_erase(principal=owner, session_id=session_of(owner, m),
                                                                   now=now),
}


def session_of(owner, memory):
    with owner_context(owner):
        return Event.objects.get(id=memory.sources[0].event).session_id


@pytest.fixture
def owner(db):
    return make_owner()[0]


def summary_over(store, owner, memories, now):
    (op,) = by_kind(process(store, owner, memories, now), "summarize_related")
    return approve(store, owner, op, now)


@pytest.mark.parametrize("change", sorted(CHANGES))
def test_every_source_change_invalidates_a_committed_summary_and_purges_its_projection(owner, enabled, store, day_one,
                                                                                       change, settings):
    a = original(owner, "The owner prefers Celsius.", subject="units", expires_at=day_one + timedelta(days=300))
    b = original(owner, "The owner reads temperatures in the morning.", subject="units")
    op = summary_over(store, owner, [a, b], day_one)
    settings.AGENT_MEMORY_RECONSOLIDATION_ENABLED = False  # invalidation never depends on the switch
    CHANGES[change](owner, a, day_one)
    row = operation_row(owner, op.id)
    assert (row.state, row.revision) == ("invalidated", op.revision + 1)
    (derived,) = derived_rows(owner)
    assert derived.status == ("erased" if change.endswith("erased") else "invalidated")
    assert (derived.clauses, derived.subject) == ([], "")


@pytest.mark.parametrize("change", sorted(CHANGES))
def test_every_source_change_ends_an_active_merge_membership(owner, enabled, store, day_one, change):
    a, b = (original(owner, "The owner prefers Celsius.", subject="units", expires_at=day_one + timedelta(days=300))
            for _ in range(2))
    op = merged(store, owner, [a, b], day_one)
    CHANGES[change](owner, b, day_one)
    assert operation_row(owner, op.id).state == "invalidated"
    assert active_members(owner) == set()


def test_a_source_change_stales_pending_proposals_and_groups(owner, enabled, store, day_one):
    a, b = (original(owner, "The owner prefers Celsius.", subject="units") for _ in range(2))
    (op,) = process(store, owner, [a, b], day_one)
    services.memory_revise(principal=owner, memory_id=a.id, changes=MemoryChanges(confidence=0.2), now=day_one)
    assert operation_row(owner, op.id).state == "stale"


def test_an_omitted_summary_input_is_still_a_dependency(owner, enabled, store, day_one):
    long = "x" * 400
    a = original(owner, f"The owner likes tea {long}.", subject="drinks")
    b = original(owner, f"The owner likes coffee {long}.", subject="drinks")
    c = original(owner, f"The owner likes juice {long}.", subject="drinks")  # cannot fit: omitted whole
    op = summary_over(store, owner, [a, b, c], day_one)
    (derived,) = derived_rows(owner)
    assert [clause["source_ids"] for clause in derived.clauses] == [[str(a.id)], [str(b.id)]]
    assert len(summaries.render([clause["text"] for clause in derived.clauses])) <= bounds.RECON_SUMMARY_MAX_CHARS
    assert {ref.memory_id for ref in op.inputs} == {a.id, b.id, c.id}
    services.memory_revise(principal=owner, memory_id=c.id, changes=MemoryChanges(confidence=0.3), now=day_one)
    assert operation_row(owner, op.id).state == "invalidated" and derived_rows(owner)[0].clauses == []


def test_a_usage_only_update_invalidates_nothing(owner, enabled, store, day_one):
    a, b = (original(owner, "The owner prefers Celsius.", subject="units") for _ in range(2))
    op = merged(store, owner, [a, b], day_one)
    services.memory_record_usage(principal=owner, memory_ids=[a.id], now=day_one)
    assert operation_row(owner, op.id).state == "committed" and len(active_members(owner)) == 2


def test_a_rolled_back_source_change_rolls_the_invalidation_back(owner, enabled, store, day_one):
    a, b = (original(owner, "The owner prefers Celsius.", subject="units") for _ in range(2))
    op = merged(store, owner, [a, b], day_one)
    with pytest.raises(Exception):
        services.memory_revise(principal=owner, memory_id=a.id, changes=MemoryChanges(confidence=0.2),
                               expected_revision=99, now=day_one)
    assert operation_row(owner, op.id).state == "committed"


def test_erasure_leaves_no_deleted_prose_in_any_table(live_db, store, settings):
    settings.AGENT_MEMORY_RECONSOLIDATION_ENABLED = True
    from tests.factories import T0

    now = T0 + timedelta(days=1)
    owner = make_owner()[0]
    secret = "The owner hides the spare key under the blue flowerpot."
    a = original(owner, secret, subject="spare key", message="key is somewhere")
    b = original(owner, "The owner keeps a second key at the office.", subject="spare key", message="office key")
    c = original(owner, secret, subject="spare key", message="key again somewhere")
    merge_op = merged(store, owner, [a, c], now)
    summary_op = summary_over(store, owner, [a, b, c], now + timedelta(days=1))
    assert "reconsolidation_derivedmemory.clauses" in tables_containing("blue flowerpot")
    services.memory_erase(principal=owner, memory_id=a.id, now=now)
    services.memory_erase(principal=owner, memory_id=c.id, now=now)
    assert tables_containing("blue flowerpot") == []
    assert [t for t in tables_containing("spare key") if t.startswith("reconsolidation")] == []  # subject purged
    assert {operation_row(owner, merge_op.id).state, operation_row(owner, summary_op.id).state} == {"invalidated"}
    with owner_context(owner):
        assert not ReconsolidationGroup.objects.filter(state="pending").exists()


def test_invalidating_a_whole_bank_of_ids_binds_one_array_not_one_parameter_each(owner, enabled, store, day_one):
    from uuid import uuid4

    a, b = (original(owner, "The owner prefers Celsius.", subject="units") for _ in range(2))
    op = merged(store, owner, [a, b], day_one)
    many = [uuid4() for _ in range(70_000)] + [a.id]  # past PostgreSQL's 65,535 bind parameters
    receipt = store.invalidate(owner, many, reason="erased", now=day_one)
    assert receipt.invalidated == (op.id,) and active_members(owner) == set()
