"""Fences that stale only what they touch: an erasure or a correction stales the queued
groups over its own sources and nothing else. Unrelated queued groups complete; a touched
group ends ``stale`` before any spend is reserved, and a commit over it is refused."""
from __future__ import annotations

import pytest

from memory import services
from memory.domain import MemoryChanges
from reconsolidation.domain import input_digest
from reconsolidation.errors import StaleInputs
from reconsolidation.work.process import process_group
from reconsolidation.models import ReconsolidationGroup
from reconsolidation.writers import fences
from tests.factories import make_owner
from tests.reconsolidation.helpers import original, proposal, refs, spend_of
from veetbot.rls import owner_context


@pytest.fixture
def owner(db):
    return make_owner()[0]


def queue(store, principal, lease, *memories, now):
    return store.queue_group(principal, lease_token=lease.lease_token, inputs=refs(*memories),
                             input_digest=input_digest(refs(*memories)), now=now)


def state_of(principal, group_id):
    with owner_context(principal):
        row = ReconsolidationGroup.objects.get(id=group_id)
        return row.state, row.reason


def two_groups(owner, store, now):
    """Two queued groups over disjoint equivalent pairs, and one unrelated original."""
    a = original(owner, "The owner prefers Celsius.", subject="units")
    b = original(owner, "The owner prefers Celsius.", subject="units")
    c = original(owner, "The owner walks to work.", subject="commute")
    d = original(owner, "The owner walks to work.", subject="commute")
    other = original(owner, "The owner keeps a cat.", subject="pets")
    lease = store.claim_due(owner, lease_owner="w", now=now)
    first = queue(store, owner, lease, a, b, now=now)
    second = queue(store, owner, lease, c, d, now=now)
    return lease, (a, b, c, d, other), (first, second)


@pytest.mark.parametrize("erase", ["memory", "session"])
def test_a_queued_group_completes_after_an_unrelated_erasure(owner, enabled, store, day_one, erase):
    lease, (a, b, c, d, other), (first, second) = two_groups(owner, store, day_one)
    if erase == "memory":
        services.memory_erase(principal=owner, memory_id=other.id, now=day_one)
    else:
        with owner_context(owner):
            from memory.models import Event
            session = Event.objects.get(id=other.sources[0].event).session_id
        services.session_erase(principal=owner, session_id=session, now=day_one)
    done = []
    while (claimed := store.claim_group(owner, lease_token=lease.lease_token, now=day_one)) is not None:
        done.extend(process_group(store, owner, claimed, now=day_one))
    assert state_of(owner, first.id)[0] == "completed" and state_of(owner, second.id)[0] == "completed"
    assert {frozenset(r.memory_id for r in op.inputs) for op in done if op.kind == "merge_equivalent"} == {
        frozenset({a.id, b.id}), frozenset({c.id, d.id})}


def test_an_erasure_stales_only_the_queued_group_over_its_source(owner, enabled, store, day_one):
    lease, (a, b, c, d, _), (first, second) = two_groups(owner, store, day_one)
    services.memory_erase(principal=owner, memory_id=a.id, now=day_one)
    assert state_of(owner, first.id) == ("stale", "source_changed")
    claimed = store.claim_group(owner, lease_token=lease.lease_token, now=day_one)
    assert claimed.group_id == second.id
    assert process_group(store, owner, claimed, now=day_one)
    assert state_of(owner, second.id)[0] == "completed"


def claimed_three(owner, store, now):
    """A claimed group over an equivalent pair and a related third original."""
    a = original(owner, "The owner prefers Celsius.", subject="units")
    b = original(owner, "The owner prefers Celsius.", subject="units")
    c = original(owner, "The owner reads temperatures in the morning.", subject="units")
    lease = store.claim_due(owner, lease_owner="w", now=now)
    queue(store, owner, lease, a, b, c, now=now)
    return (a, b, c), store.claim_group(owner, lease_token=lease.lease_token, now=now)


@pytest.mark.parametrize("change", ["erased", "corrected"])
def test_a_claimed_group_whose_source_is_touched_ends_stale_before_spend(owner, enabled, store, day_one, change):
    # Three sources, one touched: two would still be valid, so only the fence stops the spend.
    (a, b, c), claimed = claimed_three(owner, store, day_one)
    if change == "erased":
        services.memory_erase(principal=owner, memory_id=c.id, now=day_one)
    else:
        services.memory_revise(principal=owner, memory_id=c.id, changes=MemoryChanges(confidence=0.4), now=day_one)
    with owner_context(owner):
        assert fences.touched_since_read(owner, claimed.inputs) == "source_changed"
    assert process_group(store, owner, claimed, now=day_one) == ()
    assert state_of(owner, claimed.group_id) == ("stale", "sources_changed")
    assert spend_of(owner)[0] == []  # nothing reserved for a group that was already stale


def test_commit_refuses_a_group_whose_unproposed_source_was_touched(owner, enabled, store, day_one):
    (a, b, c), claimed = claimed_three(owner, store, day_one)
    services.memory_erase(principal=owner, memory_id=c.id, now=day_one)
    with pytest.raises(StaleInputs, match="source_changed"):
        store.commit(owner, claimed, expected_inputs=claimed.inputs, expected_fence=claimed.fence_generation,
                     proposal=proposal("merge_equivalent", refs(a, b)), now=day_one)


def test_commit_accepts_a_group_after_an_unrelated_erasure_moved_the_owner_fence(owner, enabled, store, day_one):
    lease, (a, b, c, d, other), (first, second) = two_groups(owner, store, day_one)
    claimed = store.claim_group(owner, lease_token=lease.lease_token, now=day_one)
    services.memory_erase(principal=owner, memory_id=other.id, now=day_one)
    op = store.commit(owner, claimed, expected_inputs=claimed.inputs, expected_fence=claimed.fence_generation,
                      proposal=proposal("flag_conflict", claimed.inputs), now=day_one)
    assert op.state == "proposed"
    with owner_context(owner):
        assert fences.touched_since_read(owner, claimed.inputs) is None


def test_a_claimed_group_completes_through_a_model_provider_after_an_unrelated_erasure(owner, enabled, store, day_one,
                                                                                      settings):
    from evals.reconsolidation.responder import HeuristicResponder

    settings.RECON_SCRIPTED_PROVIDER_ALLOWED = True
    (a, b, c), claimed = claimed_three(owner, store, day_one)
    other = original(owner, "The owner keeps a cat.", subject="pets")
    services.memory_erase(principal=owner, memory_id=other.id, now=day_one)
    responder = HeuristicResponder()
    ops = process_group(store, owner, claimed, now=day_one, provider=responder)
    assert responder.requests == 2 and {op.kind for op in ops} >= {"merge_equivalent", "summarize_related"}
    assert state_of(owner, claimed.group_id)[0] == "completed"
