"""Undo of a committed merge: revision-checked, idempotent, durable; it ends suppression,
leaves originals as they are, and its hash-only blocks stop the same merge recurring
across retries, renamed subjects, copies of the evidence, other models and policies."""
from __future__ import annotations

from datetime import timedelta
from types import SimpleNamespace
from uuid import UUID

import pytest

from memory import services
from memory.domain import MemoryChanges
from memory.models import EventPart, Memory
from memory.services.receipts import KeyReused
from reconsolidation import bounds
from reconsolidation.domain import Proposal
from reconsolidation.errors import Conflict, NotFound
from reconsolidation.models import ReconsolidationAudit, ReconsolidationBlock
from tests.factories import draft, make_owner
from tests.reconsolidation.helpers import digest, original, refs
from tests.reconsolidation.work_builders import (
    active_members, approve, by_kind, claimed_group, merged, operation_row, process,
)
from reconsolidation.services.operations import operation_undo
from veetbot.rls import owner_context

LATER = timedelta(days=1)


@pytest.fixture
def owner(db):
    return make_owner()[0]


def celsius(owner, n=2, **overrides):
    return [original(owner, "The owner prefers Celsius.", subject="units", **overrides) for _ in range(n)]


def undo(store, owner, op, now, key="undo-1"):
    return operation_undo(principal=owner, operation_id=op.id, expected_revision=op.revision, idempotency_key=key, now=now)


def merges_of(store, owner, memories, now):
    return by_kind(process(store, owner, memories, now), "merge_equivalent")


def test_undo_ends_suppression_and_installs_hash_only_blocks(owner, enabled, store, day_one):
    a, b, c = celsius(owner, 3)
    op = merged(store, owner, [a, b, c], day_one)
    undone = undo(store, owner, op, day_one)
    assert (undone.state, undone.revision, undone.undone_at) == ("undone", op.revision + 1, day_one)
    assert active_members(owner) == set()
    with owner_context(owner):
        blocks = list(ReconsolidationBlock.objects.values_list("signature", "reason"))
    assert len(blocks) == 1 + 3 + 3 and {reason for _, reason in blocks} == {"owner_undo"}  # exact, pairs, claim/event
    assert "Celsius" not in repr(blocks)


def test_undo_is_idempotent_and_survives_the_loss_of_its_sources(owner, enabled, store, day_one):
    a, b = celsius(owner)
    op = merged(store, owner, [a, b], day_one)
    first = undo(store, owner, op, day_one, key="u")
    services.memory_erase(principal=owner, memory_id=a.id, now=day_one)
    assert undo(store, owner, op, day_one, key="u") == first  # the receipt, not a second undo
    with pytest.raises(KeyReused):
        operation_undo(principal=owner, operation_id=op.id, expected_revision=op.revision + 1, idempotency_key="u", now=day_one)
    with pytest.raises(Conflict, match="not_committed"):
        undo(store, owner, op, day_one, key="other")


def unknown_id():
    return UUID(digest("unknown")[:32])


def test_undo_is_revision_checked_and_only_for_a_committed_merge(owner, enabled, store, day_one):
    a, b = celsius(owner)
    c = original(owner, "The owner reads temperatures in the morning.", subject="units")
    ops = process(store, owner, [a, b, c], day_one)
    (merge,) = by_kind(ops, "merge_equivalent")
    (summary,) = by_kind(ops, "summarize_related")
    with pytest.raises(Conflict, match="not_committed"):
        undo(store, owner, merge, day_one)
    committed = approve(store, owner, summary, day_one)
    with pytest.raises(Conflict, match="not_undoable"):
        undo(store, owner, committed, day_one)
    merge = approve(store, owner, merge, day_one)
    with pytest.raises(Conflict, match="stale_revision"):
        operation_undo(principal=owner, operation_id=merge.id, expected_revision=merge.revision - 1, idempotency_key="x", now=day_one)
    with pytest.raises(NotFound):
        operation_undo(principal=owner, operation_id=unknown_id(), expected_revision=1, idempotency_key="y", now=day_one)
    assert operation_row(owner, merge.id).state == "committed"


