"""The governed derived service against recall: "not here" restricts a summary to its own
scope (the projection untouched), "not true" and delete withhold it from recall, and the
controls are idempotent per key."""
from __future__ import annotations

from datetime import timedelta

import pytest

from memory.services.receipts import KeyReused
from reconsolidation.errors import NotFound
from reconsolidation.models import DerivedMemory
from tests.factories import T0
from tests.recall.helpers import bank  # noqa: F401 (the bank fixture)
from tests.reconsolidation.recall_builders import summary
from reconsolidation.selectors import derived
from reconsolidation.selectors.derived import derived_browse, derived_get
from reconsolidation.services.derived import derived_delete, derived_review
from veetbot.rls import owner_context

QUERY = "passport renewal"
BUILT = T0 + timedelta(days=2)


@pytest.fixture
def on(enabled):
    """Processing switched on (the suite's ``enabled``), named for what these tests compare."""
    return enabled


@pytest.fixture
def built(bank, on):
    anchor = bank.add("The passport renewal appointment is on Friday.", subject="passport renewal")
    p = bank.add("The embassy is closed on Mondays.", subject="embassy")
    q = bank.add("The embassy asks for printed photos.", subject="embassy")
    return summary(bank.principal, [[p], [q]], omitted=[anchor], now=BUILT)


def recalled(bank, scope="user"):
    return [item.id for item in bank.recall(QUERY, max_items=5, scope=scope).items]


def act(bank, op, action, key):
    return derived_review(principal=bank.principal, derived_id=op.id, action=action, ceiling="restricted", idempotency_key=key,
                                  request_sha256=key.ljust(64, "0")[:64])


def test_not_here_keeps_the_summary_in_its_own_scope_only(bank, built):
    assert built.id in recalled(bank, scope="project:trip")  # portable user scope crosses before
    view = act(bank, built, "not_here", "h")
    assert view.restricted and view.content is not None
    assert built.id not in recalled(bank, scope="project:trip")
    assert built.id in recalled(bank, scope="user")
    with owner_context(bank.principal):
        row = DerivedMemory.objects.get(id=built.id)
    assert (row.scope, row.portable, len(row.clauses)) == ("user", True, 2)


@pytest.mark.parametrize("action", ["not_true", "delete"])
def test_not_true_and_delete_withhold_the_summary_from_recall_and_move_the_erasure_fence(bank, built, action):
    from memory.services.owner_state import erasure_generation

    assert built.id in recalled(bank)
    with owner_context(bank.principal):
        fence = erasure_generation(bank.principal)
    if action == "delete":
        derived_delete(principal=bank.principal, derived_id=built.id, ceiling="restricted", idempotency_key="x",
                               request_sha256="1" * 64)
        with pytest.raises(NotFound):
            derived_get(principal=bank.principal, derived_id=built.id, ceiling="restricted")
    else:
        view = act(bank, built, "not_true", "x")
        assert view.status == "retired" and view.content is None and view.sources == ()
    assert built.id not in recalled(bank)
    with owner_context(bank.principal):
        assert erasure_generation(bank.principal) == fence + 1


def test_the_same_key_with_another_request_is_refused(bank, built):
    act(bank, built, "dismiss", "k")
    assert act(bank, built, "dismiss", "k").review_flag is False  # a replay
    with pytest.raises(KeyReused):
        derived_review(principal=bank.principal, derived_id=built.id, action="not_here", ceiling="restricted",
                               idempotency_key="k", request_sha256="f" * 64)


def test_browse_skips_unavailable_rows_across_batches_without_losing_the_page(db, on, monkeypatch):
    from memory.models import Memory
    from reconsolidation.store import ReconsolidationStore
    from tests.factories import make_owner
    from tests.reconsolidation.helpers import original
    from tests.reconsolidation.work_builders import approve, process

    principal, _ = make_owner()
    store, day = ReconsolidationStore(), T0 + timedelta(days=1)

    def approved_summary(topic: str):
        pair = [original(principal, f"The owner likes {topic}.", subject=topic),
                original(principal, f"The owner buys {topic} on Fridays.", subject=topic)]
        (op,) = process(store, principal, pair, day)
        return approve(store, principal, op, day), pair

    valid, _ = approved_summary("tea")  # the lowest store position: read after the others
    hidden = [approved_summary(topic) for topic in ("jam", "rye")]
    with owner_context(principal):  # their support rises above the ceiling behind the projection's back
        Memory.objects.filter(id__in=[m.id for _, pair in hidden for m in pair]).update(sensitivity="restricted")
    monkeypatch.setattr(derived, "BROWSE_BATCH", 1)
    found = derived_browse(principal=principal, ceiling="internal", limit=1, now=day)
    assert [view.id for _, view in found] == [valid.id]
    everything = derived_browse(principal=principal, ceiling="restricted", limit=5, now=day)
    positions = [position for position, _ in everything]
    assert len(positions) == 3 and positions == sorted(positions, reverse=True)


@pytest.mark.parametrize("action", ["dismiss", "not_here", "not_true", "delete"])
def test_an_action_on_a_revision_that_has_moved_conflicts_under_the_lock_and_changes_nothing(bank, built, action):
    from reconsolidation.errors import Conflict

    act(bank, built, "not_here", "first")  # a recall-visible change: revision 1 -> 2
    with owner_context(bank.principal):
        before = DerivedMemory.objects.get(id=built.id)
    assert before.revision == 2
    with pytest.raises(Conflict):
        if action == "delete":
            derived_delete(principal=bank.principal, derived_id=built.id, ceiling="restricted", idempotency_key="stale",
                                   request_sha256="2" * 64, expected_revision=1)
        else:
            derived_review(principal=bank.principal, derived_id=built.id, action=action, ceiling="restricted",
                                   idempotency_key="stale", request_sha256="2" * 64, expected_revision=1)
    with owner_context(bank.principal):
        after = DerivedMemory.objects.get(id=built.id)
    assert (after.revision, after.status, after.dismissed_at, after.erased_at) == (
        before.revision, before.status, before.dismissed_at, before.erased_at)
    # the current revision goes through, and the stale key was never spent
    derived_review(principal=bank.principal, derived_id=built.id, action="dismiss", ceiling="restricted",
                           idempotency_key="stale", request_sha256="3" * 64, expected_revision=2)
