"""content_revision, store_position and the change journal under revise, reject, review and usage."""
from datetime import timedelta

import pytest

from memory import services
from memory.domain import MemoryChanges
from memory.errors import Conflict, Invalid, NotFound
from memory.models import ChangeJournal, Memory, MemoryRevision
from tests.factories import T0, make_memory, make_owner
from veetbot.rls import owner_context

LATER = T0 + timedelta(days=3)

CONTENT_CHANGES = {
    "statement": MemoryChanges(statement="The owner prefers Fahrenheit for weather."),
    "polarity": MemoryChanges(polarity="negated"),
    "subject": MemoryChanges(subject="temperature units"),
    "confidence": MemoryChanges(confidence=0.4),
    "evidence": MemoryChanges(evidence_at=LATER),
    "authority": MemoryChanges(authority="AFFIRMED"),
    "sensitivity": MemoryChanges(sensitivity="sensitive"),
    "scope": MemoryChanges(scope="project:garden"),
    "portability": MemoryChanges(portable=False),
    "validity": MemoryChanges(expires_at=LATER + timedelta(days=30)),
    "status": MemoryChanges(status="retracted"),
    "attribution": MemoryChanges(attribution="person:6f1c1a8e-1b7a-4f64-9d39-0e2f3f4b5a61"),
}


def journal_kinds(principal, memory_id):
    with owner_context(principal):
        return list(ChangeJournal.objects.filter(memory_id=memory_id).order_by("seq").values_list("kind", "content_revision"))


@pytest.mark.parametrize("field", sorted(CONTENT_CHANGES))
def test_each_content_field_change_increments_content_revision(db, field):
    principal, _ = make_owner()
    memory = make_memory(principal)
    revised = services.memory_revise(principal=principal, memory_id=memory.id, changes=CONTENT_CHANGES[field], now=LATER)
    assert revised.content_revision == 2
    assert revised.store_position > memory.store_position
    assert revised.creation_sequence == memory.creation_sequence
    with owner_context(principal):
        assert MemoryRevision.objects.filter(memory_id=memory.id).count() == 2
    assert journal_kinds(principal, memory.id)[-1][1] == 2


def test_revision_snapshot_holds_the_full_content(db):
    principal, _ = make_owner()
    memory = make_memory(principal)
    services.memory_revise(principal=principal, memory_id=memory.id, changes=CONTENT_CHANGES["statement"], now=LATER)
    with owner_context(principal):
        first, second = MemoryRevision.objects.filter(memory_id=memory.id).order_by("revision")
    assert first.snapshot["statement"] == "The owner prefers Celsius for weather."
    assert second.snapshot["statement"] == "The owner prefers Fahrenheit for weather."
    assert second.snapshot["confidence"] == 0.9 and second.snapshot["scope"] == "user"


def test_review_rejection_increments_content_revision_and_blocks_the_claim(db):
    principal, _ = make_owner()
    memory = make_memory(principal)
    rejected = services.memory_reject(principal=principal, memory_id=memory.id, now=LATER)
    assert rejected.content_revision == 2 and rejected.status == "retracted"
    assert journal_kinds(principal, memory.id) == [("created", 1), ("retracted", 2)]
    with pytest.raises(Conflict):
        make_memory(principal, "  the OWNER prefers celsius for weather ", subject="renamed subject")


def test_usage_update_does_not_increment_content_revision_or_move_position(db):
    principal, _ = make_owner()
    memory = make_memory(principal)
    assert services.memory_record_usage(principal=principal, memory_ids=[memory.id], now=LATER) == 1
    with owner_context(principal):
        row = Memory.objects.get(id=memory.id)
    assert row.content_revision == 1 and row.store_position == memory.store_position
    assert row.last_used_at == LATER
    assert journal_kinds(principal, memory.id) == [("created", 1)]


@pytest.mark.parametrize("action", ["mark_reviewed", "dismiss"])
def test_review_flags_are_not_content_changes(db, action):
    principal, _ = make_owner()
    memory = make_memory(principal)
    view = services.memory_review(principal=principal, memory_id=memory.id, action=action, now=LATER)
    assert view.content_revision == 1 and view.store_position == memory.store_position
    assert (view.reviewed_at if action == "mark_reviewed" else view.dismissed_at) == LATER


def test_not_here_stops_the_belief_crossing_scopes(db):
    principal, _ = make_owner()
    memory = make_memory(principal)
    view = services.memory_review(principal=principal, memory_id=memory.id, action="not_here", now=LATER)
    assert view.portable is False and view.content_revision == 2


def test_a_no_op_revision_writes_nothing(db):
    principal, _ = make_owner()
    memory = make_memory(principal)
    view = services.memory_revise(principal=principal, memory_id=memory.id, changes=MemoryChanges(confidence=0.9), now=LATER)
    assert view.content_revision == 1
    assert journal_kinds(principal, memory.id) == [("created", 1)]


def test_stale_expected_revision_is_a_conflict(db):
    principal, _ = make_owner()
    memory = make_memory(principal)
    services.memory_revise(principal=principal, memory_id=memory.id, changes=MemoryChanges(confidence=0.5), now=LATER)
    with pytest.raises(Conflict):
        services.memory_revise(principal=principal, memory_id=memory.id, changes=MemoryChanges(confidence=0.6), expected_revision=1)


def test_a_revision_that_would_invalidate_validity_is_refused_and_writes_nothing(db):
    principal, _ = make_owner()
    memory = make_memory(principal)
    with pytest.raises(Invalid):
        services.memory_revise(principal=principal, memory_id=memory.id, changes=MemoryChanges(expires_at=T0 - timedelta(days=1)))
    assert journal_kinds(principal, memory.id) == [("created", 1)]


def test_another_owner_cannot_revise(db):
    alice, _ = make_owner()
    bob, _ = make_owner()
    memory = make_memory(alice)
    with pytest.raises(NotFound):
        services.memory_revise(principal=bob, memory_id=memory.id, changes=MemoryChanges(confidence=0.1))


def test_journal_seq_is_per_owner_and_monotonic(db):
    alice, _ = make_owner()
    bob, _ = make_owner()
    for n in range(3):
        make_memory(alice, f"The owner owns {n + 2} bikes.")
    make_memory(bob)
    with owner_context(alice):
        assert list(ChangeJournal.objects.order_by("seq").values_list("seq", flat=True)) == [1, 2, 3]
    with owner_context(bob):
        assert list(ChangeJournal.objects.values_list("seq", flat=True)) == [1]


def test_a_claim_another_owner_rejected_is_still_created_for_this_one(db):
    rejecting, _ = make_owner()
    services.memory_reject(principal=rejecting, memory_id=make_memory(rejecting).id, now=LATER)
    other, _ = make_owner()
    assert make_memory(other).status == "active"
    with pytest.raises(Conflict):
        make_memory(rejecting)