def test_undo_counts_only_still_valid_originals_as_restored_and_revives_nothing(owner, enabled, store, day_one):
    a, b = celsius(owner)
    op = merged(store, owner, [a, b], day_one)
    services.memory_revise(principal=owner, memory_id=b.id, changes=MemoryChanges(confidence=0.3),
                           now=day_one)  # a correction invalidates the merge
    assert operation_row(owner, op.id).state == "invalidated"
    with pytest.raises(Conflict, match="not_committed"):
        undo(store, owner, op, day_one)
    d, e = (original(owner, "The owner prefers Fahrenheit.", subject="units", expires_at=day_one + timedelta(hours=1))
            for _ in range(2))
    op = merged(store, owner, [d, e], day_one)
    undo(store, owner, op, day_one + timedelta(hours=2))  # elapsed expiry: none of them is valid now
    with owner_context(owner):
        counts = ReconsolidationAudit.objects.get(event="operation_undone").counts
    assert counts["restored"] == 0 and counts["members_ended"] == 2


def test_the_same_merge_cannot_recur_on_retry_or_with_another_member(owner, enabled, store, day_one):
    a, b, c = celsius(owner, 3)
    undo(store, owner, merged(store, owner, [a, b], day_one), day_one)
    for memory in (a, b):  # new revisions: a new group and a new operation digest, same members
        services.memory_revise(principal=owner, memory_id=memory.id, changes=MemoryChanges(confidence=0.8),
                               now=day_one)
    with owner_context(owner):
        a, b = Memory.objects.get(id=a.id), Memory.objects.get(id=b.id)
    assert merges_of(store, owner, [a, b], day_one + LATER) == []
    assert merges_of(store, owner, [a, b, c], day_one + 2 * LATER) == []  # contains the undone pair
    assert len(merges_of(store, owner, [b, c], day_one + 3 * LATER)) == 1  # a new pair is not blocked


def test_a_renamed_subject_does_not_evade_the_block(owner, enabled, store, day_one):
    a, b = celsius(owner)
    undo(store, owner, merged(store, owner, [a, b], day_one), day_one)
    for memory in (a, b):
        services.memory_revise(principal=owner, memory_id=memory.id, changes=MemoryChanges(subject="temperature"),
                               now=day_one)
    with owner_context(owner):
        current = list(Memory.objects.filter(id__in=[a.id, b.id]))
    assert merges_of(store, owner, current, day_one + LATER) == []


def test_copied_evidence_under_a_new_belief_id_does_not_evade_the_block(owner, enabled, store, day_one):
    a, b = celsius(owner)
    undo(store, owner, merged(store, owner, [a, b], day_one), day_one)
    with owner_context(owner):
        event = SimpleNamespace(id=a.sources[0].event, parts=list(
            EventPart.objects.filter(event_id=a.sources[0].event).order_by("position")))
    copy = services.memory_create(principal=owner, draft=draft(event, statement="The owner prefers Celsius.",
                                                               subject="units"), now=day_one)
    assert merges_of(store, owner, [copy, b], day_one + LATER) == []


def test_another_model_or_policy_does_not_evade_the_block(owner, enabled, store, day_one, monkeypatch):
    a, b = celsius(owner)
    undo(store, owner, merged(store, owner, [a, b], day_one), day_one)
    monkeypatch.setattr(bounds, "POLICY", "reconsolidation@2")
    lease, group = claimed_group(store, owner, [a, b], day_one + LATER)
    proposal = Proposal(kind="merge_equivalent", inputs=tuple(refs(a, b)), policy="reconsolidation@2",
                        model_identity=digest("another model"))
    with pytest.raises(Conflict, match="blocked_by_owner"):
        store.commit(owner, group, expected_inputs=group.inputs, expected_fence=group.fence_generation,
                     proposal=proposal, now=day_one + LATER)


def test_undo_works_with_processing_switched_off(owner, enabled, store, day_one, settings):
    a, b = celsius(owner)
    op = merged(store, owner, [a, b], day_one)
    settings.AGENT_MEMORY_RECONSOLIDATION_ENABLED = False
    assert undo(store, owner, op, day_one).state == "undone"
