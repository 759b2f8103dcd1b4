"""The review queue: at most RECON_REVIEW_QUEUE_MAX proposals wait for the owner at once. When
it is full dreaming keeps its place and records nothing; as the owner decides it proposes
more, resuming where it stopped, and nothing is lost or proposed twice."""
from __future__ import annotations

from datetime import timedelta

import pytest

from reconsolidation import bounds, driver
from memory.models import Memory
from reconsolidation.models import ReconsolidationEquivalenceBacklog, ReconsolidationOperation
from reconsolidation.selectors.review_queue import review_order, review_queue
from reconsolidation.services.operations import operation_reject
from reconsolidation.store import ReconsolidationStore
from review_ui.status import status
from tests.factories import T0, make_owner
from tests.reconsolidation.helpers import original
from veetbot.rls import owner_context

pytestmark = pytest.mark.usefixtures("enabled")
TOPICS = ("tea", "gym", "rent", "bike", "piano", "garden")


@pytest.fixture
def bound(monkeypatch):
    monkeypatch.setattr(bounds, "RECON_REVIEW_QUEUE_MAX", 3)
    return 3


@pytest.fixture
def copies(db):
    """Six claims each said twice, in two conversations: six exact-copy merges to propose."""
    owner = make_owner()[0]
    for n, topic in enumerate(TOPICS):
        for _copy in range(2):  # the same claim at the same instant: an exact copy
            original(owner, f"The owner keeps the {topic} schedule on Mondays.", subject=topic,
                     at=T0 + timedelta(minutes=10 * n))
    return owner


def operations(owner):
    with owner_context(owner):
        return list(ReconsolidationOperation.objects.order_by("created_at", "id"))


def backlog(owner) -> list[str]:
    """The exact-copy sets carried to later slices, in the order they will be planned."""
    with owner_context(owner):
        return list(ReconsolidationEquivalenceBacklog.objects.order_by("queued_at", "key_digest")
                    .values_list("key_digest", flat=True))


def dream(owner, now):
    return driver.run_until_idle(owner, lease_owner="queue", store=ReconsolidationStore(clock=lambda: now), now=now,
                                 monotonic=lambda: 0.0)


def test_the_queue_bound_holds_and_the_next_pass_resumes_where_it_stopped_as_the_owner_decides(copies, bound):
    owner, day = copies, T0 + timedelta(days=1)
    runs, stopped = dream(owner, day)
    assert stopped == "review_queue_full" and review_queue(principal=owner).waiting == bound
    first = [op.id for op in operations(owner)]
    assert len(first) == bound
    carried = backlog(owner)
    # Still full: a later pass records nothing and keeps its place.
    assert dream(owner, day + timedelta(hours=1)) == ([], "review_queue_full")
    assert [op.id for op in operations(owner)] == first and backlog(owner) == carried
    assert status(owner, now=day).queue_sentence == (
        "3 proposals wait for your review: that is as many as dreaming lets wait at once, so it proposes "
        "nothing new until you approve or reject some. It keeps its place and goes on from there.")

    seen = set(first)
    while len(seen) < len(TOPICS):
        (oldest, *_rest) = [op for op in operations(owner) if op.state == "proposed"]
        operation_reject(principal=owner, operation_id=oldest.id, expected_revision=oldest.revision,
                         idempotency_key=f"reject-{oldest.id}", now=day + timedelta(hours=2))
        dream(owner, day + timedelta(hours=2))
        assert review_queue(principal=owner).waiting <= bound
        seen |= {op.id for op in operations(owner)}
    with owner_context(owner):
        merged_topics = [Memory.objects.get(id=op.input_ids[0]).subject for op in operations(owner)]
    assert sorted(merged_topics) == sorted(TOPICS)  # each set proposed once: nothing lost, nothing twice
    (oldest, *_rest) = [op for op in operations(owner) if op.state == "proposed"]
    operation_reject(principal=owner, operation_id=oldest.id, expected_revision=oldest.revision,
                     idempotency_key=f"reject-{oldest.id}", now=day + timedelta(hours=3))
    dream(owner, day + timedelta(hours=3))  # every set is proposed: nothing new comes
    assert review_queue(principal=owner).waiting == bound - 1
    assert status(owner, now=day).queue_sentence == "2 proposals wait for your review, most important first."


def test_the_waiting_proposals_are_ordered_conflicts_first_then_exact_copies(db, enabled):
    owner = make_owner()[0]
    day = T0 + timedelta(days=1)
    original(owner, "The owner keeps the tea schedule on Mondays.", subject="tea", at=T0)
    original(owner, "The owner keeps the tea schedule on Mondays.", subject="tea", at=T0)
    original(owner, "The owner has 2 bikes.", subject="bikes", at=T0 + timedelta(minutes=2))
    original(owner, "The owner has 3 bikes.", subject="bikes", at=T0 + timedelta(minutes=3))
    dream(owner, day)
    kinds = [op.kind for op in review_order(principal=owner, limit=10)]
    assert kinds[0] == "flag_conflict" and "merge_equivalent" in kinds[1:]
