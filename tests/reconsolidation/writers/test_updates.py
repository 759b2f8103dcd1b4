"""Updates: a later statement that supersedes an earlier one about the same holder is proposed
as "the earlier belief ended"; approving it ends that belief through the memory's own control
(a revision of its expiry), which current recall honours and historical recall does not see;
undo gives the expiry back."""
from __future__ import annotations

from datetime import timedelta

import pytest

from memory import selectors
from memory.models import MemoryRevision
from recall import retriever
from recall.domain import RecallRequest
from reconsolidation.errors import Conflict
from reconsolidation.services.operations import operation_reject, operation_undo
from tests.factories import T0, make_owner
from tests.reconsolidation.helpers import original
from tests.reconsolidation.work_builders import approve, by_kind, operation_row, process
from veetbot.rls import owner_context

pytestmark = pytest.mark.usefixtures("enabled")
LATER = T0 + timedelta(days=10)


@pytest.fixture
def owner(db):
    return make_owner()[0]


@pytest.fixture
def moved(owner):
    """Theo lived in Rotterdam, then moved to Porto ten days later."""
    earlier = original(owner, "Theo lives in Rotterdam.", subject="Theo", at=T0)
    later = original(owner, "Theo moved to Porto.", subject="Theo", at=LATER)
    return earlier, later


def recalled(owner, *, now, as_of=None) -> set:
    result = retriever.recall(principal=owner, request=RecallRequest(
        query="Theo Rotterdam Porto", ceiling="restricted", channel="sparse", as_of=as_of), surface="eval", now=now)
    return {item.id for item in result.items}


def memory(owner, memory_id):
    with owner_context(owner):
        return selectors.memory_get(memory_id=memory_id, ceiling="restricted")


def test_a_later_move_is_proposed_as_the_earlier_belief_ended(owner, store, moved):
    earlier, later = moved
    day = LATER + timedelta(days=1)
    (update,) = by_kind(process(store, owner, [earlier, later], day), "end_superseded")
    assert update.state == "proposed" and update.reason == "move"
    assert operation_row(owner, update.id).clause_sources == [[str(earlier.id)], [str(later.id)]]
    assert memory(owner, earlier.id).expires_at is None  # nothing changes until the owner approves


def test_an_approved_update_changes_current_but_not_historical_recall_and_is_undoable(owner, store, moved):
    earlier, later = moved
    day = LATER + timedelta(days=1)
    (update,) = by_kind(process(store, owner, [earlier, later], day), "end_superseded")
    before = day - timedelta(hours=1)
    assert recalled(owner, now=day) == {earlier.id, later.id}
    assert recalled(owner, now=day, as_of=before) == {earlier.id, later.id}

    approved = approve(store, owner, update, day)
    assert approved.state == "committed"
    assert memory(owner, earlier.id).expires_at == LATER  # ended when the later statement began
    assert memory(owner, earlier.id).statement == "Theo lives in Rotterdam."  # never rewritten
    assert recalled(owner, now=day + timedelta(minutes=1)) == {later.id}
    assert recalled(owner, now=day + timedelta(minutes=1), as_of=before) == {earlier.id, later.id}

    undone = operation_undo(principal=owner, operation_id=update.id, expected_revision=approved.revision,
                            idempotency_key="undo-update", now=day + timedelta(minutes=2))
    assert undone.state == "undone"
    assert memory(owner, earlier.id).expires_at is None
    assert recalled(owner, now=day + timedelta(minutes=3)) == {earlier.id, later.id}
    with owner_context(owner):  # two new revisions, the statement untouched in each
        snapshots = list(MemoryRevision.objects.filter(memory_id=earlier.id).order_by("revision")
                         .values_list("snapshot", flat=True))
    assert [s["statement"] for s in snapshots] == ["Theo lives in Rotterdam."] * 3


def test_an_applied_update_stays_committed_when_its_belief_reaches_the_expiry_it_set(owner, store, moved):
    from memory.services import memories_expire_due

    earlier, later = moved
    day = LATER + timedelta(days=1)
    (update,) = by_kind(process(store, owner, [earlier, later], day), "end_superseded")
    approve(store, owner, update, day)
    memories_expire_due(principal=owner, now=day + timedelta(minutes=1))
    assert operation_row(owner, update.id).state == "committed"


def test_an_update_is_not_undone_over_a_later_correction(owner, store, moved):
    from memory.domain import MemoryChanges
    from memory.services import memory_revise

    earlier, later = moved
    day = LATER + timedelta(days=1)
    (update,) = by_kind(process(store, owner, [earlier, later], day), "end_superseded")
    approved = approve(store, owner, update, day)
    memory_revise(principal=owner, memory_id=earlier.id, changes=MemoryChanges(confidence=0.5), now=day)
    assert operation_row(owner, update.id).state == "invalidated"  # the owner changed the belief since
    with pytest.raises(Conflict, match="not_committed"):
        operation_undo(principal=owner, operation_id=update.id, expected_revision=approved.revision + 1,
                       idempotency_key="undo-late", now=day)


def test_a_rejected_update_changes_nothing_and_is_not_proposed_again(owner, store, moved):
    earlier, later = moved
    day = LATER + timedelta(days=1)
    (update,) = by_kind(process(store, owner, [earlier, later], day), "end_superseded")
    operation_reject(principal=owner, operation_id=update.id, expected_revision=update.revision,
                     idempotency_key="reject-update", now=day)
    assert memory(owner, earlier.id).expires_at is None
    jazz = original(owner, "Theo likes jazz.", subject="Theo", at=LATER)  # a new group over the same pair
    assert by_kind(process(store, owner, [later, earlier, jazz], day + timedelta(days=1)), "end_superseded") == []
