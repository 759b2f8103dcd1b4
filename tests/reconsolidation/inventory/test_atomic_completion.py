"""Atomic completion on the rules path: a group's accepted operations and its completion
commit in one transaction. A crash between the writes and the completion leaves neither,
so the retry records each operation once, pays for its own attempt only and reports the
outcome that happened (``completed``), never ``no_change/proposals_refused``."""
from __future__ import annotations

from datetime import timedelta

import pytest

from reconsolidation import bounds
from reconsolidation.models import ReconsolidationGroup, ReconsolidationOperation
from reconsolidation.work.process import process_group
from reconsolidation.writers import blocks
from tests.factories import make_owner
from tests.reconsolidation.helpers import original, spend_of
from tests.reconsolidation.work_builders import claimed_group
from veetbot.rls import owner_context

LEASE = timedelta(seconds=bounds.RECON_LEASE_SECONDS)


class Crash(Exception):
    """The worker dies: nothing after this point runs."""


@pytest.fixture
def owner(db):
    return make_owner()[0]


def crash_at_completion(store, monkeypatch):
    real = store.finish_group

    def finish_group(principal, group_lease, *, outcome, reason="", now=None):
        if outcome == "completed":
            raise Crash()
        return real(principal, group_lease, outcome=outcome, reason=reason, now=now)

    monkeypatch.setattr(store, "finish_group", finish_group)
    return real


def test_a_crash_between_the_writes_and_the_completion_leaves_neither(owner, enabled, store, day_one, monkeypatch):
    a = original(owner, "The owner prefers Celsius.", subject="units")
    b = original(owner, "The owner prefers Celsius.", subject="units")
    c = original(owner, "The owner reads temperatures in the morning.", subject="units")
    _, group = claimed_group(store, owner, [a, b, c], day_one)
    real = crash_at_completion(store, monkeypatch)
    with pytest.raises(Crash):
        process_group(store, owner, group, now=day_one)
    with owner_context(owner):
        assert not ReconsolidationOperation.objects.exists()  # the writes went with the completion
        assert ReconsolidationGroup.objects.get(id=group.group_id).state == "leased"

    # The lease expires; the next slice recovers the group (one failed attempt) and retries it.
    monkeypatch.setattr(store, "finish_group", real)
    later = day_one + LEASE + timedelta(seconds=1)
    lease = store.claim_due(owner, lease_owner="w2", now=later)
    retry = store.claim_group(owner, lease_token=lease.lease_token, now=later)
    assert retry.group_id == group.group_id
    ops = process_group(store, owner, retry, now=later)
    assert {op.kind for op in ops} == {"merge_equivalent", "summarize_related"}
    with owner_context(owner):
        row = ReconsolidationGroup.objects.get(id=group.group_id)
        recorded = list(ReconsolidationOperation.objects.values_list("id", flat=True))
    assert (row.state, row.reason, row.retry_count) == ("completed", "rules_abstain_hypothesis", 1)
    assert sorted(recorded, key=str) == sorted((op.id for op in ops), key=str)  # each once
    reservations, _ = spend_of(owner)
    # One reservation per attempt, each settled once at the rules price: the crash paid only its own.
    assert [(r.state, r.charged_usd) for r in reservations] == [("settled", bounds.RECON_RULES_CALL_USD)] * 2
    assert len({r.request_digest for r in reservations}) == 2


def test_a_refused_sibling_rolls_back_alone_inside_the_group_transaction(owner, enabled, store, day_one):
    a = original(owner, "The owner prefers Celsius.", subject="units")
    b = original(owner, "The owner prefers Celsius.", subject="units")
    c = original(owner, "The owner reads temperatures in the morning.", subject="units")
    with owner_context(owner):  # the owner undid this merge once: its pair is blocked
        blocks.install(owner, blocks.member_pairs([a.id, b.id]), reason="owner_undo", operation_id=None, now=day_one)
    _, group = claimed_group(store, owner, [a, b, c], day_one)
    ops = process_group(store, owner, group, now=day_one)
    assert [op.kind for op in ops] == ["summarize_related"]
    with owner_context(owner):
        assert ReconsolidationGroup.objects.get(id=group.group_id).state == "completed"
        assert list(ReconsolidationOperation.objects.values_list("kind", flat=True)) == ["summarize_related"]
