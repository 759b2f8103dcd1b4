"""Bulk approval of exact copies: every pending merge recorded for the local equivalence key
whose members still share it is approved through the ordinary revision-checked, idempotent
approval; everything else is answered per item and left exactly as it was."""
from __future__ import annotations

from uuid import uuid4

import pytest

from memory import services
from memory.domain import MemoryChanges
from memory.services.receipts import KeyReused
from reconsolidation.errors import Invalid
from reconsolidation.models import ReconsolidationOperation
from reconsolidation.selectors.exact_copies import exact_copies_pending
from reconsolidation.services.exact_copies import operations_approve_exact
from tests.factories import make_owner
from tests.reconsolidation.helpers import original
from tests.reconsolidation.work_builders import active_members, by_kind, operation_row, process
from veetbot.rls import owner_context


@pytest.fixture
def owner(db):
    return make_owner()[0]


def exact_merge(store, owner, now, text="The owner prefers Celsius.", subject="units"):
    pair = [original(owner, text, subject=subject) for _ in range(2)]
    (op,) = by_kind(process(store, owner, pair, now), "merge_equivalent")
    return op, pair


def paraphrase_merge(store, owner, now):
    pair = [original(owner, "The owner is allergic to cats.", subject="allergies"),
            original(owner, "The owner has a cat allergy.", subject="allergies")]
    (op,) = by_kind(process(store, owner, pair, now), "merge_equivalent")
    assert op.reason != "equivalence_key"
    return op


def states(owner):
    with owner_context(owner):
        return dict(ReconsolidationOperation.objects.values_list("id", "state"))


def outcomes(answers):
    return {a.operation_id: a.outcome for a in answers}


def test_the_selector_lists_only_pending_exact_copies_with_their_revisions(owner, enabled, store, day_one):
    first, _ = exact_merge(store, owner, day_one)
    second, _ = exact_merge(store, owner, day_one, "The owner runs on Tuesdays.", "running")
    paraphrase_merge(store, owner, day_one)
    listed = exact_copies_pending(principal=owner, now=day_one)
    assert {(v.id, v.revision) for v in listed} == {(first.id, first.revision), (second.id, second.revision)}


def test_every_listed_exact_copy_is_approved_and_nothing_else(owner, enabled, store, day_one):
    first, (a, b) = exact_merge(store, owner, day_one)
    second, _ = exact_merge(store, owner, day_one, "The owner runs on Tuesdays.", "running")
    paraphrase = paraphrase_merge(store, owner, day_one)
    expected = {first.id: first.revision, second.id: second.revision, paraphrase.id: paraphrase.revision}
    answers = operations_approve_exact(principal=owner, expected=expected, idempotency_key="bulk-1", now=day_one)
    assert outcomes(answers) == {first.id: "approved", second.id: "approved", paraphrase.id: "not_exact_copy"}
    assert [a.revision for a in answers[:2]] == [first.revision + 1, second.revision + 1]
    now = states(owner)
    assert (now[first.id], now[second.id], now[paraphrase.id]) == ("committed", "committed", "proposed")
    assert {(op, m) for op, _c, m in active_members(owner)} >= {(first.id, a.id), (first.id, b.id)}
    assert exact_copies_pending(principal=owner, now=day_one) == ()


def test_a_resubmission_replays_and_the_same_key_with_another_body_conflicts(owner, enabled, store, day_one):
    op, _ = exact_merge(store, owner, day_one)
    expected = {op.id: op.revision}
    operations_approve_exact(principal=owner, expected=expected, idempotency_key="bulk-1", now=day_one)
    again = operations_approve_exact(principal=owner, expected=expected, idempotency_key="bulk-1", now=day_one)
    assert [(a.outcome, a.revision) for a in again] == [("replayed", op.revision + 1)]
    with pytest.raises(KeyReused):
        operations_approve_exact(principal=owner, expected={op.id: op.revision + 1}, idempotency_key="bulk-1",
                                 now=day_one)


def test_a_stale_revision_unknown_or_foreign_id_is_answered_per_item(owner, enabled, store, day_one):
    op, _ = exact_merge(store, owner, day_one)
    other = make_owner("Owner B")[0]
    foreign, _ = exact_merge(store, other, day_one)
    unknown = uuid4()
    fine, _ = exact_merge(store, owner, day_one, "The owner runs on Tuesdays.", "running")
    answers = operations_approve_exact(
        principal=owner, expected={op.id: op.revision + 1, foreign.id: foreign.revision, unknown: 1,
                                   fine.id: fine.revision}, idempotency_key="bulk-2", now=day_one)
    assert outcomes(answers) == {op.id: "stale_revision", foreign.id: "not_found", unknown: "not_found",
                                 fine.id: "approved"}
    assert states(owner)[op.id] == "proposed" and states(other)[foreign.id] == "proposed"


def test_a_proposal_whose_member_changed_is_not_approved(owner, enabled, store, day_one):
    op, (a, _b) = exact_merge(store, owner, day_one)
    services.memory_revise(principal=owner, memory_id=a.id, changes=MemoryChanges(confidence=0.5), now=day_one)
    (answer,) = operations_approve_exact(principal=owner, expected={op.id: op.revision}, idempotency_key="k",
                                         now=day_one)
    assert answer.outcome in ("not_pending", "sources_changed") and not answer.approved
    assert operation_row(owner, op.id).state != "committed"


def test_a_recorded_reason_alone_is_not_trusted(owner, enabled, store, day_one):
    paraphrase = paraphrase_merge(store, owner, day_one)
    with owner_context(owner):  # as if it had been recorded under the exact-copy reason
        ReconsolidationOperation.objects.filter(id=paraphrase.id).update(reason="equivalence_key")
    assert exact_copies_pending(principal=owner, now=day_one) == ()
    (answer,) = operations_approve_exact(principal=owner, expected={paraphrase.id: paraphrase.revision},
                                         idempotency_key="k", now=day_one)
    assert answer.outcome == "not_exact_copy" and operation_row(owner, paraphrase.id).state == "proposed"


@pytest.mark.parametrize("expected, key", [({}, "k"), ({uuid4(): 0}, "k"), ({uuid4(): 1}, " "),
                                           ({uuid4(): 1}, "k" * 129)])
def test_an_empty_request_a_bad_revision_or_key_is_invalid(owner, expected, key):
    with pytest.raises(Invalid):
        operations_approve_exact(principal=owner, expected=expected, idempotency_key=key)


def test_more_than_a_page_of_operations_is_invalid(owner):
    with pytest.raises(Invalid):
        operations_approve_exact(principal=owner, expected={uuid4(): 1 for _ in range(101)}, idempotency_key="k")
